// open_store: the record store schemes. A new store backend adds its arm to kStoreSchemes.
#include <filesystem>
#include <stdexcept>
#include <vector>

#include "backends/dynamodb_store.hpp"
#include "backends/open.hpp"
#include "backends/postgres_store.hpp"
#include "backends/sqlite_store.hpp"
#include "ports/backend_url.hpp"
#include "ports/errors.hpp"

namespace overhead::backends {

namespace {

struct StoreScheme {
  std::string_view scheme;
  std::string_view usage;  // shown when the scheme is unknown
  std::unique_ptr<ports::Store> (*open)(const ports::BackendUrl&);
  bool local_file;  // the URL's path is a file on this host, made when missing
  // A reader's (analyze): opens without creating or altering anything. Every store has one.
  std::unique_ptr<ports::Store> (*open_read_only)(const ports::BackendUrl&) = nullptr;
};

constexpr StoreScheme kStoreSchemes[] = {
    {"sqlite", "sqlite:PATH", &open_sqlite_store, true, &open_sqlite_store_read_only},
    {"postgres", "postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?table=records&schema=S]", &open_postgres_store, false,
     &open_postgres_store_read_only},
    {"postgresql", "postgresql://... (as postgres://)", &open_postgres_store, false, &open_postgres_store_read_only},
    {"dynamodb", "dynamodb://TABLE[?region=R&endpoint=URL&create=1&tokenizers=A,B]", &open_dynamodb_store, false,
     &open_dynamodb_store_read_only},
};

}  // namespace

std::unique_ptr<ports::Store> open_store(std::string_view url, Access access) {
  const ports::BackendUrl u = ports::parse_backend_url(url);
  for (const auto& s : kStoreSchemes) {
    if (s.scheme != u.scheme) continue;
    if (access != Access::create && s.local_file && !std::filesystem::exists(u.path))
      throw ports::StoreError(u.describe("store", "no such file; give the store a run wrote (e.g. sqlite:out/records.db)"));
    if (access == Access::read_only) return s.open_read_only(u);
    return s.open(u);
  }
  std::string known;
  for (const auto& s : kStoreSchemes) known += (known.empty() ? "" : ", ") + std::string(s.usage);
  throw std::invalid_argument(u.describe("store", "unknown scheme \"" + u.scheme + "\" (known: " + known + ")"));
}

std::vector<std::string_view> store_url_forms() {
  std::vector<std::string_view> forms;
  for (const auto& s : kStoreSchemes) forms.push_back(s.usage);
  return forms;
}

}  // namespace overhead::backends
