// The producer: sends every source record once per tokenizer to the input queue, tokenizer by
// tokenizer, in batches of at most 10 (as the seed did). An entry the queue refuses for good (a
// body over its size limit) is dead-lettered as prompt_too_large; one refused for now
// (throttled) is resent alone under the retry policy.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pipe/dead_letter.hpp"
#include "ports/queue.hpp"
#include "ports/retry.hpp"
#include "pipe/work_item.hpp"

namespace overhead::pipe {

struct ProducerStats {
  std::uint64_t messages = 0;  // sent
  std::uint64_t batches = 0;
  std::uint64_t failed = 0;    // dead-lettered
  std::int64_t elapsed_ns = 0;
};

// Throws QueueError when a whole send fails after the retries, or when an entry fails and
// `dead_letters` is null. `with_answers`: the bodies carry the records' answers (for a worker
// whose decoder stage counts them; encode_item_body).
ProducerStats produce(const std::vector<std::shared_ptr<const SourceRecord>>& records,
                      const std::vector<std::string>& tokenizers, ports::Queue& queue, std::size_t batch = ports::kMaxQueueBatch,
                      DeadLetterSink* dead_letters = nullptr, const ports::RetryPolicy& retry = ports::RetryPolicy::jittered(),
                      bool with_answers = false);

}  // namespace overhead::pipe
