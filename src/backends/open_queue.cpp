// open_queue: opens a queue URL through the scheme registry (queue_schemes.cpp).
#include <filesystem>
#include <stdexcept>
#include <vector>

#include "backends/open.hpp"
#include "backends/queue_schemes.hpp"
#include "ports/backend_url.hpp"
#include "ports/errors.hpp"

namespace overhead::backends {

std::shared_ptr<ports::Queue> open_queue(std::string_view url, ports::ClockMs clock, Access access) {
  const ports::BackendUrl u = ports::parse_backend_url(url);
  if (const QueueScheme* s = find_queue_scheme(u.scheme)) {
    if (access != Access::create && s->local_file && !std::filesystem::exists(u.path))
      throw ports::QueueError(u.describe("queue", "no such file; give the queue file that enqueue or a worker wrote"));
    return s->open(u, clock);
  }
  std::string known;
  for (const auto& s : queue_schemes()) known += (known.empty() ? "" : ", ") + std::string(s.usage);
  throw std::invalid_argument(u.describe("queue", "unknown scheme \"" + u.scheme + "\" (known: " + known + ")"));
}

std::vector<std::string> queue_url_forms() {
  std::vector<std::string> forms;
  for (const auto& s : queue_schemes()) forms.push_back(s.url_form());
  return forms;
}

}  // namespace overhead::backends
