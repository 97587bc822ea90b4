// A double as text that reads back as the same double: the shortest decimal (std::to_chars with
// no precision), for prices that travel through JSON, CSV, SQL and DynamoDB bit for bit. One
// function, so every format writes a price the same way.
#pragma once

#include <string>

namespace overhead::util {

// The shortest decimal of `v`; "inf", "-inf" or "nan" for those (a format without them decides
// what to write instead).
[[nodiscard]] std::string shortest_double_text(double v);

}  // namespace overhead::util
