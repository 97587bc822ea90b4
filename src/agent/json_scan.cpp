// JsonScanner (json_scan.hpp).
#include "agent/json_scan.hpp"

#include "agent/stream.hpp"

namespace overhead::agent::detail {

namespace json_scan {

bool scalar_byte(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '.' || c == '+' ||
         c == '-';
}

}  // namespace json_scan

std::size_t JsonScanner::feed(std::string_view in, std::string& out) {
  std::size_t i = 0;
  const std::size_t n = in.size();
  while (i < n && state_ == State::running) {
    if (in_string_) {
      // Copy the run up to the next quote or backslash in one go.
      std::size_t j = i;
      if (escape_) {
        escape_ = false;
        ++j;
      }
      while (j < n && in[j] != '"' && in[j] != '\\') ++j;
      if (j < n && in[j] == '\\') {
        out.append(in.substr(i, j + 1 - i));
        escape_ = true;
        i = j + 1;
        continue;
      }
      if (j < n) {  // the closing quote
        out.append(in.substr(i, j + 1 - i));
        in_string_ = false;
        i = j + 1;
        if (depth_ == 0) state_ = State::done;
        continue;
      }
      out.append(in.substr(i, j - i));
      i = j;
      continue;
    }
    const char c = in[i];
    if (scalar_ && depth_ == 0 && !json_scan::scalar_byte(c)) {
      state_ = State::done;  // the byte after a top-level number or literal is not ours
      break;
    }
    ++i;
    if (is_space(c)) continue;
    switch (c) {
      case '{':
      case '[':
        started_ = true;
        ++depth_;
        out.push_back(c);
        break;
      case '}':
      case ']':
        if (depth_ == 0) {
          state_ = State::error;
          return i - 1;
        }
        out.push_back(c);
        if (--depth_ == 0) state_ = State::done;
        break;
      case '"':
        started_ = true;
        in_string_ = true;
        out.push_back(c);
        break;
      case ',':
      case ':':
        if (depth_ == 0) {
          state_ = State::error;
          return i - 1;
        }
        out.push_back(c);
        break;
      default:
        if (!json_scan::scalar_byte(c)) {
          state_ = State::error;
          return i - 1;
        }
        started_ = true;
        if (depth_ == 0) scalar_ = true;
        out.push_back(c);
    }
  }
  return i;
}

}  // namespace overhead::agent::detail
