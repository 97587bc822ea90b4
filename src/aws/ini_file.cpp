#include "aws/ini_file.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace overhead::aws {
namespace {

std::string_view trim_ini_text(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

[[noreturn]] void fail(const std::string& file, std::size_t line, const std::string& what) {
  throw IniError(file + ":" + std::to_string(line) + ": " + what);
}

}  // namespace

IniFile parse_ini(std::string_view text, const std::string& file_name) {
  IniFile out;
  IniSection* section = nullptr;
  std::size_t line_no = 0;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    std::string_view raw = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    ++line_no;
    std::string_view line = trim_ini_text(raw);
    if (line.empty() || line.front() == '#' || line.front() == ';') continue;
    if (line.front() == '[') {
      if (line.back() != ']') fail(file_name, line_no, "section header without a closing ']'");
      std::string_view name = trim_ini_text(line.substr(1, line.size() - 2));
      if (name.empty()) fail(file_name, line_no, "empty section name");
      section = &out[std::string(name)];
      continue;
    }
    const std::size_t eq = line.find('=');
    if (eq == std::string_view::npos) {
      fail(file_name, line_no, "expected 'key = value' or a [section] header");
    }
    std::string_view key = trim_ini_text(line.substr(0, eq));
    if (key.empty()) fail(file_name, line_no, "a value without a key");
    if (section == nullptr) fail(file_name, line_no, "a key before any [section] header");
    // Indented lines are sub-keys of a nested block such as `s3 =`; they stay keys of the section.
    (*section)[std::string(key)] = std::string(trim_ini_text(line.substr(eq + 1)));
  }
  return out;
}

bool load_ini_file(const std::string& path, IniFile& out) {
  out.clear();
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (errno == ENOENT) return false;
    throw IniError(path + ": cannot read: " + std::strerror(errno));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw IniError(path + ": read failed");
  out = parse_ini(text.str(), path);
  return true;
}

}  // namespace overhead::aws
