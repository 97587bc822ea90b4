// open_queue: the queue schemes. A new queue backend adds its arm to kQueueSchemes.
#include <filesystem>
#include <stdexcept>
#include <vector>

#include "backends/mem_queue.hpp"
#include "backends/redis_queue.hpp"
#include "backends/open.hpp"
#include "backends/sqlite_queue.hpp"
#include "backends/sqs_queue.hpp"
#include "ports/backend_url.hpp"
#include "ports/errors.hpp"

namespace overhead::backends {

namespace {

struct QueueScheme {
  std::string_view scheme;
  std::string_view usage;  // shown when the scheme is unknown
  std::shared_ptr<pipe::Queue> (*open)(const pipe::BackendUrl&, const pipe::ClockMs&);
  bool local_file;  // the URL's path is a file on this host, made when missing
};

constexpr QueueScheme kQueueSchemes[] = {
    {"mem", "mem:[NAME]", &open_mem_queue, false},
    {"sqlite-queue", "sqlite-queue:PATH", &open_sqlite_queue, true},
    {"redis", "redis://[USER:PASSWORD@]HOST[:PORT]/STREAM", &open_redis_queue, false},
    {"sqs", "sqs://QUEUE_NAME", &open_sqs_queue, false},
};

}  // namespace

std::shared_ptr<pipe::Queue> open_queue(std::string_view url, pipe::ClockMs clock, Access access) {
  const pipe::BackendUrl u = pipe::parse_backend_url(url);
  std::string known;
  for (const auto& s : kQueueSchemes) {
    if (s.scheme != u.scheme) continue;
    if (access != Access::create && s.local_file && !std::filesystem::exists(u.path))
      throw pipe::QueueError(u.describe("queue", "no such file; give the queue file that enqueue or a worker wrote"));
    return s.open(u, clock);
  }
  for (const auto& s : kQueueSchemes) known += (known.empty() ? "" : ", ") + std::string(s.usage);
  throw std::invalid_argument(u.describe("queue", "unknown scheme \"" + u.scheme + "\" (known: " + known + ")"));
}

std::vector<std::string_view> queue_url_forms() {
  std::vector<std::string_view> forms;
  for (const auto& s : kQueueSchemes) forms.push_back(s.usage);
  return forms;
}

}  // namespace overhead::backends
