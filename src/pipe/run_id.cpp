#include "pipe/run_id.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <random>

namespace overhead::pipe {

std::string new_run_id() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  // random_device, not a clock-seeded engine: runs started at the same instant must differ.
  std::random_device entropy;
  const unsigned suffix = static_cast<unsigned>(entropy());
  char buf[96];  // room for any int the compiler cannot bound (a year of 11 digits), not only 25 chars
  std::snprintf(buf, sizeof buf, "%04d%02d%02dT%02d%02d%02dZ-%08x", utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday,
                utc.tm_hour, utc.tm_min, utc.tm_sec, suffix);
  return buf;
}

std::string run_id_error(std::string_view id) {
  constexpr std::size_t kMaxLength = 64;
  if (id.empty()) return "a run id may not be empty";
  if (id.size() > kMaxLength) return "a run id has at most 64 characters";
  for (const char c : id) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
                    c == ':' || c == '-';
    if (!ok) return "a run id holds only A-Z a-z 0-9 . _ : - (got '" + std::string(id) + "')";
  }
  return "";
}

}  // namespace overhead::pipe
