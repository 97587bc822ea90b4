// The object store contract (contract/object_store_contract.hpp) against the s3rver emulator
// through the s3:// adapter, and the cross-check with an independent client: the official AWS SDK
// for JavaScript (@aws-sdk/client-s3, tests/aws/s3_sdk_client.mjs) reads byte for byte what the
// adapter wrote, and the adapter reads what the SDK wrote.
//
// The emulator is the CTest fixture `aws_emulators` (scripts/services/aws_emulators.sh); its env
// file is named by OVERHEAD_AWS_ENV. s3rver accepts only the access key id S3RVER.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>
#include <atomic>

#include "backends/open.hpp"
#include "object_store_contract.hpp"
#include "service_env.hpp"
#include "ports/errors.hpp"

namespace overhead::backends {
namespace {

std::string aws_env(const std::string& key) { return test_services::service_env("OVERHEAD_AWS_ENV", key); }

std::string endpoint() { return aws_env("AWS_S3_ENDPOINT"); }
std::string bucket() { return aws_env("AWS_S3_BUCKET"); }

std::string s3_url(const std::string& bucket_name, const std::string& prefix) {
  return "s3://" + bucket_name + "/" + prefix + "?region=" + aws_env("AWS_EMULATOR_REGION") + "&endpoint=" + endpoint();
}

pipe::contract::ObjectStoreBackend s3_backend() {
  auto backend = pipe::contract::url_object_store_backend(
      "s3", [](const std::filesystem::path&, const std::string& space) { return s3_url(bucket(), space); });
  // What s3rver 3.7.1 gets wrong (its filesystem store, lib/stores/filesystem.js).
  backend.server_gaps = {
      {"ConcurrentReadersSeeWholeVersions",
       "s3rver 3.7.1 streams a PutObject into the object's file in place, so a GetObject during the write reads a "
       "prefix; S3 itself replaces objects atomically"},
      {"ARangeReadOfAnEmptyObjectIsEmpty",
       "s3rver 3.7.1 answers a Range GET of an empty object 206 with Content-Length 1 and no body, so the "
       "connection waits for a byte that never comes; S3 answers it 416 InvalidRange (read as empty here)"},
  };
  return backend;
}

}  // namespace
}  // namespace overhead::backends

namespace overhead::pipe::contract {
INSTANTIATE_TEST_SUITE_P(S3, ObjectStoreSemantics, ::testing::Values(backends::s3_backend()), ObjectStoreBackendName{});
}  // namespace overhead::pipe::contract

namespace overhead::backends {
namespace {

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Runs the SDK client: `op` put|get of BUCKET/KEY with FILE. Returns node's exit status.
int sdk(const std::string& op, const std::string& key, const std::filesystem::path& file) {
  const char* modules = std::getenv("OVERHEAD_AWS_NODE_MODULES");
  if (!modules) throw std::runtime_error("OVERHEAD_AWS_NODE_MODULES is not set (run through ctest)");
  const std::string cmd = std::string("NODE_NO_WARNINGS=1 AWS_REGION='") + aws_env("AWS_EMULATOR_REGION") + "' node '" +
                          OVERHEAD_SOURCE_DIR + "/tests/aws/s3_sdk_client.mjs' " + op + " '" + endpoint() + "' '" +
                          bucket() + "' '" + key + "' '" + file.string() + "'";
  const int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

// A case-1-like CSV with what trips a careless codec: quotes, commas, CR LF, UTF-8 and a NUL.
std::string awkward_csv() {
  std::string csv = "id,prompt,tokens\r\n";
  csv += "1,\"say \"\"hi\"\", then, stop\",12\r\n";
  csv += "2,こんにちは、世界,8\r\n";
  csv += std::string("3,nul") + '\0' + "byte,3\r\n";
  std::mt19937 rng(11);
  for (int i = 4; i < 3000; ++i) csv += std::to_string(i) + ",row " + std::to_string(rng()) + "," + std::to_string(i % 97) + "\r\n";
  return csv;
}

class S3CrossCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = pipe::testing::temp_dir("s3-sdk");
    prefix_ = "sdk-" + std::to_string(std::random_device{}());
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::filesystem::path dir_;
  std::string prefix_;
};

TEST_F(S3CrossCheck, TheSdkReadsByteForByteWhatWeWrote) {
  const std::string csv = awkward_csv();
  open_object_store(s3_url(bucket(), prefix_))->put("case1/records é.csv", csv);
  ASSERT_EQ(sdk("get", prefix_ + "/case1/records é.csv", dir_ / "got.csv"), 0);
  EXPECT_EQ(read_file(dir_ / "got.csv"), csv);
}

TEST_F(S3CrossCheck, WeReadByteForByteWhatTheSdkWrote) {
  std::string bytes = awkward_csv();
  for (int b = 0; b < 256; ++b) bytes.push_back(static_cast<char>(b));
  write_file(dir_ / "put.bin", bytes);
  ASSERT_EQ(sdk("put", prefix_ + "/from sdk/ü+.bin", dir_ / "put.bin"), 0);
  EXPECT_EQ(open_object_store(s3_url(bucket(), prefix_))->get("from sdk/ü+.bin"), bytes);
}

// One store object shared by threads (the port's thread-safety), each writing and reading its own
// keys, so the emulator's non-atomic replace (the contract's server gap) does not enter.
TEST(S3Emulator, OneStoreServesManyThreads) {
  auto store = open_object_store(s3_url(bucket(), "threads-" + std::to_string(std::random_device{}())));
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i) {
        const std::string key = "t" + std::to_string(t) + "/" + std::to_string(i) + ".csv";
        const std::string body(1000 + 97 * i, static_cast<char>('a' + t));
        store->put(key, body);
        if (store->get(key) != body) ++wrong;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(S3Emulator, AMissingBucketIsPermanentWithAHint) {
  auto store = open_object_store(s3_url("no-such-bucket-" + std::to_string(std::random_device{}() % 100000), "p"));
  try {
    store->put("k.csv", "x");
    FAIL() << "put into a missing bucket returned";
  } catch (const ports::ObjectStoreError& e) {
    EXPECT_FALSE(e.retryable()) << e.what();
    EXPECT_NE(std::string(e.what()).find("NoSuchBucket"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("check the bucket name"), std::string::npos) << e.what();
  }
}

TEST(S3Emulator, AnUnknownAccessKeyIsPermanentWithAHint) {
  const std::string saved = std::getenv("AWS_ACCESS_KEY_ID") ? std::getenv("AWS_ACCESS_KEY_ID") : "";
  setenv("AWS_ACCESS_KEY_ID", "AKIDNOTS3RVER", 1);
  auto store = open_object_store(s3_url(bucket(), "p"));
  try {
    (void)store->get("k.csv");
    ADD_FAILURE() << "get with an unknown key id returned";
  } catch (const ports::ObjectStoreError& e) {
    EXPECT_FALSE(e.retryable()) << e.what();
    EXPECT_NE(std::string(e.what()).find("InvalidAccessKeyId"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find(std::getenv("AWS_SECRET_ACCESS_KEY")), std::string::npos) << e.what();
  }
  setenv("AWS_ACCESS_KEY_ID", saved.c_str(), 1);
}

}  // namespace
}  // namespace overhead::backends
