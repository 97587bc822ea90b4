// The compiled tokenizer cache never changes what a tokenizer does and is never trusted when
// it is damaged: on small tokenizers of both model families, a cached load encodes and decodes
// as a load from JSON does; a cache file truncated at every header offset and many payload
// offsets, with a flipped byte anywhere, of another version, or keyed to an older tokenizer.json
// or tokenizer_config.json is refused and rebuilt (also when an edit keeps tokenizer.json's size
// and mtime, which the stat stamp that spares the hash would otherwise miss); a payload edited on purpose (checksum
// recomputed) loads or is refused but is never read out of bounds (run under ASan in CI); an
// unwritable cache folder only means loading from JSON. A file unchanged since it was verified
// is trusted without recomputing its checksum, and any change to it ends that trust.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cache_test_support.hpp"
#include "tok/tokenizer.hpp"
#include "tok/tokenizer_cache.hpp"

namespace overhead::tok {
namespace {

namespace fs = std::filesystem;
using cache_test::TempDir;
using Kind = CacheStatus::Kind;

const std::vector<std::string>& probe_texts() {
  static const std::vector<std::string> texts = {
      "the cat sat on the mat",  "hello world, hello there", "こんにちは、世界 and then",
      "zzz qqq the the the",     "<|end|>the end<|end|>",    "\xF0\x9F\x98\x80 emoji, \xC3\xA9t\xC3\xA9",
      "", "a",                   "thethethethethethethethethethe theatre",
  };
  return texts;
}

// Encodes and decodes every probe text; the whole behaviour a cache must reproduce.
std::vector<std::string> behaviour(const Tokenizer& tok) {
  std::vector<std::string> out;
  for (const std::string& text : probe_texts()) {
    const Ids ids = tok.encode(text, true);
    std::string line;
    for (const TokenId id : ids) line += std::to_string(id) + ",";
    out.push_back(line + "|" + tok.decode(ids, false) + "|" + tok.decode(ids, true));
  }
  return out;
}

struct Family {
  const char* name;
  nlohmann::json (*make)(const std::vector<std::string>&);
  std::vector<std::string> merges;
};

const std::vector<Family>& families() {
  static const std::vector<Family> f = {
      {"byte_level", cache_test::byte_level_tokenizer, {"t h", "th e", "_ the", "a t", "h e", "l l", "he ll", "hell o"}},
      {"char_level", cache_test::char_level_tokenizer, {"t h", "th e", "a t", "h e", "こ ん", "こん に", "世 界"}},
  };
  return f;
}

class CacheTest : public ::testing::TestWithParam<Family> {
 protected:
  void SetUp() override {
    model_dir_ = std::make_unique<TempDir>(std::string("model-") + GetParam().name);
    cache_dir_ = std::make_unique<TempDir>(std::string("cache-") + GetParam().name);
    cache_test::write_file(model_dir_->path() / "tokenizer.json", GetParam().make(GetParam().merges).dump());
    cache_test::write_file(model_dir_->path() / "tokenizer_config.json", R"({"bos_token": null})");
    reference_ = behaviour(*Tokenizer::load(dir(), LoadOptions{""}));
  }
  std::string dir() const { return model_dir_->path().string(); }
  LoadOptions options() const { return LoadOptions{cache_dir_->path().string()}; }
  std::shared_ptr<const Tokenizer> load(CacheStatus& status) const { return Tokenizer::load(dir(), options(), &status); }
  // Loads once so the cache file exists and returns its bytes.
  std::string built_cache() {
    CacheStatus status;
    load(status);
    EXPECT_TRUE(status.kind == Kind::kBuilt || status.kind == Kind::kRebuilt || status.kind == Kind::kHit);
    file_ = status.file;
    return cache_test::read_file(file_);
  }
  // Writes `bytes` as the cache file, loads, and checks that the file was refused and rebuilt,
  // that the tokenizer still behaves as from JSON, and that the next load hits the new file.
  void expect_refused(const std::string& bytes, const std::string& what) {
    cache_test::write_file(file_, bytes);
    CacheStatus status;
    const auto tok = load(status);
    ASSERT_EQ(status.kind, Kind::kRebuilt) << what << " was accepted";
    EXPECT_FALSE(status.reason.empty()) << what;
    EXPECT_EQ(behaviour(*tok), reference_) << what;
    CacheStatus again;
    const auto reloaded = load(again);
    ASSERT_EQ(again.kind, Kind::kHit) << what << ": the rebuilt file was not used: " << again.reason;
    EXPECT_EQ(behaviour(*reloaded), reference_) << what;
  }

  std::unique_ptr<TempDir> model_dir_, cache_dir_;
  std::vector<std::string> reference_;
  std::string file_;
};

TEST_P(CacheTest, CachedLoadBehavesAsALoadFromJson) {
  CacheStatus first;
  const auto built = load(first);
  EXPECT_EQ(first.kind, Kind::kBuilt) << first.reason;
  EXPECT_TRUE(fs::exists(first.file));
  EXPECT_EQ(fs::path(first.file).parent_path(), cache_dir_->path());
  CacheStatus second;
  const auto cached = load(second);
  ASSERT_EQ(second.kind, Kind::kHit) << second.reason;
  EXPECT_EQ(behaviour(*built), reference_);
  EXPECT_EQ(behaviour(*cached), reference_);
  EXPECT_EQ(cached->vocab_size(), built->vocab_size());
  for (TokenId id = 0; id < built->vocab_size() + 2; ++id) EXPECT_EQ(cached->id_to_token(id), built->id_to_token(id)) << id;
  EXPECT_EQ(cached->config(), built->config());
  // Nothing is left behind but the one cache file (temporaries are renamed into place).
  EXPECT_EQ(std::distance(fs::directory_iterator(cache_dir_->path()), fs::directory_iterator()), 1);
}

TEST_P(CacheTest, TruncatedFileIsRebuilt) {
  const std::string good = built_cache();
  const std::size_t header = cache_test::header_size(good);
  std::vector<std::size_t> cuts;
  for (std::size_t n = 0; n <= header; ++n) cuts.push_back(n);  // every offset of the header
  for (std::size_t k = 1; k <= 60; ++k) cuts.push_back(header + (good.size() - header) * k / 61);
  cuts.push_back(good.size() - 1);
  for (const std::size_t n : cuts) expect_refused(good.substr(0, n), "the file cut to " + std::to_string(n) + " bytes");
  expect_refused(good + std::string(8, '\0'), "the file with 8 bytes appended");
}

TEST_P(CacheTest, FlippedByteIsRebuilt) {
  const std::string good = built_cache();
  const std::size_t header = cache_test::header_size(good);
  std::vector<std::size_t> positions;
  for (std::size_t i = 0; i < header; ++i) positions.push_back(i);
  std::mt19937_64 rng(14);
  for (int k = 0; k < 60; ++k) positions.push_back(header + rng() % (good.size() - header));
  positions.push_back(good.size() - 1);
  for (const std::size_t i : positions) {
    std::string bad = good;
    bad[i] = static_cast<char>(bad[i] ^ (1u << (i % 8)));
    expect_refused(bad, "byte " + std::to_string(i) + " flipped");
  }
}

TEST_P(CacheTest, OtherVersionIsRebuilt) {
  std::string bad = built_cache();
  std::uint32_t version;
  std::memcpy(&version, bad.data() + cache_test::kVersionOffset, sizeof version);
  ++version;
  std::memcpy(bad.data() + cache_test::kVersionOffset, &version, sizeof version);
  cache_test::write_file(file_, bad);
  CacheStatus status;
  load(status);
  EXPECT_EQ(status.kind, Kind::kRebuilt);
  EXPECT_NE(status.reason.find("version"), std::string::npos) << status.reason;
  expect_refused(bad, "a file of another format version");
}

TEST_P(CacheTest, ChangedTokenizerFilesAreRebuilt) {
  built_cache();
  // A different merge list changes the ids; the cache must follow the file, not its old self.
  std::vector<std::string> fewer = GetParam().merges;
  fewer.pop_back();
  cache_test::write_file(model_dir_->path() / "tokenizer.json", GetParam().make(fewer).dump());
  const auto expected = behaviour(*Tokenizer::load(dir(), LoadOptions{""}));
  ASSERT_NE(expected, reference_) << "the edit should change what the tokenizer does";
  CacheStatus status;
  const auto tok = load(status);
  EXPECT_EQ(status.kind, Kind::kRebuilt);
  EXPECT_NE(status.reason.find("tokenizer.json has changed"), std::string::npos) << status.reason;
  EXPECT_EQ(behaviour(*tok), expected);

  cache_test::write_file(model_dir_->path() / "tokenizer_config.json", R"({"bos_token": "<s>"})");
  CacheStatus after_config;
  const auto reconfigured = load(after_config);
  EXPECT_EQ(after_config.kind, Kind::kRebuilt);
  EXPECT_NE(after_config.reason.find("tokenizer_config.json has changed"), std::string::npos) << after_config.reason;
  EXPECT_EQ(reconfigured->special_token("bos_token"), "<s>");

  fs::remove(model_dir_->path() / "tokenizer_config.json");
  CacheStatus without_config;
  const auto plain = load(without_config);
  EXPECT_EQ(without_config.kind, Kind::kRebuilt);
  EXPECT_FALSE(plain->special_token("bos_token"));
}

// A load of an unchanged tokenizer.json is accepted on its stat stamp, without hashing the file.
// The stamp must still see every edit: rewriting the same bytes (a new ctime) is accepted on the
// hash and the cache restamped; an edit that keeps the size and sets the mtime back is refused on
// the hash (ctime cannot be set back). The waits let the stamps settle (tokenizer_cache.cpp).
TEST_P(CacheTest, StampSkipsTheHashButNeverHidesAnEdit) {
  const fs::path json = model_dir_->path() / "tokenizer.json";
  const auto settle = [] { std::this_thread::sleep_for(std::chrono::milliseconds(2200)); };
  settle();
  const std::string first = built_cache();
  CacheStatus hit;
  load(hit);
  ASSERT_EQ(hit.kind, Kind::kHit) << hit.reason;

  cache_test::write_file(json, cache_test::read_file(json));  // same bytes, new ctime
  settle();
  CacheStatus same;
  EXPECT_EQ(behaviour(*load(same)), reference_);
  EXPECT_EQ(same.kind, Kind::kHit) << same.reason;
  EXPECT_NE(cache_test::read_file(file_), first) << "the cache was not restamped";

  // Same length, other behaviour: the merge "a t" becomes "s a".
  std::vector<std::string> edited_merges = GetParam().merges;
  for (std::string& m : edited_merges)
    if (m == "a t") m = "s a";
  const std::string edited = GetParam().make(edited_merges).dump();
  ASSERT_EQ(edited.size(), cache_test::read_file(json).size());
  const auto mtime = fs::last_write_time(json);
  cache_test::write_file(json, edited);
  fs::last_write_time(json, mtime);
  const auto expected = behaviour(*Tokenizer::load(dir(), LoadOptions{""}));
  ASSERT_NE(expected, reference_) << "the edit should change what the tokenizer does";
  CacheStatus after;
  const auto tok = load(after);
  EXPECT_EQ(after.kind, Kind::kRebuilt);
  EXPECT_NE(after.reason.find("tokenizer.json has changed"), std::string::npos) << after.reason;
  EXPECT_EQ(behaviour(*tok), expected);
}

// A cache file unchanged since its payload checksum last matched is loaded without recomputing
// it (the payload is mapped, not read): the record of its stamp beside it says so. Every change
// to the file -- a flipped payload byte even with its mtime set back, a truncation, a foreign
// file renamed into place -- changes that stamp, so the checksum is recomputed and the file
// refused; LoadOptions::verify_cache recomputes it regardless. The waits let the stamps settle.
TEST_P(CacheTest, UnchangedFileSkipsTheChecksumButNeverHidesAChange) {
  const auto settle = [] { std::this_thread::sleep_for(std::chrono::milliseconds(2200)); };
  settle();  // tokenizer.json too: else the cache file is restamped (rewritten) once it settles
  const std::string good = built_cache();
  CacheStatus fresh;
  load(fresh);  // written just now: not settled, so verified and not recorded
  ASSERT_EQ(fresh.kind, Kind::kHit) << fresh.reason;
  EXPECT_TRUE(fresh.payload_verified);
  EXPECT_FALSE(fs::exists(file_ + ".verified"));
  settle();
  CacheStatus first;
  load(first);
  ASSERT_EQ(first.kind, Kind::kHit) << first.reason;
  EXPECT_TRUE(first.payload_verified);
  EXPECT_TRUE(fs::exists(file_ + ".verified"));
  CacheStatus trusted;
  EXPECT_EQ(behaviour(*load(trusted)), reference_);
  ASSERT_EQ(trusted.kind, Kind::kHit) << trusted.reason;
  EXPECT_FALSE(trusted.payload_verified) << "an unchanged, verified file was checksummed again";
  LoadOptions verify = options();
  verify.verify_cache = true;
  CacheStatus asked;
  Tokenizer::load(dir(), verify, &asked);
  EXPECT_EQ(asked.kind, Kind::kHit) << asked.reason;
  EXPECT_TRUE(asked.payload_verified);

  // A flipped byte deep in the tables (never looked up by the probe texts), mtime set back.
  const std::size_t header = cache_test::header_size(good);
  std::string flipped = good;
  flipped[header + (good.size() - header) * 3 / 4] ^= 0x10;
  const auto mtime = fs::last_write_time(file_);
  cache_test::write_file(file_, flipped);
  fs::last_write_time(file_, mtime);
  settle();  // even once the edit has settled, its stamp is not the recorded one
  CacheStatus after_flip;
  const auto tok = load(after_flip);
  ASSERT_EQ(after_flip.kind, Kind::kRebuilt) << "a file edited after its verification was trusted";
  EXPECT_NE(after_flip.reason.find("checksum"), std::string::npos) << after_flip.reason;
  EXPECT_EQ(behaviour(*tok), reference_);

  // The rebuilt file verified and recorded, then replaced by a truncated copy and by a foreign file.
  settle();
  CacheStatus recorded;
  load(recorded);
  ASSERT_TRUE(recorded.payload_verified);
  const std::string rebuilt = cache_test::read_file(file_);
  const fs::path elsewhere = cache_dir_->path() / "elsewhere";
  cache_test::write_file(elsewhere, rebuilt.substr(0, rebuilt.size() - 8));
  fs::rename(elsewhere, file_);
  settle();
  CacheStatus after_cut;
  load(after_cut);
  EXPECT_EQ(after_cut.kind, Kind::kRebuilt) << "a truncated file was trusted";
  cache_test::write_file(elsewhere, std::string(rebuilt.size(), 'x'));
  fs::rename(elsewhere, file_);
  CacheStatus after_foreign;
  load(after_foreign);
  EXPECT_EQ(after_foreign.kind, Kind::kRebuilt) << "a foreign file was trusted";
  EXPECT_NE(after_foreign.reason.find("not a tokenizer cache file"), std::string::npos) << after_foreign.reason;
}

// A payload edited with the checksum recomputed passes the checksum; the bounds checks are then
// all that stands between the reader and memory outside the file. Each 8-byte word of the first
// part of the payload (the counts and sizes the reader walks) and random words elsewhere are set
// to values that break offsets and sizes; every load must end in a working tokenizer.
// The counts and element sizes in front of every array are found by their shape: a word that is
// an element size (1, 4, 8 or 16) after a count that fits in the rest of the file.
TEST_P(CacheTest, EditedPayloadWithValidChecksumIsNeverReadOutOfBounds) {
  const std::string good = built_cache();
  const std::size_t header = cache_test::header_size(good);
  std::vector<std::size_t> words;
  const auto word = [&](std::size_t at) {
    std::uint64_t w;
    std::memcpy(&w, good.data() + at, 8);
    return w;
  };
  for (std::size_t i = header; i + 8 <= good.size() && i < header + 256; i += 8) words.push_back(i);
  for (std::size_t i = header; i + 16 <= good.size(); i += 8) {
    const std::uint64_t count = word(i), size = word(i + 8);
    if ((size == 1 || size == 4 || size == 8 || size == 16) && count <= (good.size() - i) / size) {
      words.push_back(i);
      words.push_back(i + 8);
      if (i >= header + 8) words.push_back(i - 8);  // the scalar before an array, often a count
    }
  }
  std::mt19937_64 rng(9);
  for (int k = 0; k < 40; ++k) words.push_back(header + (rng() % ((good.size() - header) / 8)) * 8);
  const std::uint64_t values[] = {~0ULL, 1ULL << 40, 3};
  int refused = 0;
  for (const std::size_t at : words) {
    for (const std::uint64_t value : values) {
      std::string bad = good;
      std::uint64_t old;
      std::memcpy(&old, bad.data() + at, 8);
      if (old == value) continue;
      std::memcpy(bad.data() + at, &value, 8);
      cache_test::reseal(bad);
      cache_test::write_file(file_, bad);
      CacheStatus status;
      const auto tok = load(status);
      ASSERT_TRUE(status.kind == Kind::kHit || status.kind == Kind::kRebuilt) << status.reason;
      if (status.kind == Kind::kRebuilt) {
        ++refused;
        EXPECT_EQ(behaviour(*tok), reference_) << "word at " << at;
      } else {
        behaviour(*tok);  // table contents changed inside their bounds: ids may differ, memory may not be overrun
      }
    }
  }
  EXPECT_GT(refused, 0);
}

TEST_P(CacheTest, UnwritableCacheFolderLoadsFromJson) {
  // A folder below a regular file can never be created, even by root.
  cache_test::write_file(cache_dir_->path() / "not-a-folder", "x");
  CacheStatus status;
  const auto tok = Tokenizer::load(dir(), LoadOptions{(cache_dir_->path() / "not-a-folder" / "cache").string()}, &status);
  EXPECT_EQ(status.kind, Kind::kNotWritten);
  EXPECT_FALSE(status.reason.empty());
  EXPECT_EQ(behaviour(*tok), reference_);
  CacheStatus off;
  Tokenizer::load(dir(), LoadOptions{""}, &off);
  EXPECT_EQ(off.kind, Kind::kOff);
}

INSTANTIATE_TEST_SUITE_P(BothFamilies, CacheTest, ::testing::ValuesIn(families()),
                         [](const ::testing::TestParamInfo<Family>& p) { return std::string(p.param.name); });

}  // namespace
}  // namespace overhead::tok
