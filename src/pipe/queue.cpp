#include <algorithm>

#include "pipe/queue.hpp"

namespace overhead::pipe {

void send_all(Queue& queue, std::span<const std::string> bodies) {
  for (std::size_t i = 0; i < bodies.size(); i += kMaxQueueBatch)
    queue.send_batch(bodies.subspan(i, std::min(kMaxQueueBatch, bodies.size() - i)));
}

}  // namespace overhead::pipe
