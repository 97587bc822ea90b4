#include "pipe/producer.hpp"

#include <algorithm>

#include "pipe/clock.hpp"

namespace overhead::pipe {

ProducerStats produce(const std::vector<std::shared_ptr<const SourceRecord>>& records,
                      const std::vector<std::string>& tokenizers, Queue& queue, std::size_t batch) {
  batch = std::clamp<std::size_t>(batch, 1, kMaxQueueBatch);
  ProducerStats stats;
  const std::int64_t start = monotonic_ns();
  std::vector<std::string> bodies;
  bodies.reserve(batch);
  auto flush = [&] {
    if (bodies.empty()) return;
    queue.send_batch(bodies);
    stats.messages += bodies.size();
    ++stats.batches;
    bodies.clear();
  };
  for (const auto& tokenizer : tokenizers) {
    for (const auto& rec : records) {
      bodies.push_back(encode_item_body(*rec, tokenizer));
      if (bodies.size() == batch) flush();
    }
  }
  flush();
  stats.elapsed_ns = monotonic_ns() - start;
  return stats;
}

}  // namespace overhead::pipe
