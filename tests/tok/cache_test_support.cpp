#include "cache_test_support.hpp"

#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "tok/byte_level.hpp"
#include "tok/cache_format.hpp"
#include "util/utf8.hpp"

namespace overhead::tok::cache_test {

namespace fs = std::filesystem;

TempDir::TempDir(const std::string& name) {
  path_ = fs::temp_directory_path() / ("overhead-tok-cache-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(path_);
  fs::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

namespace {
std::string mapped(std::string_view raw) {
  std::string out;
  for (const char c : raw) util::utf8::append(out, byte_level::byte_to_char(static_cast<std::uint8_t>(c)));
  return out;
}
}  // namespace

nlohmann::json byte_level_tokenizer(const std::vector<std::string>& merges) {
  nlohmann::json vocab = nlohmann::json::object();
  std::uint32_t next = 0;
  for (unsigned b = 0; b < 256; ++b) vocab[mapped(std::string(1, static_cast<char>(b)))] = next++;
  nlohmann::json merge_list = nlohmann::json::array();
  for (const std::string& m : merges) {
    std::string raw = m;
    const std::size_t sp = raw.find(' ');
    for (char& c : raw)
      if (c == '_') c = ' ';
    const std::string left = mapped(raw.substr(0, sp)), right = mapped(raw.substr(sp + 1));
    merge_list.push_back(left + " " + right);
    if (!vocab.contains(left + right)) vocab[left + right] = next++;
  }
  const std::uint32_t special = next++;
  nlohmann::json byte_level = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}};
  return {{"version", "1.0"},
          {"added_tokens", {{{"id", special}, {"content", "<|end|>"}, {"special", true}, {"normalized", false}}}},
          {"normalizer", nullptr},
          {"pre_tokenizer", byte_level},
          {"post_processor", byte_level},
          {"decoder", byte_level},
          {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", merge_list}}}};
}

nlohmann::json char_level_tokenizer(const std::vector<std::string>& merges) {
  nlohmann::json vocab = nlohmann::json::object();
  std::uint32_t next = 0;
  vocab["<unk>"] = next++;
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (unsigned b = 0; b < 256; ++b) vocab[std::string("<0x") + kHex[b >> 4] + kHex[b & 15] + ">"] = next++;
  for (char c = 'a'; c <= 'z'; ++c) vocab[std::string(1, c)] = next++;
  for (const char* kana : {"こ", "ん", "に", "ち", "は", "、", "世", "界"}) vocab[kana] = next++;
  nlohmann::json merge_list = nlohmann::json::array();
  for (const std::string& m : merges) {
    const std::size_t sp = m.find(' ');
    const std::string left = m.substr(0, sp), right = m.substr(sp + 1);
    merge_list.push_back(m);
    if (!vocab.contains(left + right)) vocab[left + right] = next++;
  }
  return {{"version", "1.0"},
          {"added_tokens", nlohmann::json::array()},
          {"normalizer", nullptr},
          {"pre_tokenizer", nullptr},
          {"post_processor", nullptr},
          {"decoder", {{"type", "Sequence"}, {"decoders", {{{"type", "ByteFallback"}}, {{"type", "Fuse"}}}}}},
          {"model",
           {{"type", "BPE"}, {"vocab", vocab}, {"merges", merge_list}, {"byte_fallback", true}, {"unk_token", "<unk>"}}}};
}

void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::size_t header_size(const std::string& cache) {
  std::uint32_t n = 0;
  std::memcpy(&n, cache.data() + kHeaderSizeOffset, sizeof n);
  return n;
}

void reseal(std::string& cache) {
  const std::size_t h = header_size(cache);
  const std::uint64_t sum =
      cache_checksum(reinterpret_cast<const unsigned char*>(cache.data()) + h, cache.size() - h);
  std::memcpy(cache.data() + h - 8, &sum, sizeof sum);
}

}  // namespace overhead::tok::cache_test
