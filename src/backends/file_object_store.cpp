#include "backends/file_object_store.hpp"

#include <unistd.h>

#include <atomic>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace overhead::backends {

using ports::ObjectStoreError;

namespace {

// Written beside, then renamed: a reader sees the old object or the new one, never half. Each
// writer has its own temporary name, so two writers of one key never share (and truncate) one.
class FileObjectWriter final : public ports::ObjectWriter {
 public:
  FileObjectWriter(std::string url, std::filesystem::path path) : url_(std::move(url)), path_(std::move(path)) {
    std::filesystem::create_directories(path_.parent_path());
    static std::atomic<unsigned long> writes{0};
    tmp_ = path_.string() + ".tmp." + std::to_string(getpid()) + "." + std::to_string(++writes);
    out_.open(tmp_, std::ios::binary | std::ios::trunc);
    if (!out_) throw ObjectStoreError(url_ + ": cannot write " + tmp_);
  }
  ~FileObjectWriter() override {
    if (finished_) return;
    out_.close();
    std::error_code ec;
    std::filesystem::remove(tmp_, ec);
  }
  FileObjectWriter(const FileObjectWriter&) = delete;
  FileObjectWriter& operator=(const FileObjectWriter&) = delete;

  void append(std::string_view bytes) override {
    out_.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out_) throw ObjectStoreError(url_ + ": cannot write " + tmp_);
  }

  void finish() override {
    out_.close();
    if (!out_) throw ObjectStoreError(url_ + ": cannot write " + tmp_);
    std::error_code ec;
    std::filesystem::rename(tmp_, path_, ec);
    if (ec) throw ObjectStoreError(url_ + ": cannot rename " + tmp_ + ": " + ec.message());
    finished_ = true;
  }

 private:
  std::string url_;
  std::filesystem::path path_;
  std::string tmp_;
  std::ofstream out_;
  bool finished_ = false;
};

}  // namespace

void FileObjectStore::put(const std::string& key, std::string_view bytes) {
  FileObjectWriter out(url_, checked(key));
  out.append(bytes);
  out.finish();
}

std::unique_ptr<ports::ObjectWriter> FileObjectStore::write(const std::string& key) {
  return std::make_unique<FileObjectWriter>(url_, checked(key));
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
