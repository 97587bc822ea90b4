// The batch store contract (contract/batch_store_contract.hpp) against dynalite through the
// dynamodb:// adapters: the table TABLE-batches (with its local indexes) beside a records table
// named after each test's folder, so a store opened again on the same folder finds its
// documents; the missing table's error without create=1; a document too large for an item.
//
// The emulator is the CTest fixture `aws_emulators` (scripts/services/aws_emulators.sh); its env
// file is named by OVERHEAD_AWS_ENV and read when a test first needs it.
#include <gtest/gtest.h>

#include <string>

#include "backends/open.hpp"
#include "batch_store_contract.hpp"
#include "dynamodb_side_table_test_util.hpp"
#include "ports/errors.hpp"
#include "service_env.hpp"

namespace overhead::backends {
namespace {

using dynamodb_test::ddb_url;

std::unique_ptr<ports::BatchStore> unreachable() {
  return open_batch_store("dynamodb://records?region=us-east-1&endpoint=http://127.0.0.1:" + std::to_string(test_services::closed_port()) +
                          "&timeout_ms=500");
}

TEST(DynamoDbBatchStore, AMissingBatchTableIsPermanentAndSaysHowToCreateIt) {
  const std::string table =
      dynamodb_test::expect_missing_side_table([](const std::string& url) { return open_batch_store(url); }, "-batches");
  open_batch_store(ddb_url(table))->put(ports::BatchKind::file, {"file-a", 1, false, "{}"});
  EXPECT_TRUE(open_batch_store(ddb_url(table, ""))->get(ports::BatchKind::file, "file-a"));
}

TEST(DynamoDbBatchStore, ADocumentOverAnItemIsAPermanentErrorNamingIt) {
  auto store = open_batch_store(ddb_url(test_services::unique_name("records-")));
  try {
    store->put(ports::BatchKind::batch, {"batch_huge", 1, true, std::string(400 * 1024, 'x')});
    FAIL() << "a 400 KB document was stored";
  } catch (const ports::StoreError& e) {
    EXPECT_EQ(e.failure(), ports::Failure::permanent) << e.what();
    EXPECT_NE(std::string(e.what()).find("batch_huge"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace overhead::backends

namespace overhead::pipe::contract {
INSTANTIATE_TEST_SUITE_P(DynamoDb, BatchStoreSemantics,
                         ::testing::Values(BatchStoreBackend{"dynamodb",
                                                             [](const std::filesystem::path& dir) {
                                                               return backends::open_batch_store(backends::ddb_url(dir.filename().string()));
                                                             },
                                                             &backends::unreachable}),
                         BatchStoreBackendName{});
}  // namespace overhead::pipe::contract
