// Run ids: their shape (UTC second + random suffix), that two made at once differ, and which
// strings the options accept.
#include <gtest/gtest.h>

#include <cctype>
#include <set>
#include <string_view>

#include "pipe/run_id.hpp"

namespace overhead::pipe {
namespace {

// "YYYYMMDDTHHMMSSZ-xxxxxxxx" with x lower-case hex (checked by hand: std::regex trips GCC 12's
// maybe-uninitialized warning in the sanitizer build).
bool has_run_id_shape(std::string_view id) {
  if (id.size() != 25 || id[8] != 'T' || id[15] != 'Z' || id[16] != '-') return false;
  for (std::size_t i = 0; i < id.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(id[i]);
    if (i == 8 || i == 15 || i == 16) continue;
    if (i < 15 ? !std::isdigit(c) : !(std::isdigit(c) || (c >= 'a' && c <= 'f'))) return false;
  }
  return id.substr(0, 2) == "20";
}

TEST(RunId, IsAUtcSecondAndARandomSuffixAndNeverRepeats) {
  std::set<std::string> seen;
  for (int i = 0; i < 200; ++i) {
    const std::string id = new_run_id();
    EXPECT_TRUE(has_run_id_shape(id)) << id;
    EXPECT_EQ(run_id_error(id), "") << id;
    EXPECT_TRUE(seen.insert(id).second) << "repeated " << id;
  }
}

TEST(RunId, OptionValuesAreChecked) {
  EXPECT_EQ(run_id_error("nightly-2026.12.03_a:1"), "");
  EXPECT_NE(run_id_error(""), "");
  EXPECT_NE(run_id_error(std::string(65, 'a')), "");
  EXPECT_EQ(run_id_error(std::string(64, 'a')), "");
  EXPECT_NE(run_id_error("a b"), "");
  EXPECT_NE(run_id_error("a/b"), "");
  EXPECT_NE(run_id_error("caf\xC3\xA9"), "");
}

}  // namespace
}  // namespace overhead::pipe
