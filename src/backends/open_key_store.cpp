// open_key_store: the key store schemes, one arm per record store scheme (a key store lives in
// its record store's database). A new store backend that holds keys adds its arm to kKeySchemes.
#include <filesystem>
#include <stdexcept>

#include "backends/dynamodb_key_store.hpp"
#include "backends/open.hpp"
#include "backends/postgres_key_store.hpp"
#include "backends/sqlite_key_store.hpp"
#include "ports/backend_url.hpp"
#include "ports/errors.hpp"

namespace overhead::backends {

namespace {

struct KeyScheme {
  std::string_view scheme;
  std::unique_ptr<ports::KeyStore> (*open)(const ports::BackendUrl&);
};

constexpr KeyScheme kKeySchemes[] = {
    {"sqlite", &open_sqlite_key_store},
    {"postgres", &open_postgres_key_store},
    {"postgresql", &open_postgres_key_store},
    {"dynamodb", &open_dynamodb_key_store},
};

}  // namespace

std::unique_ptr<ports::KeyStore> open_key_store(std::string_view url, Access access) {
  if (access == Access::read_only)
    throw std::invalid_argument("key store: Access::read_only is not supported (opening makes the keys table)");
  const ports::BackendUrl u = ports::parse_backend_url(url);
  for (const auto& s : kKeySchemes) {
    if (s.scheme != u.scheme) continue;
    // The record store first: it checks the URL's parameters as `serve --store` does, refuses a
    // missing file for `existing`, and makes (or brings up to date) the records table whose
    // key_name and cost_usd the key store sums.
    (void)open_store(url, access);
    return s.open(u);
  }
  std::string known;
  for (const auto& s : kKeySchemes) known += (known.empty() ? "" : ", ") + std::string(s.scheme) + ":";
  throw std::invalid_argument(u.describe("key store", "unknown scheme \"" + u.scheme + "\" (keys are kept by " + known + ")"));
}

}  // namespace overhead::backends
