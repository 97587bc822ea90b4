#include "ports/store.hpp"

#include <algorithm>
#include <set>

namespace overhead::ports {

std::vector<Record> scan_in_key_order(Store& store, const std::string& experiment) {
  std::vector<Record> out;
  store.scan(experiment, [&](const Record& r) { out.push_back(r); });
  std::sort(out.begin(), out.end(), [](const Record& a, const Record& b) {
    return a.experiment_tokenizer != b.experiment_tokenizer ? a.experiment_tokenizer < b.experiment_tokenizer : a.id < b.id;
  });
  return out;
}

std::vector<std::string> experiments_in(Store& store) {
  std::set<std::string> names;
  store.scan("", [&](const Record& r) { names.insert(r.experiment); });
  return {names.begin(), names.end()};
}

}  // namespace overhead::ports
