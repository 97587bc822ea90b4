// Object storage for whole files (case 1's CSV). The adapters live in src/backends/ (`file:DIR`
// writes DIR/KEY) and are opened by URL there; S3 fits the same interface (PUT/GET by key).
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace overhead::pipe {

class ObjectStore {
 public:
  virtual ~ObjectStore() = default;
  // Writes the whole object; readers never see a partial one. Throws std::runtime_error naming the URL.
  virtual void put(const std::string& key, std::string_view bytes) = 0;
  virtual std::string get(const std::string& key) = 0;
  virtual const std::string& url() const = 0;
};

}  // namespace overhead::pipe
