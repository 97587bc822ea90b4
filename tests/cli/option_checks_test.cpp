// The shared option validators (cli/option_checks.hpp) on their own: finite numbers only, ranges
// inclusive, and a number list of a fixed length refused whole when a value is missing or extra
// (a list parser that read the first two of "1,2,3" dropped the third silently).
#include <gtest/gtest.h>

#include "cli/option_checks.hpp"

namespace {

using overhead::cli::integer_range_error;
using overhead::cli::number_list_error;
using overhead::cli::number_range_error;

TEST(NumberRange, RefusesNanInfinitiesAndValuesOutside) {
  EXPECT_EQ(number_range_error("1.5", 0, 10), "");
  EXPECT_EQ(number_range_error("0", 0, 10), "");
  EXPECT_EQ(number_range_error("10", 0, 10), "");
  for (const char* bad : {"nan", "NaN", "-nan", "inf", "-inf", "infinity", "1e999", "-0.5", "10.01", "", "1x", " 1"})
    EXPECT_NE(number_range_error(bad, 0, 10), "") << bad;
}

TEST(IntegerRange, RefusesSignsFractionsAndOverflow) {
  EXPECT_EQ(integer_range_error("+3", 0, 10), "");
  for (const char* bad : {"-1", "11", "1.0", "nan", "18446744073709551615", "", "0x1"})
    EXPECT_NE(integer_range_error(bad, 0, 10), "") << bad;
}

TEST(NumberList, TakesExactlyTheCountAsked) {
  EXPECT_EQ(number_list_error("1,2", 0, 100, 2), "");
  EXPECT_EQ(number_list_error("1.5,0", 0, 100, 2), "");
  const std::string extra = number_list_error("1,2,3", 0, 100, 2);
  EXPECT_NE(extra.find("got 3"), std::string::npos) << extra;
  EXPECT_NE(number_list_error("1", 0, 100, 2), "");
  EXPECT_NE(number_list_error("", 0, 100, 2), "");
}

TEST(NumberList, NamesTheBadElement) {
  const std::string e = number_list_error("1,nan", 0, 100, 2);
  EXPECT_NE(e.find("'nan' as value 2"), std::string::npos) << e;
  EXPECT_NE(number_list_error("1,,2", 0, 100, 0), "");
  EXPECT_NE(number_list_error("1,2,", 0, 100, 0), "");
  EXPECT_NE(number_list_error("1,-2", 0, 100, 0), "");
  EXPECT_EQ(number_list_error("1,2,3,4", 0, 100, 0), "");
}

}  // namespace
