// The producer: sends every source record once per tokenizer to the input queue, tokenizer by
// tokenizer, in batches of at most 10 (as the seed did).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pipe/queue.hpp"
#include "pipe/work_item.hpp"

namespace overhead::pipe {

struct ProducerStats {
  std::uint64_t messages = 0;
  std::uint64_t batches = 0;
  std::int64_t elapsed_ns = 0;
};

ProducerStats produce(const std::vector<std::shared_ptr<const SourceRecord>>& records,
                      const std::vector<std::string>& tokenizers, Queue& queue, std::size_t batch = kMaxQueueBatch);

}  // namespace overhead::pipe
