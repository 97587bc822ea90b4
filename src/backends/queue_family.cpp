// open_queue_family: the one implementation of the queue-family port (ports/queue_family.hpp),
// over the scheme registry (queue_schemes.cpp: whether a scheme is shared, where it writes a
// queue's name) and the sibling-name rules (queue_siblings.cpp).
#include <stdexcept>

#include "backends/open.hpp"
#include "backends/queue_schemes.hpp"
#include "backends/queue_siblings.hpp"
#include "ports/backend_url.hpp"

namespace overhead::backends {
namespace {

class UrlQueueFamily final : public ports::QueueFamily {
 public:
  UrlQueueFamily(std::string input_url, bool shared) : input_url_(std::move(input_url)), shared_(shared) {}

  bool shared() const override { return shared_; }
  std::string name() const override { return queue_name(input_url_); }
  std::shared_ptr<ports::Queue> open(const std::string& name) const override {
    return open_queue(sibling_queue_url(input_url_, name));
  }
  std::string sibling_name(ports::SiblingRole role, std::string_view suffix) const override {
    return sibling_queue_name(input_url_, role, suffix);
  }
  bool is_sibling(ports::SiblingRole role, std::string_view name) const override {
    return is_sibling_queue_of(input_url_, role, name);
  }

 private:
  std::string input_url_;  // with its credentials: for opening only, never shown
  bool shared_;
};

}  // namespace

std::shared_ptr<const ports::QueueFamily> open_queue_family(const std::string& input_url) {
  const ports::BackendUrl u = ports::parse_backend_url(input_url);
  const QueueScheme* scheme = find_queue_scheme(u.scheme);
  if (scheme == nullptr) throw std::invalid_argument(u.describe("queue", "unknown scheme \"" + u.scheme + "\""));
  return std::make_shared<UrlQueueFamily>(input_url, scheme->shared);
}

}  // namespace overhead::backends
