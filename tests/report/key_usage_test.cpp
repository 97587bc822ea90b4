// The usage by key: each key's requests, tokens and E, D and total USD summed from its records,
// the records without a key in a row of their own, and the total.
#include <gtest/gtest.h>

#include <vector>

#include "report/key_usage.hpp"

namespace overhead::report {
namespace {

ports::Record charged(const std::string& key, std::int64_t prompt, std::int64_t completion, double e, double d) {
  ports::Record r;
  r.key_name = key;
  r.token_count = prompt;
  r.output_tokens = completion;
  r.cost_e_usd = e;
  r.cost_d_usd = d;
  r.cost_usd = e + d;
  return r;
}

TEST(KeyUsage, EachKeySumsItsRecordsAndTheUnchargedHaveARowOfTheirOwn) {
  const std::vector<ports::Record> records = {charged("team-b", 100, 10, 1e-6, 2e-3), charged("team-a", 50, 5, 2e-6, 1e-3),
                                              charged("", 7, 0, 5e-7, 0), charged("team-b", 300, 30, 3e-6, 6e-3)};
  const auto rows = usage_by_key(records);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].key, "team-a");
  EXPECT_EQ(rows[1].key, "team-b");
  EXPECT_EQ(rows[1].requests, 2u);
  EXPECT_EQ(rows[1].prompt_tokens, 400);
  EXPECT_EQ(rows[1].completion_tokens, 40);
  EXPECT_DOUBLE_EQ(rows[1].e_usd, 4e-6);
  EXPECT_DOUBLE_EQ(rows[1].d_usd, 8e-3);
  EXPECT_DOUBLE_EQ(rows[1].usd, 4e-6 + 8e-3);
  EXPECT_EQ(rows[2].key, kNoKey);
  EXPECT_EQ(rows[2].requests, 1u);
  EXPECT_EQ(rows[3].key, "all");
  EXPECT_EQ(rows[3].requests, 4u);
  EXPECT_EQ(rows[3].prompt_tokens, 457);
  EXPECT_NEAR(rows[3].usd, 1e-6 + 2e-3 + 2e-6 + 1e-3 + 5e-7 + 3e-6 + 6e-3, 1e-15);

  const Table t = key_usage_table(rows);
  EXPECT_EQ(t.name, "by_key");
  ASSERT_EQ(t.rows.size(), 4u);
  EXPECT_EQ(t.rows[1][0], "team-b");
  EXPECT_EQ(t.rows[1][6], "0.008004");  // total USD
  EXPECT_EQ(t.rows[1][7], "0.004002");  // per request
  const ReportSection s = key_usage_section(records);
  EXPECT_NE(s.markdown.find("## Usage by key"), std::string::npos);
  EXPECT_NE(s.markdown.find("team-a"), std::string::npos);
}

}  // namespace
}  // namespace overhead::report
