// The object store contract: what every ObjectStore backend keeps (ports/object_store.hpp), as one
// parametrised GoogleTest suite, ObjectStoreSemantics. A backend's test binary includes this
// header once and instantiates the suite with its ObjectStoreBackend:
//
//   #include "object_store_contract.hpp"
//   INSTANTIATE_TEST_SUITE_P(S3, ObjectStoreSemantics,
//       ::testing::Values(overhead::pipe::contract::url_object_store_backend(
//           "s3", [](const std::filesystem::path&, const std::string& space) { return base + "/" + space; })),
//       overhead::pipe::contract::ObjectStoreBackendName{});
//
// (link the CMake target overhead_contract_tests). `open(dir, space)` must give the same objects
// for the same space (the reopen test) and none for a new one.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "backends/open.hpp"
#include "ports/errors.hpp"
#include "ports/object_store.hpp"
#include "test_util.hpp"

namespace overhead::pipe::contract {

struct ObjectStoreBackend {
  std::string name;  // shown in the test names
  // The store over namespace `space` (a fresh space = no objects); `dir` is a temporary folder
  // for backends that keep files.
  std::function<std::unique_ptr<ports::ObjectStore>(const std::filesystem::path& dir, const std::string& space)> open;
  // Cases the backend's server (an emulator) cannot pass through no fault of the adapter: test
  // name -> the server's gap. Such a case is skipped with that message, never passed.
  std::map<std::string, std::string> server_gaps;
};

// A backend opened by URL through backends::open_object_store; `url(dir, space)` builds the URL.
inline ObjectStoreBackend url_object_store_backend(
    std::string label, std::function<std::string(const std::filesystem::path& dir, const std::string& space)> url) {
  return ObjectStoreBackend{std::move(label), [url](const std::filesystem::path& dir, const std::string& space) {
                              return backends::open_object_store(url(dir, space));
                            },
                            {}};
}

struct ObjectStoreBackendName {
  std::string operator()(const ::testing::TestParamInfo<ObjectStoreBackend>& info) const { return info.param.name; }
};

class ObjectStoreSemantics : public ::testing::TestWithParam<ObjectStoreBackend> {
 protected:
  void SetUp() override {
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    name = name.substr(0, name.find('/'));
    if (auto gap = GetParam().server_gaps.find(name); gap != GetParam().server_gaps.end())
      GTEST_SKIP() << "server gap: " << gap->second;
    dir_ = testing::temp_dir("objects");
    space_ = fresh_space();
    store_ = GetParam().open(dir_, space_);
  }
  void TearDown() override {
    store_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  static std::string fresh_space() { return "space-" + std::to_string(std::random_device{}()); }
  // Every byte value, twice, with CR LF and NUL in the middle: nothing may be transcoded.
  static std::string all_bytes() {
    std::string s;
    for (int round = 0; round < 2; ++round)
      for (int b = 0; b < 256; ++b) s.push_back(static_cast<char>(b));
    return s + "\r\n\0tail";
  }

  std::filesystem::path dir_;
  std::string space_;
  std::unique_ptr<ports::ObjectStore> store_;
};

TEST_P(ObjectStoreSemantics, PutThenGetGivesTheSameBytes) {
  const std::string bytes = all_bytes();
  store_->put("case1/records.csv", bytes);
  EXPECT_EQ(store_->get("case1/records.csv"), bytes);
}

TEST_P(ObjectStoreSemantics, AnEmptyObjectIsAnObject) {
  store_->put("empty.csv", "");
  EXPECT_EQ(store_->get("empty.csv"), "");
}

TEST_P(ObjectStoreSemantics, PutReplacesTheWholeObject) {
  store_->put("k.csv", std::string(100000, 'x'));
  store_->put("k.csv", "short");
  EXPECT_EQ(store_->get("k.csv"), "short");
}

TEST_P(ObjectStoreSemantics, AMissingObjectIsAPermanentErrorNamingTheKey) {
  try {
    (void)store_->get("never/written.csv");
    FAIL() << "get of a missing object returned";
  } catch (const ports::ObjectStoreError& e) {
    EXPECT_FALSE(e.retryable()) << e.what();
    EXPECT_NE(std::string(e.what()).find("never/written.csv"), std::string::npos) << e.what();
  }
}

TEST_P(ObjectStoreSemantics, KeysWithSpacesSymbolsAndUnicodeRoundTrip) {
  const std::vector<std::string> keys = {"a/b/c/deep.csv", "with space+plus%25=eq&amp.csv",
                                         "データ/ü-ß~(1).csv", "dots.in.name.v1.2.csv"};
  for (std::size_t i = 0; i < keys.size(); ++i) store_->put(keys[i], "object " + std::to_string(i));
  for (std::size_t i = 0; i < keys.size(); ++i) EXPECT_EQ(store_->get(keys[i]), "object " + std::to_string(i)) << keys[i];
}

TEST_P(ObjectStoreSemantics, BadKeysAreRefusedBeforeAnyCall) {
  for (const std::string key : {"", "/absolute.csv", "../up.csv", "a/../../b.csv"}) {
    EXPECT_THROW(store_->put(key, "x"), std::invalid_argument) << key;
    EXPECT_THROW((void)store_->get(key), std::invalid_argument) << key;
  }
}

TEST_P(ObjectStoreSemantics, ALargeObjectRoundTrips) {
  std::string big(4 << 20, '\0');
  std::mt19937 rng(7);
  for (auto& ch : big) ch = static_cast<char>(rng());
  store_->put("big.bin", big);
  EXPECT_EQ(store_->get("big.bin"), big);
}

// Range reads (the Batch API reads its input files in pieces): any piece of the object, the tail
// when the range runs past its end, nothing at or past the end.
TEST_P(ObjectStoreSemantics, ARangeReadGivesThatPieceOfTheObject) {
  const std::string bytes = all_bytes() + std::string(5000, 'z');
  store_->put("ranged.jsonl", bytes);
  EXPECT_EQ(store_->get_range("ranged.jsonl", 0, 10), bytes.substr(0, 10));
  EXPECT_EQ(store_->get_range("ranged.jsonl", 100, 1000), bytes.substr(100, 1000));
  EXPECT_EQ(store_->get_range("ranged.jsonl", bytes.size() - 3, 1000), bytes.substr(bytes.size() - 3));
  EXPECT_EQ(store_->get_range("ranged.jsonl", bytes.size(), 10), "");
  EXPECT_EQ(store_->get_range("ranged.jsonl", bytes.size() + 100, 10), "");
  std::string whole;
  for (std::uint64_t at = 0;; at += 777) {
    const std::string piece = store_->get_range("ranged.jsonl", at, 777);
    if (piece.empty()) break;
    whole += piece;
  }
  EXPECT_EQ(whole, bytes);
  EXPECT_THROW((void)store_->get_range("never/written.jsonl", 0, 10), ports::ObjectStoreError);
}

TEST_P(ObjectStoreSemantics, ARangeReadOfAnEmptyObjectIsEmpty) {
  store_->put("empty.jsonl", "");
  EXPECT_EQ(store_->get_range("empty.jsonl", 0, 10), "");
}

// Writers (a batch's output, an upload put together from its parts): the object appears whole at
// finish, across the backend's part size (S3's is 8 MiB) and with pieces of any size.
TEST_P(ObjectStoreSemantics, AWriterMakesTheObjectOfItsPiecesAtFinish) {
  std::string bytes(19 << 20, '\0');
  std::mt19937 rng(11);
  for (auto& ch : bytes) ch = static_cast<char>(rng());
  store_->put("written.bin", "the old object");
  auto out = store_->write("written.bin");
  std::size_t at = 0;
  for (std::size_t piece = 1; at < bytes.size(); piece = piece * 7 + 13) {
    const std::size_t take = std::min(piece % (3 << 20) + 1, bytes.size() - at);
    out->append(std::string_view(bytes).substr(at, take));
    at += take;
  }
  EXPECT_EQ(store_->get("written.bin"), "the old object");  // nothing shows before finish
  out->finish();
  EXPECT_EQ(store_->get("written.bin"), bytes);
}

TEST_P(ObjectStoreSemantics, ASmallOrEmptyWrittenObjectIsWhole) {
  auto small = store_->write("small.jsonl");
  small->append("{\"a\":1}\n");
  small->append("{\"b\":2}\n");
  small->finish();
  EXPECT_EQ(store_->get("small.jsonl"), "{\"a\":1}\n{\"b\":2}\n");
  auto empty = store_->write("empty-written.jsonl");
  empty->finish();
  EXPECT_EQ(store_->get("empty-written.jsonl"), "");
}

TEST_P(ObjectStoreSemantics, AWriterDroppedBeforeFinishLeavesNoObject) {
  {
    auto out = store_->write("dropped.bin");
    out->append(std::string(9 << 20, 'x'));  // past one S3 part: a multipart upload was begun
  }
  EXPECT_THROW((void)store_->get("dropped.bin"), ports::ObjectStoreError);
  store_->put("kept.bin", "kept");
  {
    auto out = store_->write("kept.bin");
    out->append("replacement");
  }
  EXPECT_EQ(store_->get("kept.bin"), "kept");
}

TEST_P(ObjectStoreSemantics, ARemovedObjectIsGone) {
  store_->put("to/remove.jsonl", "bytes");
  EXPECT_TRUE(store_->remove("to/remove.jsonl"));
  EXPECT_THROW((void)store_->get("to/remove.jsonl"), ports::ObjectStoreError);
  store_->put("to/remove.jsonl", "again");  // the key can be written again
  EXPECT_EQ(store_->get("to/remove.jsonl"), "again");
  EXPECT_THROW((void)store_->remove("../up.jsonl"), std::invalid_argument);
}

TEST_P(ObjectStoreSemantics, ASecondStoreOnTheSameSpaceSeesTheObjects) {
  store_->put("shared.csv", "v1");
  auto again = GetParam().open(dir_, space_);
  EXPECT_EQ(again->get("shared.csv"), "v1");
  again->put("shared.csv", "v2");
  EXPECT_EQ(store_->get("shared.csv"), "v2");
}

TEST_P(ObjectStoreSemantics, AnotherSpaceDoesNotSeeTheObjects) {
  store_->put("mine.csv", "here");
  auto other = GetParam().open(dir_, fresh_space());
  EXPECT_THROW((void)other->get("mine.csv"), ports::ObjectStoreError);
}

// Writers replace one object with whole versions while readers read it: every read is one whole
// version (all bytes alike, full length), never a mix or a prefix.
TEST_P(ObjectStoreSemantics, ConcurrentReadersSeeWholeVersions) {
  constexpr std::size_t kSize = 256 * 1024;
  store_->put("hot.csv", std::string(kSize, 'a'));
  std::atomic<int> bad{0};
  std::atomic<int> reads{0};
  std::atomic<std::size_t> bad_size{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < 2; ++w)
    threads.emplace_back([&, w] {
      for (int i = 0; i < 8; ++i) store_->put("hot.csv", std::string(kSize, static_cast<char>('a' + (w * 8 + i) % 26)));
    });
  for (int r = 0; r < 2; ++r)
    threads.emplace_back([&] {
      for (int i = 0; i < 8; ++i) {
        const std::string got = store_->get("hot.csv");
        ++reads;
        if (got.size() != kSize || got.find_first_not_of(got.front()) != std::string::npos) {
          ++bad;
          bad_size = got.size();
        }
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(reads.load(), 16);
  EXPECT_EQ(bad.load(), 0) << "a torn read had " << bad_size.load() << " bytes of " << kSize;
}

}  // namespace overhead::pipe::contract
