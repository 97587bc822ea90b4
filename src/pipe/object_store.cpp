#include "pipe/object_store.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "pipe/backend_url.hpp"

namespace overhead::pipe {

namespace {

class FileObjectStore final : public ObjectStore {
 public:
  FileObjectStore(std::string url, std::filesystem::path dir) : url_(std::move(url)), dir_(std::move(dir)) {}

  void put(const std::string& key, std::string_view bytes) override {
    const auto path = checked(key);
    std::filesystem::create_directories(path.parent_path());
    // Write beside, then rename: a reader sees the old object or the new one, never half.
    const auto tmp = path.string() + ".tmp";
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      if (!out) throw std::runtime_error(url_ + ": cannot write " + tmp);
    }
    std::filesystem::rename(tmp, path);
  }

  std::string get(const std::string& key) override {
    const auto path = checked(key);
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error(url_ + ": no object " + key);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  const std::string& url() const override { return url_; }

 private:
  std::filesystem::path checked(const std::string& key) const {
    if (key.empty() || key.front() == '/' || key.find("..") != std::string::npos)
      throw std::invalid_argument(url_ + ": bad object key \"" + key + "\"");
    return dir_ / key;
  }

  std::string url_;
  std::filesystem::path dir_;
};

}  // namespace

std::unique_ptr<ObjectStore> open_object_store(const std::string& url) {
  const BackendUrl u = parse_backend_url(url);
  if (u.scheme == "file") return std::make_unique<FileObjectStore>(url, u.rest.empty() ? "." : u.rest);
  throw std::invalid_argument("object store URL \"" + url + "\": unknown scheme \"" + u.scheme + "\" (known: file:DIR)");
}

}  // namespace overhead::pipe
