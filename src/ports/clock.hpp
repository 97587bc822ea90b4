// The two clocks of the pipeline: a monotonic nanosecond clock for stage stamps and durations,
// and wall time as UTC ISO-8601 with microseconds for start_time/end_time. Queues take a
// `ClockMs` so that tests can move time by hand (visibility timeouts) instead of sleeping.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace overhead::ports {

// CLOCK_MONOTONIC in nanoseconds.
std::int64_t monotonic_ns();
// CLOCK_REALTIME in nanoseconds since the Unix epoch.
std::int64_t wall_ns();
// "2026-12-02T12:00:00.123456Z" for a wall time in ns since the epoch.
std::string iso8601_utc(std::int64_t wall_time_ns);

// CPU time of the calling thread, and of the whole process (user + system), in ns. On a shared
// machine wall time measures the neighbours too; CPU time measures our work.
std::int64_t thread_cpu_ns();
std::int64_t process_cpu_ns();

// A millisecond clock for queue visibility deadlines.
using ClockMs = std::function<std::int64_t()>;
// Wall clock in ms: survives process restarts, which a durable queue's deadlines must.
std::int64_t wall_ms();

}  // namespace overhead::ports
