// The key store contract (contract/key_store_contract.hpp) against dynalite through the
// dynamodb:// adapters: the key table TABLE-keys beside each test's records table, read past the
// adapter by a Scan of the test's own; and the missing key table's error without create=1.
//
// The emulator is the CTest fixture `aws_emulators` (scripts/services/aws_emulators.sh); its env
// file is named by OVERHEAD_AWS_ENV and read when a test first needs it.
#include <gtest/gtest.h>

#include <string>

#include "aws/json_protocol.hpp"
#include "backends/dynamodb_key_store.hpp"
#include "backends/open.hpp"
#include "dynamodb_side_table_test_util.hpp"
#include "key_store_contract.hpp"
#include "ports/errors.hpp"
#include "service_env.hpp"

namespace overhead::backends {
namespace {

using dynamodb_test::aws_env;
using dynamodb_test::ddb_url;

// The whole key table of `url` as DynamoDB's JSON, from a Scan of the test's own.
std::string keys_table_text(const std::string& url) {
  const std::string table = url.substr(11, url.find('?') - 11);
  aws::JsonServiceEndpoint e{"dynamodb", "DynamoDB_20120810", aws_env("AWS_EMULATOR_REGION"), aws_env("AWS_DYNAMODB_ENDPOINT"), "", ""};
  e.host = aws::endpoint_host(e.endpoint);
  aws::JsonProtocolClient client(std::move(e));
  return client.call("Scan", "{\"TableName\":\"" + dynamodb_keys_table(table) + "\",\"ConsistentRead\":true}",
                     std::chrono::milliseconds(10000), "test");
}

std::string unreachable_url() { return "dynamodb://records?region=us-east-1&endpoint=http://127.0.0.1:1&timeout_ms=500"; }

TEST(DynamoDbKeyStore, AMissingKeyTableIsPermanentAndSaysHowToCreateIt) {
  const std::string table = dynamodb_test::expect_missing_side_table([](const std::string& url) { return open_key_store(url); }, "-keys");
  open_key_store(ddb_url(table))->create(pipe::contract::make_key("k"));
  EXPECT_EQ(open_key_store(ddb_url(table, ""))->list().size(), 1u);
}

}  // namespace
}  // namespace overhead::backends

namespace overhead::pipe::contract {
INSTANTIATE_TEST_SUITE_P(DynamoDb, KeyStoreTest,
                         ::testing::Values(KeyStoreBackend{"dynamodb",
                                                           [](const std::filesystem::path&, const std::string& name) {
                                                             return backends::ddb_url("contract-" + name);
                                                           },
                                                           &backends::keys_table_text, &backends::unreachable_url}),
                         KeyStoreBackendName{});
}  // namespace overhead::pipe::contract
