#include "tok/tokenizer_cache.hpp"

#include <openssl/evp.h>
#include <simdjson.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "tok/cache_format.hpp"
#include "tok/errors.hpp"
#include "tok/mapped_file.hpp"

namespace overhead::tok {

namespace {

namespace fs = std::filesystem;

constexpr char kMagic[8] = {'O', 'V', 'H', 'D', 'T', 'O', 'K', 'C'};
// Bump when anything written by BpeModel::write, the skeleton or this header changes meaning.
constexpr std::uint32_t kFormatVersion = 1;

using Digest = std::array<unsigned char, 32>;

// The fixed header; 8-byte fields only, so the payload after it stays 8-byte aligned.
struct Header {
  char magic[8];
  std::uint32_t version;
  std::uint32_t header_size;
  std::uint64_t layout;
  Digest tokenizer_sha;
  Digest config_sha;
  std::uint64_t has_config;
  std::uint64_t payload_size;
  std::uint64_t payload_checksum;
};
static_assert(sizeof(Header) % 8 == 0);

Digest sha256(std::string_view bytes) {
  Digest d{};
  unsigned int n = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), d.data(), &n, EVP_sha256(), nullptr) != 1 || n != d.size())
    throw LoadError("sha256 failed");
  return d;
}

std::string hex(const unsigned char* p, std::size_t n) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  for (std::size_t k = 0; k < n; ++k) s += kHex[p[k] >> 4], s += kHex[p[k] & 15];
  return s;
}

// The inputs a cache file must match.
struct Key {
  Digest tokenizer_sha{};
  Digest config_sha{};
  bool has_config = false;
};

// Checks the mapped file against `key` and loads from it; throws CacheFormatError (or LoadError
// for a skeleton that no longer loads) when it cannot be used.
std::unique_ptr<TokenizerImpl> load_cache_file(const std::shared_ptr<const MappedFile>& map, const Key& key,
                                               const std::string& dir, const std::string& file,
                                               std::optional<std::string_view> config_json) {
  if (map->size() < sizeof(Header)) throw CacheFormatError("shorter than its header");
  Header h;
  std::memcpy(&h, map->data(), sizeof h);
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) throw CacheFormatError("not a tokenizer cache file");
  if (h.version != kFormatVersion || h.header_size != sizeof(Header)) throw CacheFormatError("another format version");
  if (h.layout != BpeModel::layout_fingerprint()) throw CacheFormatError("written by a build with other table hashing");
  if (h.tokenizer_sha != key.tokenizer_sha) throw CacheFormatError("tokenizer.json has changed");
  if (h.has_config != key.has_config || h.config_sha != key.config_sha)
    throw CacheFormatError("tokenizer_config.json has changed");
  if (h.payload_size != map->size() - sizeof(Header)) throw CacheFormatError("size differs from its header (truncated?)");
  const unsigned char* payload = map->data() + sizeof(Header);
  if (cache_checksum(payload, h.payload_size) != h.payload_checksum) throw CacheFormatError("checksum mismatch");

  CacheReader r(payload, h.payload_size);
  const simdjson::padded_string skeleton(r.bytes());
  auto impl = load_tokenizer_json(
      dir, file, skeleton,
      [&](const BpeConfig& config) { return BpeModel::read(r, config, map); }, config_json, nullptr);
  if (!r.at_end()) throw CacheFormatError("bytes after the last table");
  return impl;
}

// Writes the cache for `impl` to `path` through a temporary in the same folder and a rename, so a
// reader sees either the old file or the whole new one. Returns an error text, empty on success.
std::string write_cache_file(const std::string& path, const Key& key, const std::string& skeleton,
                             const TokenizerImpl& impl) {
  CacheWriter w;
  w.bytes(skeleton);
  impl.model->write(w);
  const std::string& payload = w.data();
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.version = kFormatVersion;
  h.header_size = sizeof(Header);
  h.layout = BpeModel::layout_fingerprint();
  h.tokenizer_sha = key.tokenizer_sha;
  h.config_sha = key.config_sha;
  h.has_config = key.has_config;
  h.payload_size = payload.size();
  h.payload_checksum = cache_checksum(reinterpret_cast<const unsigned char*>(payload.data()), payload.size());

  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  if (ec) return "cannot create " + fs::path(path).parent_path().string() + ": " + ec.message();
  static std::atomic<unsigned> counter{0};
  const std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return "cannot write " + tmp;
    out.write(reinterpret_cast<const char*>(&h), sizeof h);
    out.write(payload.data(), static_cast<std::streamsize>(payload.size()));
    out.close();
    if (!out) {
      fs::remove(tmp, ec);
      return "cannot write " + tmp;
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    return "cannot rename " + tmp + ": " + ec.message();
  }
  return "";
}

}  // namespace

std::optional<std::string> default_tokenizer_cache_dir() {
  if (const char* v = std::getenv("OVERHEAD_TOKENIZER_CACHE")) {
    const std::string s = v;
    if (s.empty() || s == "off" || s == "0") return std::nullopt;
    return s;
  }
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return (fs::path(xdg) / "overhead" / "tokenizers").string();
  if (const char* home = std::getenv("HOME"); home && *home)
    return (fs::path(home) / ".cache" / "overhead" / "tokenizers").string();
  return std::nullopt;
}

std::string tokenizer_cache_path(const std::string& cache_dir, const std::string& file) {
  std::error_code ec;
  fs::path abs = fs::absolute(file, ec);
  if (ec) abs = file;
  const std::string where = abs.lexically_normal().string();
  const Digest d = sha256(where);
  std::string name = abs.parent_path().filename().string();
  if (name.empty()) name = "tokenizer";
  return (fs::path(cache_dir) / (name + "-" + hex(d.data(), 8) + ".tokc")).string();
}

std::unique_ptr<TokenizerImpl> load_through_cache(const std::string& dir, const std::string& file,
                                                  const std::optional<std::string>& cache_dir, CacheStatus* status) {
  CacheStatus local;
  CacheStatus& st = status ? *status : local;
  st = CacheStatus{};
  if (!cache_dir) return load_tokenizer_files(dir, file);

  // Hashed through a mapping: on a hit the JSON is never copied or parsed.
  Key key;
  {
    const auto source = MappedFile::open(file);
    if (!source && !fs::is_regular_file(file)) throw LoadError(file, "", "cannot read the file");
    key.tokenizer_sha = source ? sha256(std::string_view(reinterpret_cast<const char*>(source->data()), source->size()))
                               : sha256("");
  }
  const std::string config_path = (fs::path(dir) / "tokenizer_config.json").string();
  std::string config_text;
  if (fs::exists(config_path)) {
    std::ifstream in(config_path, std::ios::binary);
    config_text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (in.bad()) throw LoadError(config_path, "", "cannot read the file");
    key.has_config = true;
    key.config_sha = sha256(config_text);
  }
  const std::optional<std::string_view> config_json =
      key.has_config ? std::optional<std::string_view>(config_text) : std::nullopt;

  st.file = tokenizer_cache_path(*cache_dir, file);
  bool existed = false;
  if (auto map = MappedFile::open(st.file)) {
    existed = true;
    try {
      auto impl = load_cache_file(map, key, dir, file, config_json);
      st.kind = CacheStatus::Kind::kHit;
      return impl;
    } catch (const CacheFormatError& e) {
      st.reason = e.what();
    } catch (const LoadError& e) {
      st.reason = std::string("its JSON part no longer loads: ") + e.what();
    }
  } else if (fs::exists(st.file)) {
    existed = true;
    st.reason = "cannot be mapped (empty or unreadable)";
  }

  simdjson::padded_string json;
  if (simdjson::padded_string::load(file).get(json)) throw LoadError(file, "", "cannot read the file");
  // The file may have changed since it was hashed; a cache keyed by the old hash is then merely
  // rebuilt on the next load, since that load hashes the new bytes.
  key.tokenizer_sha = sha256(std::string_view(json.data(), json.size()));
  std::string skeleton;
  auto impl = load_tokenizer_json(dir, file, json, nullptr, config_json, &skeleton);
  const std::string error = write_cache_file(st.file, key, skeleton, *impl);
  if (!error.empty()) {
    st.kind = CacheStatus::Kind::kNotWritten;
    st.reason = st.reason.empty() ? error : st.reason + "; " + error;
  } else {
    st.kind = existed ? CacheStatus::Kind::kRebuilt : CacheStatus::Kind::kBuilt;
  }
  return impl;
}

}  // namespace overhead::tok
