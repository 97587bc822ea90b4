// The key store contract: what every KeyStore backend keeps (ports/key_store.hpp), as one
// parametrised GoogleTest suite, KeyStoreTest. A backend's test binary includes this header once
// and instantiates the suite with its KeyStoreBackend:
//
//   #include "key_store_contract.hpp"
//   INSTANTIATE_TEST_SUITE_P(Postgres, KeyStoreTest,
//       ::testing::Values(overhead::pipe::contract::KeyStoreBackend{"postgres", url, table_text, unreachable}),
//       overhead::pipe::contract::KeyStoreBackendName{});
//
// (link the CMake target overhead_contract_tests). The suite opens the key store and the record
// store of one URL (backends::open_key_store, open_store) and writes records through the latter,
// as a gateway's workers do, to check what usage() and spend_by_key() sum.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <functional>
#include <ostream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "backends/open.hpp"
#include "ports/errors.hpp"
#include "ports/key_secret.hpp"
#include "ports/key_store.hpp"
#include "test_util.hpp"

namespace overhead::pipe::contract {

struct KeyStoreBackend {
  std::string name;  // shown in the test names
  // The URL of the store called `name` (a fresh name = no keys, no records); `dir` is a
  // temporary folder for backends that keep files.
  std::function<std::string(const std::filesystem::path& dir, const std::string& name)> url;
  // Everything the key store of `url` holds, as text, read past the adapter (the file's bytes,
  // the table's rows): where a secret must not be.
  std::function<std::string(const std::string& url)> table_text;
  // A URL of this backend whose server cannot be reached, or "" when it has no server (sqlite).
  std::function<std::string()> unreachable_url;
};

// The backend's name where GoogleTest prints a parameter.
inline void PrintTo(const KeyStoreBackend& b, std::ostream* os) { *os << b.name; }

struct KeyStoreBackendName {
  std::string operator()(const ::testing::TestParamInfo<KeyStoreBackend>& info) const { return info.param.name; }
};

inline ports::ApiKey make_key(const std::string& name, const std::string& secret = ports::new_key_secret()) {
  ports::ApiKey k;
  k.name = name;
  k.secret_hash = ports::key_secret_hash(secret);
  k.rpm = 60;
  k.tpm = 100000;
  k.budget_usd = 12.5;
  k.models = {"llama-3.3-70b-instruct", "a \"quoted\", odd name é"};
  k.created_unix = 1796601600;  // 2026-12-07T00:00:00Z
  k.expires_unix = 1798761600;  // 2027-01-01T00:00:00Z
  return k;
}

class KeyStoreTest : public ::testing::TestWithParam<KeyStoreBackend> {
 protected:
  void SetUp() override {
    dir_ = testing::temp_dir("key-store");
    url_ = GetParam().url(dir_, "keys_" + std::to_string(std::random_device{}()));
    keys_ = backends::open_key_store(url_);
  }
  void TearDown() override {
    keys_.reset();
    std::filesystem::remove_all(dir_);
  }
  std::filesystem::path dir_;
  std::string url_;
  std::unique_ptr<ports::KeyStore> keys_;
};

TEST_P(KeyStoreTest, CreatedKeysAreListedByNameWithEveryField) {
  ports::ApiKey b = make_key("bob");
  b.budget_usd.reset();
  b.models.clear();
  b.rpm = 0;
  b.expires_unix = 0;
  const ports::ApiKey a = make_key("alice");
  keys_->create(b);
  keys_->create(a);
  const auto listed = keys_->list();
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0].name, "alice");  // sorted by name, not by creation
  EXPECT_EQ(listed[1].name, "bob");
  for (const auto& [got, want] : {std::pair{listed[0], a}, std::pair{listed[1], b}}) {
    EXPECT_EQ(got.secret_hash, want.secret_hash) << want.name;
    EXPECT_EQ(got.rpm, want.rpm) << want.name;
    EXPECT_EQ(got.tpm, want.tpm) << want.name;
    EXPECT_EQ(got.budget_usd, want.budget_usd) << want.name;
    EXPECT_EQ(got.models, want.models) << want.name;
    EXPECT_EQ(got.created_unix, want.created_unix) << want.name;
    EXPECT_EQ(got.expires_unix, want.expires_unix) << want.name;
    EXPECT_EQ(got.revoked_unix, 0) << want.name;
  }
  // Another opener (another gateway) sees the same keys.
  EXPECT_EQ(backends::open_key_store(url_)->list().size(), 2u);
}

TEST_P(KeyStoreTest, RevokingSetsTheTimeOnceAndKeepsTheKeyListed) {
  keys_->create(make_key("k"));
  EXPECT_TRUE(keys_->revoke("k", 1796605200));
  EXPECT_FALSE(keys_->revoke("k", 1796608800));  // already revoked: the first time stays
  EXPECT_FALSE(keys_->revoke("no-such-key", 1796605200));
  const auto listed = keys_->list();
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].revoked_unix, 1796605200);
  EXPECT_EQ(listed[0].budget_usd, 12.5);
}

TEST_P(KeyStoreTest, ADuplicateNameIsRefusedAndTheFirstKeyStays) {
  const ports::ApiKey first = make_key("dup");
  keys_->create(first);
  try {
    keys_->create(make_key("dup"));
    FAIL() << "a second key named dup was stored";
  } catch (const ports::KeyExistsError& e) {
    EXPECT_NE(std::string(e.what()).find("\"dup\""), std::string::npos) << e.what();
  }
  const auto listed = keys_->list();
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].secret_hash, first.secret_hash);
}

// Two gateways (two stores opened on one URL) creating the same names at once: for each name
// exactly one create succeeds, and the key stored is the winner's.
TEST_P(KeyStoreTest, TwoCreatorsRacingForANameExactlyOneWins) {
  auto other = backends::open_key_store(url_);
  constexpr int kNames = 8;
  std::vector<ports::ApiKey> mine, theirs;
  for (int i = 0; i < kNames; ++i) {
    mine.push_back(make_key("race-" + std::to_string(i)));
    theirs.push_back(make_key("race-" + std::to_string(i)));
  }
  std::vector<int> won_mine(kNames, 0), won_theirs(kNames, 0);
  std::atomic<int> errors{0};
  const auto creator = [&](ports::KeyStore& store, const std::vector<ports::ApiKey>& keys, std::vector<int>& won) {
    for (int i = 0; i < kNames; ++i) {
      try {
        store.create(keys[i]);
        won[i] = 1;
      } catch (const ports::KeyExistsError&) {
      } catch (const std::exception&) {
        ++errors;
      }
    }
  };
  std::thread a(creator, std::ref(*keys_), std::cref(mine), std::ref(won_mine));
  std::thread b(creator, std::ref(*other), std::cref(theirs), std::ref(won_theirs));
  a.join();
  b.join();
  EXPECT_EQ(errors.load(), 0);
  const auto listed = keys_->list();
  ASSERT_EQ(listed.size(), static_cast<std::size_t>(kNames));
  for (int i = 0; i < kNames; ++i) {
    EXPECT_EQ(won_mine[i] + won_theirs[i], 1) << "race-" << i;
    EXPECT_EQ(listed[i].secret_hash, won_mine[i] ? mine[i].secret_hash : theirs[i].secret_hash) << "race-" << i;
  }
}

TEST_P(KeyStoreTest, TheSecretIsNeverStoredOnlyItsHash) {
  const std::string secret = ports::new_key_secret();
  keys_->create(make_key("hashed", secret));
  const std::string text = GetParam().table_text(url_);
  EXPECT_NE(text.find(ports::key_secret_hash(secret)), std::string::npos) << "the table text read is not the keys table";
  EXPECT_EQ(text.find(secret), std::string::npos) << "the secret is stored";
  EXPECT_EQ(text.find(secret.substr(ports::kKeySecretPrefix.size())), std::string::npos) << "the secret is stored";
}

TEST_P(KeyStoreTest, AKeyWithoutRecordsHasZeroUsageAndNoSpend) {
  keys_->create(make_key("idle"));
  const ports::KeyUsage u = keys_->usage("idle", "");
  EXPECT_EQ(u.key, "idle");
  EXPECT_EQ(u.requests, 0);
  EXPECT_EQ(u.cost_usd, 0);
  EXPECT_TRUE(u.by_model.empty());
  EXPECT_TRUE(u.by_day.empty());
  EXPECT_TRUE(keys_->spend_by_key().empty());
}

// A record a gateway's worker writes for a request charged to `key` ("" = no key).
inline ports::Record keyed_record(const std::string& experiment, const std::string& id, const std::string& key,
                                  const std::string& model, const std::string& start_time, std::int64_t prompt,
                                  std::int64_t completion, double cost) {
  ports::Record r;
  r.experiment = experiment;
  r.tokenizer = "t";
  r.experiment_tokenizer = experiment + "#t";
  r.id = id;
  r.key_name = key;
  r.model = model;
  r.start_time = start_time;
  r.token_count = prompt;
  r.output_tokens = completion;
  r.cost_usd = cost;
  r.cost_e_usd = cost / 4;
  r.cost_d_usd = cost - cost / 4;
  r.price_source = "test";
  return r;
}

inline void expect_bucket(const ports::UsageBucket& b, const std::string& label, std::int64_t requests, std::int64_t prompt,
                          std::int64_t completion, double cost) {
  EXPECT_EQ(b.label, label);
  EXPECT_EQ(b.requests, requests) << label;
  EXPECT_EQ(b.prompt_tokens, prompt) << label;
  EXPECT_EQ(b.completion_tokens, completion) << label;
  EXPECT_DOUBLE_EQ(b.cost_usd, cost) << label;
}

// Usage is summed from the records written through the record store of the same URL, by model
// and by the UTC day of start_time; a replayed record counts once. The costs are sums of powers
// of two, exact in any order of addition.
TEST_P(KeyStoreTest, UsageSumsTheKeysRecordsByModelAndByUtcDay) {
  auto records = backends::open_store(url_);
  const std::vector<ports::Record> batch = {
      keyed_record("e1", "1", "alice", "llama", "2026-12-06T23:59:59.999999Z", 100, 10, 0.25),
      keyed_record("e1", "2", "alice", "llama", "2026-12-07T00:00:00.000000Z", 200, 20, 0.5),
      keyed_record("e1", "3", "alice", "phi-4", "2026-12-07T12:00:00.000000Z", 300, 30, 0.125),
      keyed_record("e2", "4", "alice", "phi-4", "2026-12-08T00:00:01.000000Z", 400, 40, 1.0),
      keyed_record("e1", "5", "bob", "llama", "2026-12-07T01:00:00.000000Z", 1000, 100, 2.0),
      keyed_record("e1", "6", "", "llama", "2026-12-07T01:00:00.000000Z", 5, 5, 8.0),
  };
  ASSERT_TRUE(records->upsert_batch(batch).empty());
  records->upsert(batch[0]);  // a replay: still one record

  const ports::KeyUsage all = keys_->usage("alice", "");
  EXPECT_EQ(all.key, "alice");
  EXPECT_EQ(all.requests, 4);
  EXPECT_EQ(all.prompt_tokens, 1000);
  EXPECT_EQ(all.completion_tokens, 100);
  EXPECT_DOUBLE_EQ(all.cost_usd, 1.875);
  ASSERT_EQ(all.by_model.size(), 2u);
  expect_bucket(all.by_model[0], "llama", 2, 300, 30, 0.75);
  expect_bucket(all.by_model[1], "phi-4", 2, 700, 70, 1.125);
  ASSERT_EQ(all.by_day.size(), 3u);
  expect_bucket(all.by_day[0], "2026-12-06", 1, 100, 10, 0.25);
  expect_bucket(all.by_day[1], "2026-12-07", 2, 500, 50, 0.625);
  expect_bucket(all.by_day[2], "2026-12-08", 1, 400, 40, 1.0);

  const ports::KeyUsage e2 = keys_->usage("alice", "e2");
  EXPECT_EQ(e2.requests, 1);
  EXPECT_DOUBLE_EQ(e2.cost_usd, 1.0);
  ASSERT_EQ(e2.by_model.size(), 1u);
  expect_bucket(e2.by_model[0], "phi-4", 1, 400, 40, 1.0);

  const auto spend = keys_->spend_by_key();
  EXPECT_EQ(spend.size(), 2u);  // the record without a key is nobody's
  EXPECT_DOUBLE_EQ(spend.at("alice"), 1.875);
  EXPECT_DOUBLE_EQ(spend.at("bob"), 2.0);
  EXPECT_EQ(keys_->usage("carol", "").requests, 0);
}

TEST_P(KeyStoreTest, AnUnreachableServerIsATransientStoreError) {
  const std::string url = GetParam().unreachable_url ? GetParam().unreachable_url() : "";
  if (url.empty()) GTEST_SKIP() << "no server to be unreachable";
  try {
    (void)backends::open_key_store(url);
    FAIL() << "opening an unreachable key store succeeded";
  } catch (const ports::StoreError& e) {
    EXPECT_EQ(e.failure(), ports::Failure::transient) << e.what();
  }
}

}  // namespace overhead::pipe::contract
