// open_batch_store: the Batch API's state in the record store's database (ports/batch_store.hpp).
// A new backend adds its arm to kBatchStoreSchemes.
#include <stdexcept>

#include "backends/open.hpp"
#include "backends/sqlite_batch_store.hpp"
#include "ports/backend_url.hpp"

namespace overhead::backends {
namespace {

struct BatchStoreScheme {
  std::string_view scheme;
  std::unique_ptr<ports::BatchStore> (*open)(const ports::BackendUrl&);
};

constexpr BatchStoreScheme kBatchStoreSchemes[] = {
    {"sqlite", &open_sqlite_batch_store},
};

}  // namespace

std::unique_ptr<ports::BatchStore> open_batch_store(std::string_view store_url) {
  const ports::BackendUrl u = ports::parse_backend_url(store_url);
  for (const auto& s : kBatchStoreSchemes)
    if (s.scheme == u.scheme) return s.open(u);
  std::string known;
  for (const auto& s : kBatchStoreSchemes) known += (known.empty() ? "" : ", ") + std::string(s.scheme) + ":";
  throw std::invalid_argument(u.describe("store", "keeps no batches (scheme \"" + u.scheme + "\"; batches are kept in " + known + " stores)"));
}

}  // namespace overhead::backends
