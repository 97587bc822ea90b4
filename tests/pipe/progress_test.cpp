// The progress bar's line fits the terminal: a line as wide as the terminal wraps, and a wrapped
// line is no longer redrawn in place (a new line per update, as seen below about 70 columns).
#include <gtest/gtest.h>

#include "pipe/progress.hpp"

namespace overhead::pipe {
namespace {

TEST(Progress, TheLineFitsEveryTerminalWidth) {
  const std::string label = "case 5 phi-4,gemma-2-27b-it";
  for (std::size_t columns = 0; columns <= 200; ++columns) {
    const std::string line = progress_line(label, 12345, 20352, 2345.6, " ETA 3.5s", columns);
    EXPECT_LE(line.size(), columns > 0 ? columns - 1 : 0) << columns;
  }
  const std::string wide = progress_line(label, 10176, 20352, 2345.6, " ETA 3.5s", 120);
  EXPECT_EQ(wide, label + " [###############...............] 10176/20352 2346/s ETA 3.5s");
  // Narrower: the bar shrinks, then goes, before anything else is cut.
  const std::string mid = progress_line(label, 10176, 20352, 2345.6, " ETA 3.5s", 75);
  EXPECT_NE(mid.find("10176/20352 2346/s ETA 3.5s"), std::string::npos) << mid;
  EXPECT_NE(mid.find(" [#"), std::string::npos) << mid;
  const std::string narrow = progress_line(label, 10176, 20352, 2345.6, " ETA 3.5s", 60);
  EXPECT_EQ(narrow, label + " 10176/20352 2346/s ETA 3.5s");
  EXPECT_EQ(progress_line(label, 1, 0, 0, "", 80), label + " [..............................] 1/0 0/s");
}

}  // namespace
}  // namespace overhead::pipe
