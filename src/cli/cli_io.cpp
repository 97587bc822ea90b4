#include "cli/cli_io.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>

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

void write_output_file(const std::string& dir, const std::string& name, const std::string& text) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw std::runtime_error(dir + ": cannot create: " + ec.message());
  const auto path = std::filesystem::path(dir) / name;
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error(path.string() + ": cannot write");
  std::fprintf(stderr, "wrote %s\n", path.string().c_str());
}

}  // namespace overhead::cli
