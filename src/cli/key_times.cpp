#include "cli/key_times.hpp"

#include <chrono>
#include <cstdio>

namespace overhead::cli {

namespace {

// `n` decimal digits at text[at..]: the number, or -1.
int fixed_digits(const std::string& text, std::size_t at, std::size_t n) {
  if (at + n > text.size()) return -1;
  int v = 0;
  for (std::size_t i = at; i < at + n; ++i) {
    if (text[i] < '0' || text[i] > '9') return -1;
    v = v * 10 + (text[i] - '0');
  }
  return v;
}

}  // namespace

std::optional<std::int64_t> parse_utc_time(const std::string& text) {
  using namespace std::chrono;
  const int y = fixed_digits(text, 0, 4), mo = fixed_digits(text, 5, 2), d = fixed_digits(text, 8, 2);
  if (y < 0 || mo < 0 || d < 0 || text[4] != '-' || text[7] != '-') return std::nullopt;
  const year_month_day date{year{y}, month{static_cast<unsigned>(mo)}, day{static_cast<unsigned>(d)}};
  if (!date.ok()) return std::nullopt;
  const std::int64_t midnight = sys_days(date).time_since_epoch().count() * 86400LL;
  if (text.size() == 10) return midnight;
  // THH:MM[:SS[.fraction]] then the UTC designator.
  if (text[10] != 'T' && text[10] != 't') return std::nullopt;
  const int h = fixed_digits(text, 11, 2), mi = fixed_digits(text, 14, 2);
  if (h < 0 || mi < 0 || text.size() < 16 || text[13] != ':' || h > 23 || mi > 59) return std::nullopt;
  std::size_t at = 16;
  int s = 0;
  if (at < text.size() && text[at] == ':') {
    s = fixed_digits(text, at + 1, 2);
    if (s < 0 || s > 59) return std::nullopt;
    at += 3;
    if (at < text.size() && text[at] == '.') {
      ++at;
      const std::size_t start = at;
      while (at < text.size() && text[at] >= '0' && text[at] <= '9') ++at;
      if (at == start) return std::nullopt;
    }
  }
  const std::string zone = text.substr(at);
  if (zone != "Z" && zone != "z" && zone != "+00:00") return std::nullopt;
  return midnight + h * 3600LL + mi * 60LL + s;
}

std::string utc_time_error(const std::string& text) {
  if (parse_utc_time(text)) return "";
  return "expected YYYY-MM-DD (00:00 UTC that day) or an ISO-8601 UTC time such as 2027-01-01T12:00:00Z, got '" + text + "'";
}

std::string utc_time_text(std::int64_t unix_seconds) {
  using namespace std::chrono;
  const sys_seconds t{seconds{unix_seconds}};
  const sys_days day = floor<days>(t);
  const year_month_day date{day};
  const hh_mm_ss clock{t - day};
  char buf[40];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02dZ", static_cast<int>(date.year()), static_cast<unsigned>(date.month()),
                static_cast<unsigned>(date.day()), static_cast<int>(clock.hours().count()),
                static_cast<int>(clock.minutes().count()), static_cast<int>(clock.seconds().count()));
  return buf;
}

}  // namespace overhead::cli
