// open_store: the record store schemes. A new store backend adds its arm to kStoreSchemes.
#include <stdexcept>
#include <vector>

#include "backends/dynamodb_store.hpp"
#include "backends/open.hpp"
#include "backends/postgres_store.hpp"
#include "backends/sqlite_store.hpp"
#include "pipe/backend_url.hpp"

namespace overhead::backends {

namespace {

struct StoreScheme {
  std::string_view scheme;
  std::string_view usage;  // shown when the scheme is unknown
  std::unique_ptr<pipe::Store> (*open)(const pipe::BackendUrl&);
};

constexpr StoreScheme kStoreSchemes[] = {
    {"sqlite", "sqlite:PATH", &open_sqlite_store},
    {"postgres", "postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?table=records&schema=S]", &open_postgres_store},
    {"postgresql", "postgresql://... (as postgres://)", &open_postgres_store},
    {"dynamodb", "dynamodb://TABLE[?region=R&endpoint=URL&create=1&tokenizers=A,B]", &open_dynamodb_store},
};

}  // namespace

std::unique_ptr<pipe::Store> open_store(std::string_view url) {
  const pipe::BackendUrl u = pipe::parse_backend_url(url);
  std::string known;
  for (const auto& s : kStoreSchemes) {
    if (s.scheme == u.scheme) return s.open(u);
    known += (known.empty() ? "" : ", ") + std::string(s.usage);
  }
  throw std::invalid_argument(u.describe("store", "unknown scheme \"" + u.scheme + "\" (known: " + known + ")"));
}

std::vector<std::string_view> store_url_forms() {
  std::vector<std::string_view> forms;
  for (const auto& s : kStoreSchemes) forms.push_back(s.usage);
  return forms;
}

}  // namespace overhead::backends
