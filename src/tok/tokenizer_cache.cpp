#include "tok/tokenizer_cache.hpp"

#include <openssl/evp.h>
#include <simdjson.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <ctime>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "tok/cache_format.hpp"
#include "tok/errors.hpp"
#include "tok/mapped_file.hpp"
#include "util/hash.hpp"

namespace overhead::tok {

namespace {

namespace fs = std::filesystem;

constexpr char kMagic[8] = {'O', 'V', 'H', 'D', 'T', 'O', 'K', 'C'};
// Bump when anything written by BpeModel::write, the skeleton or this header changes meaning.
// 2: the stamp of tokenizer.json (and its check) in the header; tokenizer_config.json by checksum;
//    the checksum is XXH3.
// 3: the stamp's check covers the whole header before it; the tables are no longer walked at
//    load (their entries are checked where they are read), so an older file is not trusted.
constexpr std::uint32_t kFormatVersion = 3;
// The record beside a cache file of the stamp it had when its payload checksum was verified.
constexpr char kVerifiedMagic[8] = {'O', 'V', 'H', 'D', 'T', 'O', 'K', 'V'};

using Digest = std::array<unsigned char, 32>;

// What stat says of tokenizer.json, so that a load of an unchanged file need not hash it (17.5 MB
// for Gemma: about 10 ms of sha256, most of a cached load). Any write changes ctime, which no
// user call can set back; a copy or a re-fetch changes the inode. The all-zero stamp means "not
// trusted": the file was changed so recently before the stat (within the file system clock's
// tick) that a later write could leave every field as it was, so loads hash it instead.
struct Stamp {
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::int64_t ctime_ns = 0;
  bool operator==(const Stamp&) const = default;
  bool trusted() const { return *this != Stamp{}; }
};

// How long a file must have been left alone before its stamp is trusted; well above the coarse
// clock tick (1-10 ms) that file times are taken from.
constexpr std::int64_t kStampSettleNs = 2'000'000'000;

// The stamp of a stat'ed file (the untrusted zero stamp if it was changed less than
// kStampSettleNs ago).
Stamp stamp_of(const struct stat& st) {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  const auto ns = [](const timespec& t) { return std::int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec; };
  Stamp s{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino),
          static_cast<std::uint64_t>(st.st_size), ns(st.st_mtim), ns(st.st_ctim)};
  const std::int64_t settled_before = ns(now) - kStampSettleNs;
  if (s.mtime_ns > settled_before || s.ctime_ns > settled_before) return Stamp{};
  return s;
}

// The stamp of `path`, or nullopt when it cannot be stat'ed.
std::optional<Stamp> stamp_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return stamp_of(st);
}

// The fixed header; 8-byte fields only, so the payload after it stays 8-byte aligned.
struct Header {
  char magic[8];
  std::uint32_t version;
  std::uint32_t header_size;
  std::uint64_t layout;
  Digest tokenizer_sha;
  std::uint64_t config_checksum;
  std::uint64_t has_config;
  Stamp tokenizer_stamp;
  // Of every byte above: a flipped header byte is refused even when the payload is not read in
  // full. (Payload size and checksum, below, are checked against the payload itself.)
  std::uint64_t header_check;
  std::uint64_t payload_size;
  std::uint64_t payload_checksum;
};
static_assert(sizeof(Header) % 8 == 0);
static_assert(sizeof(Stamp) == 40, "Stamp is written as is: no padding");

std::uint64_t header_check(const Header& h) {
  return cache_checksum(reinterpret_cast<const unsigned char*>(&h), offsetof(Header, header_check));
}

// `<cache file>.verified`: the cache file's own stamp when its payload checksum last matched
// (with the checksum it matched). While the file keeps that stamp its bytes are the ones
// verified -- any write, truncation or replacement changes its size, ctime or inode, and ctime
// cannot be set back -- so a load checks the header and maps the payload without reading it all
// (16-33 MB for the seed tokenizers: most of a cold start). A stamp is recorded only once
// settled (stamp_of), so a write within the clock tick of the verification is never hidden.
// The record is not what keeps a load in bounds (the readers check every entry they use); it
// only says the payload checksum need not be recomputed.
struct VerifiedRecord {
  char magic[8];
  Stamp cache_stamp;
  std::uint64_t payload_checksum;
  std::uint64_t check;
};
static_assert(sizeof(VerifiedRecord) == 64, "written as is: no padding");

std::uint64_t record_check(const VerifiedRecord& v) {
  return cache_checksum(reinterpret_cast<const unsigned char*>(&v), offsetof(VerifiedRecord, check));
}

std::string verified_record_path(const std::string& cache_file) { return cache_file + ".verified"; }

// True if `cache_file` (stamp `stamp`, payload checksum `checksum` in its header) was verified
// under exactly this stamp.
bool verified_before(const std::string& cache_file, const Stamp& stamp, std::uint64_t checksum) {
  if (!stamp.trusted()) return false;
  VerifiedRecord v{};
  std::ifstream in(verified_record_path(cache_file), std::ios::binary);
  if (!in.read(reinterpret_cast<char*>(&v), sizeof v) || in.peek() != std::char_traits<char>::eof()) return false;
  return std::memcmp(v.magic, kVerifiedMagic, sizeof kVerifiedMagic) == 0 && v.check == record_check(v) &&
         v.cache_stamp == stamp && v.payload_checksum == checksum;
}

// Records that `cache_file` was verified under `stamp` (best effort, through a temporary and a
// rename like the cache file itself; a record that cannot be written only means verifying again).
void record_verified(const std::string& cache_file, const Stamp& stamp, std::uint64_t checksum) {
  if (!stamp.trusted()) return;
  VerifiedRecord v{};
  std::memcpy(v.magic, kVerifiedMagic, sizeof kVerifiedMagic);
  v.cache_stamp = stamp;
  v.payload_checksum = checksum;
  v.check = record_check(v);
  static std::atomic<unsigned> counter{0};
  const std::string path = verified_record_path(cache_file);
  const std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  std::error_code ec;
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(&v), sizeof v);
    out.close();
    if (!out) {
      fs::remove(tmp, ec);
      return;
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) fs::remove(tmp, ec);
}

Digest sha256(std::string_view bytes) {
  Digest d{};
  unsigned int n = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), d.data(), &n, EVP_sha256(), nullptr) != 1 || n != d.size())
    throw LoadError("sha256 failed");
  return d;
}

// The inputs a cache file must match. tokenizer.json's sha256 is computed only when needed: not
// when the file's trusted stamp is the one the cache was written with.
struct Key {
  std::string tokenizer_file;
  Stamp tokenizer_stamp;
  std::optional<Digest> tokenizer_sha;
  std::uint64_t config_checksum = 0;
  bool has_config = false;

  const Digest& tokenizer_digest() {
    if (!tokenizer_sha) {
      const auto source = MappedFile::open(tokenizer_file);
      if (!source && !fs::is_regular_file(tokenizer_file)) throw LoadError(tokenizer_file, "", "cannot read the file");
      if (source) source->prefault();
      tokenizer_sha = source ? sha256(std::string_view(reinterpret_cast<const char*>(source->data()), source->size()))
                             : sha256("");
    }
    return *tokenizer_sha;
  }
};

// Checks the mapped file against `key` and loads from it; throws CacheFormatError (or LoadError
// for a skeleton that no longer loads) when it cannot be used. `stamp_matched` says whether the
// file was accepted on its stamp (else on tokenizer.json's hash). The payload checksum is
// recomputed when `verify`, or unless the file at `cache_file` is unchanged since it last matched
// (VerifiedRecord); `verified_checksum` receives the checksum when it was recomputed.
std::unique_ptr<TokenizerImpl> load_cache_file(const std::shared_ptr<const MappedFile>& map, const std::string& cache_file,
                                               bool verify, Key& key, bool& stamp_matched, const std::string& dir,
                                               const std::string& file, std::optional<std::string_view> config_json,
                                               std::optional<std::uint64_t>& verified_checksum) {
  if (map->size() < sizeof(Header)) throw CacheFormatError("shorter than its header");
  Header h;
  std::memcpy(&h, map->data(), sizeof h);
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) throw CacheFormatError("not a tokenizer cache file");
  if (h.version != kFormatVersion || h.header_size != sizeof(Header)) throw CacheFormatError("another format version");
  if (h.layout != BpeModel::layout_fingerprint()) throw CacheFormatError("written by a build with other table hashing");
  if (h.header_check != header_check(h)) throw CacheFormatError("header check mismatch");
  stamp_matched = key.tokenizer_stamp.trusted() && h.tokenizer_stamp == key.tokenizer_stamp;
  if (!stamp_matched && h.tokenizer_sha != key.tokenizer_digest()) throw CacheFormatError("tokenizer.json has changed");
  if (h.has_config != key.has_config || h.config_checksum != key.config_checksum)
    throw CacheFormatError("tokenizer_config.json has changed");
  if (h.payload_size != map->size() - sizeof(Header)) throw CacheFormatError("size differs from its header (truncated?)");
  const unsigned char* payload = map->data() + sizeof(Header);
  if (verify || !verified_before(cache_file, stamp_of(map->status()), h.payload_checksum)) {
    map->prefault();
    if (cache_checksum(payload, h.payload_size) != h.payload_checksum) throw CacheFormatError("checksum mismatch");
    verified_checksum = h.payload_checksum;
  }

  CacheReader r(payload, h.payload_size);
  const simdjson::padded_string skeleton(r.bytes());
  auto impl = load_tokenizer_json(
      dir, file, skeleton,
      [&](const BpeConfig& config) { return BpeModel::read(r, config, map); }, config_json, nullptr,
      /*config_known_valid=*/true);  // the config checksum matched a text that loaded when written
  if (!r.at_end()) throw CacheFormatError("bytes after the last table");
  return impl;
}

// Writes a cache file of `payload` to `path` through a temporary in the same folder and a rename,
// so a reader sees either the old file or the whole new one. Returns an error text, empty on success.
std::string write_cache_file(const std::string& path, const Key& key, std::string_view payload) {
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.version = kFormatVersion;
  h.header_size = sizeof(Header);
  h.layout = BpeModel::layout_fingerprint();
  h.tokenizer_sha = *key.tokenizer_sha;
  h.config_checksum = key.config_checksum;
  h.has_config = key.has_config;
  h.tokenizer_stamp = key.tokenizer_stamp;
  h.header_check = header_check(h);
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

// The cache file for a freshly loaded `impl`.
std::string write_cache_file(const std::string& path, const Key& key, const std::string& skeleton,
                             const TokenizerImpl& impl) {
  CacheWriter w;
  w.bytes(skeleton);
  impl.model->write(w);
  return write_cache_file(path, key, w.data());
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
  std::string name = abs.parent_path().filename().string();
  if (name.empty()) name = "tokenizer";
  // The path only has to name the file apart from the cache files of other locations; a
  // non-cryptographic hash does that without loading libcrypto on every load.
  return (fs::path(cache_dir) / (name + "-" + util::text_digest(where) + ".tokc")).string();
}

bool verify_cache_from_environment() {
  const char* v = std::getenv("OVERHEAD_TOKENIZER_CACHE_VERIFY");
  return v && *v && std::string_view(v) != "0";
}

std::unique_ptr<TokenizerImpl> load_through_cache(const std::string& dir, const std::string& file,
                                                  const std::optional<std::string>& cache_dir, CacheStatus* status,
                                                  bool verify) {
  CacheStatus local;
  CacheStatus& st = status ? *status : local;
  st = CacheStatus{};
  if (!cache_dir) return load_tokenizer_files(dir, file);

  // Stat'ed before anything is read, so a stamp never vouches for bytes older than itself. On a
  // hit the JSON is never copied or parsed, and with a matching stamp never read at all.
  Key key;
  key.tokenizer_file = file;
  if (const auto stamp = stamp_of(file)) key.tokenizer_stamp = *stamp;
  else throw LoadError(file, "", "cannot read the file");
  const std::string config_path = (fs::path(dir) / "tokenizer_config.json").string();
  std::string config_text;
  if (std::ifstream in(config_path, std::ios::binary | std::ios::ate); in) {
    // One read of the whole file (a character-by-character copy cost ~0.7 M instructions).
    const std::streamoff size = in.tellg();
    if (size < 0) throw LoadError(config_path, "", "cannot read the file");
    config_text.resize(static_cast<std::size_t>(size));
    in.seekg(0);
    if (!in.read(config_text.data(), size)) throw LoadError(config_path, "", "cannot read the file");
    key.has_config = true;
    // Read in full anyway (it is parsed), and a few KB: the payload's checksum is enough to see
    // a change, and keeps libcrypto unloaded on a hit.
    key.config_checksum = cache_checksum(reinterpret_cast<const unsigned char*>(config_text.data()), config_text.size());
  }
  const std::optional<std::string_view> config_json =
      key.has_config ? std::optional<std::string_view>(config_text) : std::nullopt;

  st.file = tokenizer_cache_path(*cache_dir, file);
  bool existed = false;
  // Mapped lazily: a file verified under its present stamp is read only where the tables are
  // looked up; one that is not is read in full (and prefaulted) by its checksum.
  if (auto map = MappedFile::open(st.file)) {
    existed = true;
    try {
      bool stamp_matched = false;
      std::optional<std::uint64_t> verified_checksum;
      auto impl = load_cache_file(map, st.file, verify, key, stamp_matched, dir, file, config_json, verified_checksum);
      st.kind = CacheStatus::Kind::kHit;
      st.payload_verified = verified_checksum.has_value();
      if (verified_checksum) record_verified(st.file, stamp_of(map->status()), *verified_checksum);
      // Accepted on the hash (a copied or re-fetched but identical tokenizer.json): write the
      // same payload under the new stamp, once, so the next loads skip the hash. Best effort.
      if (!stamp_matched && key.tokenizer_stamp.trusted())
        write_cache_file(st.file, key,
                         std::string_view(reinterpret_cast<const char*>(map->data()) + sizeof(Header),
                                          map->size() - sizeof(Header)));
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
