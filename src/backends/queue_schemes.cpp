// The one table of queue schemes. A new queue backend adds its entry here (and its adapter files
// to CMakeLists.txt); the static_assert below and tests/backends/queue_schemes_test.cpp refuse an
// entry with a part missing.
#include "backends/queue_schemes.hpp"

#include "backends/mem_queue.hpp"
#include "backends/redis_queue.hpp"
#include "backends/sqlite_queue.hpp"
#include "backends/sqs_queue.hpp"

namespace overhead::backends {
namespace {

constexpr QueueScheme kQueueSchemes[] = {
    {.scheme = "mem",
     .usage = "mem:[NAME]",
     .parameters = "visibility_ms=30000&max_receives=0&max_message_bytes=262144&timeout_ms=10000",
     .open = &open_mem_queue,
     .local_file = false,
     .shared = false,
     .naming = kNameAfterScheme,
     .example = "mem:jobs?visibility_ms=500"},
    {.scheme = "sqlite-queue",
     .usage = "sqlite-queue:PATH",
     .parameters = "name=queue&visibility_ms=..&max_receives=..&max_message_bytes=..&timeout_ms=..",
     .open = &open_sqlite_queue,
     .local_file = true,
     .shared = true,
     .naming = kNameParameter,
     .example = "sqlite-queue:q.db?visibility_ms=500&name=jobs"},
    {.scheme = "redis",
     .usage = "redis://[USER:PASS@]HOST:PORT/STREAM",
     .parameters = "group=G&visibility_ms=..&max_receives=..&block_ms=..&db=N&max_message_bytes=..&timeout_ms=.."
                   "&retry_ms=..",
     .open = &open_redis_queue,
     .local_file = false,
     .shared = true,
     .naming = kNameIsPath,
     .example = "redis://user:secret@localhost:6379/jobs?group=g"},
    {.scheme = "sqs",
     .usage = "sqs://QUEUE_NAME",
     .parameters = "region=R&endpoint=URL&visibility_ms=..&wait_s=..&max_receives=..&max_message_bytes=.."
                   "&timeout_ms=..&create=0|1",
     .open = &open_sqs_queue,
     .local_file = false,
     .shared = true,
     .naming = kNameIsHost,
     .example = "sqs://jobs?region=eu-west-1"},
};

// The texts are checked at compile time. The opener and naming pointers are checked by
// tests/backends/queue_schemes_test.cpp instead: GCC does not treat a function's address compared
// with nullptr as a constant under -fsanitize=undefined, which the sanitizer build uses.
constexpr bool complete(const QueueScheme& s) {
  return !s.scheme.empty() && s.usage.starts_with(s.scheme) && s.example.starts_with(s.scheme);
}

constexpr bool all_complete() {
  for (const auto& s : kQueueSchemes)
    if (!complete(s)) return false;
  return true;
}

static_assert(all_complete(), "every queue scheme registers its usage and example under its own scheme");

}  // namespace

std::string QueueScheme::url_form() const {
  return std::string(usage) + (parameters.empty() ? "" : "[?" + std::string(parameters) + "]");
}

std::span<const QueueScheme> queue_schemes() { return kQueueSchemes; }

const QueueScheme* find_queue_scheme(std::string_view scheme) {
  for (const auto& s : kQueueSchemes)
    if (s.scheme == scheme) return &s;
  return nullptr;
}

std::string shared_queue_prefixes() {
  std::string out;
  for (const auto& s : kQueueSchemes) {
    if (!s.shared) continue;
    const bool authority = s.usage.substr(s.scheme.size()).starts_with("://");
    out += (out.empty() ? "" : ", ") + std::string(s.scheme) + (authority ? "://" : ":");
  }
  return out;
}

}  // namespace overhead::backends
