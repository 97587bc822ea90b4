#include "cost/fits_select.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "cost/json_file.hpp"
#include "cost/profiles.hpp"

namespace overhead::cost {
namespace {

// "postgresql://..." and "postgres://..." are one backend; "sqlite:x.db" -> "sqlite".
std::string backend_of_source(const std::string& source) {
  const auto colon = source.find(':');
  if (colon == std::string::npos || colon == 0) return "";
  std::string scheme = source.substr(0, colon);
  std::transform(scheme.begin(), scheme.end(), scheme.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (scheme == "postgresql") scheme = "postgres";
  return scheme;
}

template <typename T>
void add_unique(std::vector<T>& v, const T& x) {
  if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
}

}  // namespace

FitsHolding fits_holding(const std::string& file) {
  const nlohmann::json j = read_json_file(file);
  if (!j.is_object() || !j.contains("fits") || !j["fits"].is_array()) throw CostError(file + ": missing array \"fits\"");
  FitsHolding h;
  h.file = file;
  h.source = j.value("source", "");
  h.backend = j.contains("backend") && j["backend"].is_string() ? j["backend"].get<std::string>() : backend_of_source(h.source);
  for (const auto& f : j["fits"]) {
    if (!f.is_object() || f.value("target", "") != "cycle" || f.value("model", "") != "a" || f.value("method", "") != "ols" ||
        !f.contains("coefficients"))
      continue;
    add_unique(h.cases, f.value("case", -1));
    const std::string tok = f.value("tokenizer", "");
    if (tok != "all") add_unique(h.tokenizers, tok);
  }
  std::sort(h.cases.begin(), h.cases.end());
  return h;
}

std::string describe(const FitsHolding& h) {
  std::string s = h.file + ": backend " + (h.backend.empty() ? "unknown" : h.backend);
  if (!h.source.empty()) s += " (" + h.source + ")";
  s += ", cases ";
  if (h.cases.empty()) s += "none";
  for (std::size_t i = 0; i < h.cases.size(); ++i) s += (i ? ", " : "") + std::to_string(h.cases[i]);
  if (!h.tokenizers.empty()) {
    s += ", tokenizers ";
    for (std::size_t i = 0; i < h.tokenizers.size(); ++i) s += (i ? ", " : "") + h.tokenizers[i];
  }
  return s;
}

std::string select_fits(const std::vector<std::string>& files, const std::string& backend, int case_number) {
  if (files.empty()) throw CostError("--backend needs --fits (one fits.json per backend)");
  if (backend.empty() && files.size() == 1) return files.front();
  std::vector<FitsHolding> held;
  for (const auto& f : files) held.push_back(fits_holding(f));
  std::string list;
  for (const auto& h : held) list += "\n  " + describe(h);
  if (backend.empty())
    throw CostError(std::to_string(files.size()) + " --fits files given: choose one with --backend NAME; they hold:" + list);
  std::vector<const FitsHolding*> match;
  for (const auto& h : held)
    if (h.backend == backend && std::find(h.cases.begin(), h.cases.end(), case_number) != h.cases.end()) match.push_back(&h);
  if (match.empty())
    throw CostError("no fits file holds backend " + backend + " with case " + std::to_string(case_number) +
                    "; the files hold:" + list);
  if (match.size() > 1)
    throw CostError("backend " + backend + " with case " + std::to_string(case_number) + " is in more than one file (" +
                    match[0]->file + ", " + match[1]->file + "); give one");
  return match.front()->file;
}

}  // namespace overhead::cost
