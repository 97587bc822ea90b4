#include "cli/cli_io.hpp"

#include <iostream>

#include "util/line_reader.hpp"

namespace overhead::cli {

void for_each_line(const std::string& path,
                   const std::function<void(std::size_t, std::string_view)>& fn) {
  if (path == "-") {
    std::string line;
    std::size_t n = 0;
    while (std::getline(std::cin, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      fn(++n, line);
    }
    return;
  }
  util::LineReader reader(path);
  std::string line;
  while (reader.next(line)) fn(reader.line_number(), line);
}

}  // namespace overhead::cli
