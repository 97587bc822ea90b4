// What the tests of the dynamodb:// stores beside the records table (the key store, the batch
// store) share: the emulator's URL for a table, and the check that a missing side table without
// create=1 is a permanent error that names it, says how to make it and shows no secret.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "backends/open.hpp"
#include "ports/errors.hpp"
#include "service_env.hpp"

namespace overhead::backends::dynamodb_test {

inline std::string aws_env(const std::string& key) { return test_services::service_env("OVERHEAD_AWS_ENV", key); }

inline std::string ddb_url(const std::string& table, const std::string& params = "create=1") {
  return "dynamodb://" + table + "?region=" + aws_env("AWS_EMULATOR_REGION") + "&endpoint=" + aws_env("AWS_DYNAMODB_ENDPOINT") +
         (params.empty() ? "" : "&" + params);
}

// Makes a fresh records table alone, then expects `open(url without create=1)` to fail on its side
// table `<records><suffix>`. Returns the records table's name.
template <class Open>
std::string expect_missing_side_table(Open open, std::string_view suffix) {
  const std::string table = test_services::unique_name("records-");
  (void)open_store(ddb_url(table));  // the records table only
  try {
    (void)open(ddb_url(table, ""));
    ADD_FAILURE() << "opening a missing " << table << suffix << " succeeded";
  } catch (const ports::StoreError& e) {
    const std::string m = e.what();
    EXPECT_EQ(e.failure(), ports::Failure::permanent) << m;
    EXPECT_NE(m.find("\"" + table + std::string(suffix) + "\""), std::string::npos) << m;
    EXPECT_NE(m.find("create=1"), std::string::npos) << m;
    EXPECT_NE(m.find("aws dynamodb create-table --table-name " + table + std::string(suffix)), std::string::npos) << m;
    EXPECT_EQ(m.find("test-secret-not-real"), std::string::npos) << m;
  }
  return table;
}

}  // namespace overhead::backends::dynamodb_test
