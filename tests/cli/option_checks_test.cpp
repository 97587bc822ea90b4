// The shared option validators (cli/option_checks.hpp) on their own: finite numbers only, ranges
// inclusive.
#include <gtest/gtest.h>

#include "cli/option_checks.hpp"

namespace {

using overhead::cli::integer_range_error;
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

}  // namespace
