// The batch store contract: what every BatchStore backend keeps (ports/batch_store.hpp), as one
// parametrised GoogleTest suite, BatchStoreSemantics. A backend's test binary includes this header
// once and instantiates the suite with its BatchStoreBackend (see batch_store_contract_test.cpp).
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "ports/batch_store.hpp"
#include "test_util.hpp"

namespace overhead::pipe::contract {

struct BatchStoreBackend {
  std::string name;
  // A store over a fresh space; `dir` is a temporary folder for backends that keep files. The
  // same `dir` opened again gives the same documents.
  std::function<std::unique_ptr<ports::BatchStore>(const std::filesystem::path& dir)> open;
};

struct BatchStoreBackendName {
  std::string operator()(const ::testing::TestParamInfo<BatchStoreBackend>& info) const { return info.param.name; }
};

class BatchStoreSemantics : public ::testing::TestWithParam<BatchStoreBackend> {
 protected:
  void SetUp() override {
    dir_ = testing::temp_dir("batches");
    store_ = GetParam().open(dir_);
  }
  void TearDown() override {
    store_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::filesystem::path dir_;
  std::unique_ptr<ports::BatchStore> store_;
};

using ports::BatchDocument;
using ports::BatchKind;

TEST_P(BatchStoreSemantics, PutReplacesWholeAndGetReadsBack) {
  store_->put(BatchKind::batch, {"batch_a", 10, true, R"({"v":1})"});
  store_->put(BatchKind::batch, {"batch_a", 10, false, R"({"v":2})"});
  const auto got = store_->get(BatchKind::batch, "batch_a");
  ASSERT_TRUE(got);
  EXPECT_EQ(got->body, R"({"v":2})");
  EXPECT_FALSE(got->open);
  EXPECT_EQ(got->created_at, 10);
  EXPECT_FALSE(store_->get(BatchKind::batch, "batch_b"));
  EXPECT_FALSE(store_->get(BatchKind::file, "batch_a")) << "kinds are apart";
}

TEST_P(BatchStoreSemantics, RemoveSaysWhetherThereWasOne) {
  store_->put(BatchKind::file, {"file-a", 1, false, "{}"});
  EXPECT_TRUE(store_->remove(BatchKind::file, "file-a"));
  EXPECT_FALSE(store_->remove(BatchKind::file, "file-a"));
  EXPECT_FALSE(store_->get(BatchKind::file, "file-a"));
}

TEST_P(BatchStoreSemantics, ListIsNewestFirstAndPagesAfterAnId) {
  // Two share a second: the id orders them.
  for (const auto& [id, at] : std::vector<std::pair<std::string, std::int64_t>>{{"b1", 100}, {"b2", 200}, {"b3", 200}, {"b4", 300}})
    store_->put(BatchKind::batch, {id, at, false, "{}"});
  const auto ids = [](const std::vector<BatchDocument>& docs) {
    std::vector<std::string> out;
    for (const auto& d : docs) out.push_back(d.id);
    return out;
  };
  EXPECT_EQ(ids(store_->list(BatchKind::batch, "", 10)), (std::vector<std::string>{"b4", "b3", "b2", "b1"}));
  EXPECT_EQ(ids(store_->list(BatchKind::batch, "", 2)), (std::vector<std::string>{"b4", "b3"}));
  EXPECT_EQ(ids(store_->list(BatchKind::batch, "b3", 2)), (std::vector<std::string>{"b2", "b1"}));
  EXPECT_TRUE(store_->list(BatchKind::batch, "b1", 2).empty());
  EXPECT_EQ(ids(store_->list(BatchKind::batch, "unknown", 1)), (std::vector<std::string>{"b4"})) << "an unknown after lists from the start";
}

TEST_P(BatchStoreSemantics, OpenListsOnlyOpenBatches) {
  store_->put(BatchKind::batch, {"b1", 1, true, "{}"});
  store_->put(BatchKind::batch, {"b2", 2, false, "{}"});
  store_->put(BatchKind::file, {"f1", 3, true, "{}"});
  const auto open = store_->open_batches();
  ASSERT_EQ(open.size(), 1u);
  EXPECT_EQ(open[0].id, "b1");
}

TEST_P(BatchStoreSemantics, DocumentsOutliveTheConnection) {
  store_->put(BatchKind::batch, {"b1", 1, true, R"({"x":"y"})"});
  store_.reset();
  auto again = GetParam().open(dir_);
  const auto got = again->get(BatchKind::batch, "b1");
  ASSERT_TRUE(got);
  EXPECT_EQ(got->body, R"({"x":"y"})");
}

TEST_P(BatchStoreSemantics, ConcurrentPutsFromThreads) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) store_->put(BatchKind::batch, {"b" + std::to_string(t) + "-" + std::to_string(i), i, true, "{}"});
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(store_->open_batches().size(), 100u);
}

}  // namespace overhead::pipe::contract
