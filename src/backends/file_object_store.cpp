#include "backends/file_object_store.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace overhead::backends {

void FileObjectStore::put(const std::string& key, std::string_view bytes) {
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

std::string FileObjectStore::get(const std::string& key) {
  const auto path = checked(key);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(url_ + ": no object " + key);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::filesystem::path FileObjectStore::checked(const std::string& key) const {
  if (key.empty() || key.front() == '/' || key.find("..") != std::string::npos)
    throw std::invalid_argument(url_ + ": bad object key \"" + key + "\"");
  return dir_ / key;
}

std::unique_ptr<pipe::ObjectStore> open_file_object_store(const pipe::BackendUrl& u) {
  u.check_params({});
  return std::make_unique<FileObjectStore>(u.redacted(), u.path.empty() ? "." : u.path);
}

}  // namespace overhead::backends
