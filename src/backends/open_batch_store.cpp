// open_batch_store: the Batch API's state in the record store's database (ports/batch_store.hpp),
// one arm per record store scheme that holds it, as open_key_store's. A new store backend that
// holds batches adds its arm to kBatchStoreSchemes.
#include <stdexcept>

#include "backends/dynamodb_batch_store.hpp"
#include "backends/open.hpp"
#include "backends/postgres_batch_store.hpp"
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
    {"postgres", &open_postgres_batch_store},
    {"postgresql", &open_postgres_batch_store},
    {"dynamodb", &open_dynamodb_batch_store},
};

}  // namespace

std::unique_ptr<ports::BatchStore> open_batch_store(std::string_view store_url) {
  const ports::BackendUrl u = ports::parse_backend_url(store_url);
  for (const auto& s : kBatchStoreSchemes) {
    if (s.scheme != u.scheme) continue;
    // The record store first, as open_key_store: it checks the URL's parameters as `serve --store`
    // does (the batch tables take the same ones) and makes the records table they sit beside.
    (void)open_store(store_url);
    return s.open(u);
  }
  std::string known;
  for (const auto& s : kBatchStoreSchemes) known += (known.empty() ? "" : ", ") + std::string(s.scheme) + ":";
  throw std::invalid_argument(u.describe("store", "keeps no batches (scheme \"" + u.scheme + "\"; batches are kept in " + known + " stores)"));
}

}  // namespace overhead::backends
