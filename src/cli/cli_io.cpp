#include "cli/cli_io.hpp"

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "cli/option_checks.hpp"
#include "util/line_reader.hpp"

namespace overhead::cli {

void for_each_line(const std::string& path, const std::function<void(std::size_t, std::string_view)>& fn,
                   std::size_t max_line_bytes) {
  // Standard input too goes through LineReader: std::getline has no length limit.
  util::LineReader reader(path, max_line_bytes);
  std::string line;
  while (reader.next(line)) fn(reader.line_number(), line);
}

void add_max_line_bytes_option(CLI::App& cmd, std::size_t& max_line_bytes) {
  cmd.add_option("--max-line-bytes", max_line_bytes,
                 "Longest input line accepted; a longer one is an error naming its file and line")
      ->capture_default_str()
      ->check(integer_in(1, std::int64_t{1} << 34));
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
