#include "report/table.hpp"

#include <cmath>

#include <gtest/gtest.h>

namespace overhead::report {
namespace {

TEST(Table, Renderings) {
  const Table t{"x", "X", {"a", "b"}, {{"1,5", "say \"hi\""}, {"p|q", "<b>"}}};
  EXPECT_EQ(to_csv(t), "a,b\n\"1,5\",\"say \"\"hi\"\"\"\np|q,<b>\n");
  EXPECT_EQ(to_markdown(t), "| a | b |\n|---|---:|\n| 1,5 | say \"hi\" |\n| p\\|q | <b> |\n");
  EXPECT_NE(to_html(t).find("<td>&lt;b&gt;</td>"), std::string::npos);
}

TEST(Table, NumberFormats) {
  EXPECT_EQ(count(13822778), "13,822,778");
  EXPECT_EQ(count(-1234), "-1,234");
  EXPECT_EQ(fixed(402.2049, 2), "402.20");
  EXPECT_EQ(fixed(std::nan(""), 2), "n/a");
  EXPECT_EQ(percent(0.1), "10.0%");
}

}  // namespace
}  // namespace overhead::report
