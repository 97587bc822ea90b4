#include "backends/file_object_store.hpp"

#include <unistd.h>

#include <atomic>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace overhead::backends {

using ports::ObjectStoreError;

void FileObjectStore::put(const std::string& key, std::string_view bytes) {
  const auto path = checked(key);
  std::filesystem::create_directories(path.parent_path());
  // Write beside, then rename: a reader sees the old object or the new one, never half. Each
  // write has its own temporary name, so two writers of one key never share (and truncate) one.
  static std::atomic<unsigned long> writes{0};
  const auto tmp = path.string() + ".tmp." + std::to_string(getpid()) + "." + std::to_string(++writes);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) throw ObjectStoreError(url_ + ": cannot write " + tmp);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    const std::string why = ec.message();
    std::filesystem::remove(tmp, ec);
    throw ObjectStoreError(url_ + ": cannot rename " + tmp + ": " + why);
  }
}

std::string FileObjectStore::get(const std::string& key) {
  const auto path = checked(key);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ObjectStoreError(url_ + ": no object " + key);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string FileObjectStore::get_range(const std::string& key, std::uint64_t offset, std::size_t max_bytes) {
  const auto path = checked(key);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ObjectStoreError(url_ + ": no object " + key);
  in.seekg(static_cast<std::streamoff>(offset));
  if (!in) return {};
  std::string out(max_bytes, '\0');
  in.read(out.data(), static_cast<std::streamsize>(max_bytes));
  out.resize(static_cast<std::size_t>(in.gcount()));
  return out;
}

bool FileObjectStore::remove(const std::string& key) {
  std::error_code ec;
  return std::filesystem::remove(checked(key), ec);
}

std::filesystem::path FileObjectStore::checked(const std::string& key) const {
  if (key.empty() || key.front() == '/' || key.find("..") != std::string::npos)
    throw std::invalid_argument(url_ + ": bad object key \"" + key + "\"");
  return dir_ / key;
}

std::unique_ptr<ports::ObjectStore> open_file_object_store(const ports::BackendUrl& u) {
  u.check_params({"timeout_ms"});
  (void)u.call_timeout();  // validated; local file calls have no deadline of their own
  return std::make_unique<FileObjectStore>(u.redacted(), u.path.empty() ? "." : u.path);
}

}  // namespace overhead::backends
