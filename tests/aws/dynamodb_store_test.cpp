// The store contract (contract/store_contract.hpp) against dynalite 4 through the dynamodb://
// adapter, and what is particular to it: the missing-table error and create=1, the key schema
// check, batches over 25 and repeated keys, the 400 KB item limit, the Query path (tokenizers=),
// and the seed's own items (10 fields) read back.
//
// The emulator is the CTest fixture `aws_emulators` (scripts/services/aws_emulators.sh); its env
// file is named by OVERHEAD_AWS_ENV and read when a test first needs it.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <random>
#include <stdexcept>
#include <string>

#include "backends/open.hpp"
#include "ports/errors.hpp"
#include "ports/record_fields.hpp"
#include "store_contract.hpp"
#include "service_env.hpp"

namespace overhead::backends {
namespace {

std::string aws_env(const std::string& key) { return test_services::service_env("OVERHEAD_AWS_ENV", key); }

std::string fresh_table() { return test_services::unique_name("records-"); }

std::string ddb_url(const std::string& table, const std::string& params = "create=1") {
  return "dynamodb://" + table + "?region=" + aws_env("AWS_EMULATOR_REGION") +
         "&endpoint=" + aws_env("AWS_DYNAMODB_ENDPOINT") + (params.empty() ? "" : "&" + params);
}

using pipe::contract::make_record;

TEST(DynamoDbStore, AMissingTableIsPermanentAndSaysHowToCreateIt) {
  const std::string table = fresh_table();
  try {
    (void)open_store(ddb_url(table, ""));
    FAIL() << "opening a missing table succeeded";
  } catch (const ports::StoreError& e) {
    const std::string m = e.what();
    EXPECT_EQ(e.failure(), ports::Failure::permanent) << m;
    EXPECT_NE(m.find("\"" + table + "\" does not exist"), std::string::npos) << m;
    EXPECT_NE(m.find("create=1"), std::string::npos) << m;
    EXPECT_NE(m.find("aws dynamodb create-table --table-name " + table), std::string::npos) << m;
    EXPECT_EQ(m.find("test-secret-not-real"), std::string::npos) << m;
  }
  // Asked to, the store creates it; a second opener finds it.
  open_store(ddb_url(table))->upsert(make_record("e", "t", "1", 1));
  EXPECT_EQ(ports::scan_in_key_order(*open_store(ddb_url(table, "")), "e").size(), 1u);
}

TEST(DynamoDbStore, BatchesOverTwentyFiveAndRepeatedKeysAreStoredAsIfInOrder) {
  const auto store = open_store(ddb_url(fresh_table()));
  std::vector<ports::Record> batch;
  for (int i = 0; i < 60; ++i) batch.push_back(make_record("e", "t", std::to_string(i), i));
  batch[3].publish_acked = 100;
  auto replay = make_record("e", "t", "3", 33);  // same key later in the batch, no stamps
  batch.push_back(replay);
  EXPECT_TRUE(store->upsert_batch(batch).empty());
  const auto rows = ports::scan_in_key_order(*store, "e");
  ASSERT_EQ(rows.size(), 60u);
  const auto three = std::find_if(rows.begin(), rows.end(), [](const auto& r) { return r.id == "3"; });
  ASSERT_NE(three, rows.end());
  EXPECT_EQ(three->token_count, 33);
  EXPECT_EQ(three->publish_acked, 100);
}

TEST(DynamoDbStore, AReplayedBatchKeepsStampsPatchedInEvenWhenMixedWithNewRecords) {
  const auto store = open_store(ddb_url(fresh_table()));
  std::vector<ports::Record> first;
  for (int i = 0; i < 5; ++i) first.push_back(make_record("e", "t", std::to_string(i), i));
  EXPECT_TRUE(store->upsert_batch(first).empty());
  const ports::StampPatch patches[] = {{"e#t", "1", 11, 12}, {"e#t", "3", 31, 0}};
  EXPECT_EQ(store->update_stamps(patches), 2u);
  std::vector<ports::Record> again = first;  // a redelivered batch, plus records not seen before
  again[1].api_input.reset();               // an optional that disappears is removed
  for (int i = 5; i < 30; ++i) again.push_back(make_record("e", "t", std::to_string(i), i));
  EXPECT_TRUE(store->upsert_batch(again).empty());
  const auto rows = ports::scan_in_key_order(*store, "e");
  ASSERT_EQ(rows.size(), 30u);
  for (const auto& r : rows) {
    if (r.id == "1") {
      EXPECT_EQ(r.publish_acked, 11);
      EXPECT_EQ(r.input_deleted, 12);
      EXPECT_FALSE(r.api_input.has_value());
    } else if (r.id == "3") {
      EXPECT_EQ(r.publish_acked, 31);
      EXPECT_EQ(r.input_deleted, 0);
    } else {
      EXPECT_EQ(r.publish_acked, 0) << r.id;
    }
  }
}

TEST(DynamoDbStore, ARecordOverTheItemLimitOrWithAnEmptyKeyFailsAloneAndTheRestIsStored) {
  const auto store = open_store(ddb_url(fresh_table()));
  std::vector<ports::Record> batch = {make_record("e", "t", "small", 1), make_record("e", "t", "big", 2),
                                     make_record("e", "t", "small2", 3), make_record("e", "t", "", 4)};
  batch[1].model.assign(401 * 1024, 'x');
  const auto failures = store->upsert_batch(batch);
  ASSERT_EQ(failures.size(), 2u);
  EXPECT_EQ(failures[0].index, 1u);
  EXPECT_FALSE(failures[0].failure.retryable);
  EXPECT_NE(failures[0].failure.message.find("400 KB"), std::string::npos) << failures[0].failure.message;
  EXPECT_EQ(failures[1].index, 3u);
  EXPECT_FALSE(failures[1].failure.retryable);
  EXPECT_NE(failures[1].failure.message.find("empty"), std::string::npos) << failures[1].failure.message;
  EXPECT_EQ(ports::scan_in_key_order(*store, "e").size(), 2u);
  try {
    store->upsert(batch[1]);
    ADD_FAILURE() << "an oversized upsert succeeded";
  } catch (const ports::StoreError& e) {
    EXPECT_EQ(e.failure(), ports::Failure::permanent);
  }
}

TEST(DynamoDbStore, TokenizersParameterScansAnExperimentByQueryingItsPartitions) {
  const std::string table = fresh_table();
  const auto store = open_store(ddb_url(table));
  for (int i = 0; i < 8; ++i) {
    store->upsert(make_record("x", "meta-llama/Llama-3.3-70B-Instruct", std::to_string(i), i));
    store->upsert(make_record("x", "microsoft/phi-4", std::to_string(i), i));
    store->upsert(make_record("y", "microsoft/phi-4", std::to_string(i), i));
  }
  const auto queried = open_store(ddb_url(table, "tokenizers=microsoft/phi-4,meta-llama/Llama-3.3-70B-Instruct"));
  EXPECT_EQ(ports::scan_in_key_order(*queried, "x").size(), 16u);
  EXPECT_EQ(ports::scan_in_key_order(*queried, "y").size(), 8u);
  EXPECT_EQ(ports::scan_in_key_order(*queried, "").size(), 24u);  // all experiments: a Scan
  const auto one = open_store(ddb_url(table, "tokenizers=microsoft/phi-4"));
  EXPECT_EQ(ports::scan_in_key_order(*one, "x").size(), 8u);  // only the partitions it was given
}

// Runs the AWS SDK client script (tests/aws/dynamodb_sdk_client.js) and returns its stdout.
std::string sdk(const std::string& args) {
  const char* modules = std::getenv("OVERHEAD_AWS_NODE_MODULES");
  if (!modules || !*modules) throw std::runtime_error("OVERHEAD_AWS_NODE_MODULES must name the installed npm tools");
  const std::string cmd = std::string("NODE_NO_WARNINGS=1 NODE_PATH='") + modules + "' node '" + OVERHEAD_SOURCE_DIR +
                          "/tests/aws/dynamodb_sdk_client.js' " + args;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) throw std::runtime_error("cannot run node");
  std::string out;
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int status = pclose(p);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) throw std::runtime_error("failed: " + cmd);
  return out;
}

std::string sdk_target(const std::string& table) {
  return aws_env("AWS_DYNAMODB_ENDPOINT") + " " + aws_env("AWS_EMULATOR_REGION") + " " + table;
}

// Every field a distinct value, numbers past 2^53 (N is text on the wire, never a double).
ports::Record full_record(const std::string& id) {
  ports::Record r = make_record("sdk", "microsoft/phi-4", id, 9007199254740993);
  std::int64_t n = 1000000000000000000;
  for (const auto& f : ports::kRecordFields) {
    if (f.key || f.name == "experiment" || f.name == "tokenizer" || f.name == "token_count") continue;
    if (f.type == ports::FieldType::text) f.set(r, std::string_view(std::string(f.name) + " é\"\n"));
    else if (f.type == ports::FieldType::boolean) f.set(r, std::int64_t(1));
    else if (f.type == ports::FieldType::real) f.set(r, static_cast<double>(++n % 1000) / 7e7);  // a price's size
    else f.set(r, ++n);
  }
  return r;
}

TEST(DynamoDbStore, TheAwsSdkReadsWhatWeWroteWithTheSeedsNamesAndExactTypes) {
  const std::string table = fresh_table();
  const auto store = open_store(ddb_url(table));
  ports::Record batched = full_record("batched");
  batched.api_output.reset();  // absent usage: no attribute at all
  ports::Record single = full_record("single");
  single.batch_boundary = false;
  single.publish_acked = 0;
  single.input_deleted = 0;
  std::vector<ports::Record> batch = {batched};
  for (int i = 0; i < 4; ++i) batch.push_back(make_record("sdk", "microsoft/phi-4", "more" + std::to_string(i), i));
  EXPECT_TRUE(store->upsert_batch(batch).empty());
  store->upsert(single);  // PutItem
  const ports::StampPatch patch[] = {{single.experiment_tokenizer, single.id, 41, 42}};
  EXPECT_EQ(store->update_stamps(patch), 1u);
  single.publish_acked = 41;
  single.input_deleted = 42;

  std::map<std::string, nlohmann::json> items;
  std::istringstream lines(sdk("dump " + sdk_target(table) + " 'sdk#microsoft/phi-4'"));
  for (std::string line; std::getline(lines, line);) {
    const auto item = nlohmann::json::parse(line);
    items[item.at("id").at("S").get<std::string>()] = item;
  }
  ASSERT_EQ(items.size(), 6u);  // through three pages of two
  for (const ports::Record* r : {&batched, &single}) {
    const nlohmann::json& item = items.at(r->id);
    std::size_t present = 0;
    for (const auto& f : ports::kRecordFields) {
      const ports::FieldValue v = f.get(*r);
      const std::string name(f.name);
      if (std::holds_alternative<std::monostate>(v)) {
        EXPECT_FALSE(item.contains(name)) << r->id << " " << name;
        continue;
      }
      ++present;
      nlohmann::json want;
      if (const auto* s = std::get_if<std::string_view>(&v)) want = {{"S", std::string(*s)}};
      else if (f.type == ports::FieldType::boolean) want = {{"BOOL", std::get<std::int64_t>(v) != 0}};
      else if (const auto* d = std::get_if<double>(&v)) {
        // DynamoDB writes a number back in its own notation: the same value, read as a double.
        const auto got = item.value(name, nlohmann::json());
        ASSERT_TRUE(got.contains("N")) << r->id << " " << name << ": " << got.dump();
        EXPECT_EQ(std::stod(got["N"].get<std::string>()), *d) << r->id << " " << name << ": " << got.dump();
        continue;
      } else want = {{"N", std::to_string(std::get<std::int64_t>(v))}};
      EXPECT_EQ(item.value(name, nlohmann::json()), want) << r->id << " " << name;
    }
    EXPECT_EQ(item.size(), present) << r->id << ": attributes besides the record's fields: " << item.dump();
  }
}

TEST(DynamoDbStore, WeReadWhatTheAwsSdkWroteIncludingTheSeedsOwnItems) {
  const std::string table = fresh_table();
  const auto store = open_store(ddb_url(table));
  (void)sdk("put " + sdk_target(table));
  const auto seed = ports::scan_in_key_order(*store, "sqs_10");
  ASSERT_EQ(seed.size(), 1u);
  const ports::Record& s = seed[0];
  EXPECT_EQ(s.experiment_tokenizer, "sqs_10#microsoft/phi-4");
  EXPECT_EQ(s.id, "q-81");
  EXPECT_EQ(s.model, "gpt-4");
  EXPECT_EQ(s.start_time, "2025-02-01T10:00:00.000001+00:00");
  EXPECT_EQ(s.end_time, "2025-02-01T10:00:00.004321+00:00");
  EXPECT_EQ(s.token_count, 118);
  EXPECT_EQ(s.api_input, 103);
  EXPECT_EQ(s.api_output, 420);
  EXPECT_EQ(s.tokenizer, "microsoft/phi-4");
  EXPECT_EQ(s.case_number, 0);  // fields the seed never wrote read as empty
  EXPECT_EQ(s.worker, "");
  EXPECT_EQ(s.publish_acked, 0);

  const auto full = ports::scan_in_key_order(*store, "sdk");
  ASSERT_EQ(full.size(), 1u);
  const ports::Record& f = full[0];
  EXPECT_EQ(f.experiment_tokenizer, "sdk#google/gemma-2-27b-it");
  EXPECT_EQ(f.id, "full é");
  EXPECT_EQ(f.model, "model \"q\"\n");
  EXPECT_EQ(f.token_count, 9007199254740993);
  EXPECT_EQ(f.api_input, -7);
  EXPECT_FALSE(f.api_output.has_value());
  EXPECT_EQ(f.case_number, 5);
  EXPECT_EQ(f.worker, "こんにちは");
  EXPECT_EQ(f.seq, 3);
  EXPECT_EQ(f.batch, 1);
  EXPECT_TRUE(f.batch_boundary);
  EXPECT_EQ(f.received, 1000000000000000001);
  EXPECT_EQ(f.encode_end, 1000000000000000004);
  EXPECT_EQ(f.publish_acked, 1000000000000000006);
  EXPECT_EQ(f.input_deleted, 1000000000000000007);
  EXPECT_EQ(f.prompt_bytes, 36);
  // The seed's table read by partition, as analyze does with tokenizers=.
  const auto by_query = open_store(ddb_url(table, "tokenizers=microsoft/phi-4"));
  EXPECT_EQ(ports::scan_in_key_order(*by_query, "sqs_10").size(), 1u);
}

// Runs `overhead analyze` on a store URL; returns the exit code and fills `out` with its output.
int analyze(const std::string& url, const std::string& dir, std::string& out, const std::string& args = "") {
  const std::string cmd =
      std::string(OVERHEAD_BINARY) + " analyze --no-png --store '" + url + "' --out '" + dir + "' " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) throw std::runtime_error("cannot run overhead");
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(DynamoDbStore, AnalyzeReadsAnExperimentByQueryAndNamesAMissingTableInOneLine) {
  const std::string table = fresh_table();
  const auto store = open_store(ddb_url(table));
  std::vector<ports::Record> batch;
  for (int i = 0; i < 20; ++i) {
    auto r = make_record("an", i % 2 ? "phi-4" : "gemma-2-27b-it", std::to_string(i), 100 + 7 * i);
    r.worker = "w0";
    r.seq = i;
    r.received = 1000000 + 100000 * static_cast<std::int64_t>(i);
    r.render_start = r.received + 1000;
    r.render_end = r.render_start + 10000;
    r.encode_end = r.render_end + 300 * r.token_count;
    r.publish_start = r.encode_end + 100;
    r.publish_acked = r.publish_start + 2000;
    batch.push_back(r);
  }
  EXPECT_TRUE(store->upsert_batch(batch).empty());
  const std::string dir = ::testing::TempDir() + "ddb-analyze-" + std::to_string(getpid());
  std::string out;
  EXPECT_EQ(analyze(ddb_url(table, "tokenizers=phi-4,gemma-2-27b-it"), dir, out, "--experiment an"), 0) << out;
  EXPECT_EQ(out.find("too few observations"), std::string::npos) << out;  // all 20 read, 10 per partition
  EXPECT_TRUE(std::filesystem::exists(dir + "/report.md")) << out;
  std::filesystem::remove_all(dir);

  std::string missing;
  EXPECT_EQ(analyze(ddb_url(fresh_table(), ""), dir, missing), 1) << missing;
  EXPECT_EQ(missing.find('\n'), missing.size() - 1) << missing;  // one line
  EXPECT_NE(missing.find("does not exist"), std::string::npos) << missing;
  EXPECT_EQ(missing.find("test-secret-not-real"), std::string::npos) << missing;
}

TEST(DynamoDbStore, BadUrlsAndUnknownParametersAreRejectedBeforeAnyCall) {
  EXPECT_THROW((void)open_store("dynamodb://"), std::invalid_argument);
  EXPECT_THROW((void)open_store("dynamodb://ab?region=us-east-1"), std::invalid_argument);  // too short a name
  EXPECT_THROW((void)open_store("dynamodb://tab/le?region=us-east-1"), std::invalid_argument);
  EXPECT_THROW((void)open_store(ddb_url("records", "tabel=x")), std::invalid_argument);
  EXPECT_THROW((void)open_store(ddb_url("records", "create=2")), std::invalid_argument);
  EXPECT_THROW((void)open_store("dynamodb://records?region=us-east-1&endpoint=ftp://h"), std::invalid_argument);
}

TEST(DynamoDbStore, AnUnreachableEndpointIsTransient) {
  try {
    (void)open_store("dynamodb://records?region=us-east-1&endpoint=http://127.0.0.1:1&timeout_ms=500");
    FAIL() << "opening succeeded";
  } catch (const ports::StoreError& e) {
    EXPECT_EQ(e.failure(), ports::Failure::transient) << e.what();
    EXPECT_EQ(std::string(e.what()).find("test-secret-not-real"), std::string::npos);
  }
}

}  // namespace
}  // namespace overhead::backends

namespace overhead::pipe::contract {
INSTANTIATE_TEST_SUITE_P(DynamoDb, StoreTest,
                         ::testing::Values(url_store_backend("dynamodb",
                                                             [](const std::string& name) {
                                                               return backends::ddb_url("contract-" + name);
                                                             })),
                         StoreBackendName{});
}  // namespace overhead::pipe::contract
