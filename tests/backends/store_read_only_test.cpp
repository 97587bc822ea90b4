// A reader's store (backends::Access::read_only, `analyze`) never creates anything: a DynamoDB URL
// with create=1 is refused before any request, naming the parameter. (PostgreSQL's reader is
// tested against the real server in postgres_store_test.cpp, SQLite's in tests/cli.)
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "backends/open.hpp"

namespace overhead::backends {
namespace {

TEST(StoreReadOnly, ADynamoDbReaderRefusesCreate) {
  // The endpoint is a closed port: a request would fail as unreachable, not as a usage error.
  const std::string url = "dynamodb://records?region=us-east-1&endpoint=http://127.0.0.1:9&create=1";
  try {
    (void)open_store(url, Access::read_only);
    ADD_FAILURE() << "a reader accepted create=1";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("create=1"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace overhead::backends
