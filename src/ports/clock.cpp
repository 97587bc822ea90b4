#include "ports/clock.hpp"

#include <ctime>

namespace overhead::ports {

namespace {
std::int64_t read_clock(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
}  // namespace

std::int64_t monotonic_ns() { return read_clock(CLOCK_MONOTONIC); }
std::int64_t wall_ns() { return read_clock(CLOCK_REALTIME); }
std::int64_t wall_ms() { return wall_ns() / 1'000'000; }
std::int64_t thread_cpu_ns() { return read_clock(CLOCK_THREAD_CPUTIME_ID); }
std::int64_t process_cpu_ns() { return read_clock(CLOCK_PROCESS_CPUTIME_ID); }

std::string iso8601_utc(std::int64_t wall_time_ns) {
  const std::time_t secs = static_cast<std::time_t>(wall_time_ns / 1'000'000'000);
  const long micros = static_cast<long>((wall_time_ns % 1'000'000'000) / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[40];
  const std::size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  std::string out(buf, n);
  char frac[16];
  std::snprintf(frac, sizeof frac, ".%06ldZ", micros);
  out += frac;
  return out;
}

}  // namespace overhead::ports
