// open_object_store: the object store schemes. A new object store adds its arm to kObjectSchemes.
#include <stdexcept>
#include <vector>

#include "backends/file_object_store.hpp"
#include "backends/open.hpp"
#include "backends/s3_object_store.hpp"
#include "ports/backend_url.hpp"

namespace overhead::backends {

namespace {

struct ObjectScheme {
  std::string_view scheme;
  std::string_view usage;  // shown when the scheme is unknown
  std::unique_ptr<ports::ObjectStore> (*open)(const ports::BackendUrl&);
};

constexpr ObjectScheme kObjectSchemes[] = {
    {"file", "file:DIR", &open_file_object_store},
    {"s3", "s3://BUCKET[/PREFIX][?region=R&endpoint=URL]", &open_s3_object_store},
};

}  // namespace

std::unique_ptr<ports::ObjectStore> open_object_store(std::string_view url) {
  const ports::BackendUrl u = ports::parse_backend_url(url);
  std::string known;
  for (const auto& s : kObjectSchemes) {
    if (s.scheme == u.scheme) return s.open(u);
    known += (known.empty() ? "" : ", ") + std::string(s.usage);
  }
  throw std::invalid_argument(u.describe("object store", "unknown scheme \"" + u.scheme + "\" (known: " + known + ")"));
}

std::vector<std::string_view> object_store_url_forms() {
  std::vector<std::string_view> forms;
  for (const auto& s : kObjectSchemes) forms.push_back(s.usage);
  return forms;
}

}  // namespace overhead::backends
