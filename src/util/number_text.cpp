#include "util/number_text.hpp"

#include <charconv>

namespace overhead::util {

std::string shortest_double_text(double v) {
  char buf[64];  // the longest double, -2.2250738585072014e-308, is 24 characters
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::string("0");
}

}  // namespace overhead::util
