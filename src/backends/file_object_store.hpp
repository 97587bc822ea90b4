// The object store on a local folder (`file:DIR`): an object is the file DIR/KEY, written beside
// and renamed into place so a reader sees the old object or the new one, never half of one.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "ports/backend_url.hpp"
#include "ports/object_store.hpp"

namespace overhead::backends {

class FileObjectStore final : public ports::ObjectStore {
 public:
  FileObjectStore(std::string url, std::filesystem::path dir) : url_(std::move(url)), dir_(std::move(dir)) {}

  void put(const std::string& key, std::string_view bytes) override;
  std::string get(const std::string& key) override;
  std::string get_range(const std::string& key, std::uint64_t offset, std::size_t max_bytes) override;
  // Appends to a file beside the object, renamed into place at finish (removed if never finished).
  std::unique_ptr<ports::ObjectWriter> write(const std::string& key) override;
  bool remove(const std::string& key) override;
  const std::string& url() const override { return url_; }

 private:
  // DIR/KEY; throws std::invalid_argument for a key that is empty, absolute or climbs out.
  std::filesystem::path checked(const std::string& key) const;

  std::string url_;
  std::filesystem::path dir_;
};

// The `file:` arm of open_object_store.
std::unique_ptr<ports::ObjectStore> open_file_object_store(const ports::BackendUrl& url);

}  // namespace overhead::backends
