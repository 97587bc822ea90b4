// open_queue: URL -> backend. The named `mem:` queues live in a process-wide registry so that the
// producer, the worker and the consumer of one process that open the same URL share one queue.
#include <map>
#include <mutex>
#include <stdexcept>

#include "pipe/backend_url.hpp"
#include "pipe/errors.hpp"
#include "pipe/mem_queue.hpp"
#include "pipe/sqlite_queue.hpp"

namespace overhead::pipe {

namespace {

std::shared_ptr<Queue> open_mem(const BackendUrl& u, const ClockMs& clock) {
  const auto visibility = std::chrono::milliseconds(u.int_param("visibility_ms", 30000));
  const int max_receives = static_cast<int>(u.int_param("max_receives", 0));
  const std::string& name = u.rest;
  auto make = [&] {
    std::shared_ptr<Queue> dlq;
    if (max_receives > 0) {
      const std::string dlq_url = name.empty() ? "mem:" : "mem:" + name + "-dlq";
      dlq = name.empty() ? std::make_shared<MemQueue>(dlq_url, visibility, 0, nullptr, clock) : open_queue(dlq_url, clock);
    }
    return std::make_shared<MemQueue>(u.text, visibility, max_receives, std::move(dlq), clock);
  };
  if (name.empty()) return make();
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<Queue>> registry;
  std::lock_guard lock(mutex);
  auto& slot = registry[name];
  if (!slot) slot = make();
  return slot;
}

}  // namespace

std::shared_ptr<Queue> open_queue(const std::string& url, ClockMs clock) {
  const BackendUrl u = parse_backend_url(url);
  if (u.scheme == "mem") return open_mem(u, clock);
  if (u.scheme == "sqlite-queue") {
    if (u.rest.empty()) throw std::invalid_argument("queue URL \"" + url + "\": expected sqlite-queue:PATH");
    return std::make_shared<SqliteQueue>(url, u.rest, u.param("name", "queue"),
                                         std::chrono::milliseconds(u.int_param("visibility_ms", 30000)),
                                         static_cast<int>(u.int_param("max_receives", 0)), std::move(clock));
  }
  throw std::invalid_argument("queue URL \"" + url + "\": unknown scheme \"" + u.scheme +
                              "\" (known: mem:, sqlite-queue:PATH)");
}

void send_all(Queue& queue, std::span<const std::string> bodies) {
  for (std::size_t i = 0; i < bodies.size(); i += kMaxQueueBatch)
    queue.send_batch(bodies.subspan(i, std::min(kMaxQueueBatch, bodies.size() - i)));
}

}  // namespace overhead::pipe
