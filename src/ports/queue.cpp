#include "ports/queue.hpp"

#include <algorithm>

#include "ports/errors.hpp"

namespace overhead::ports {

void send_all(Queue& queue, std::span<const std::string> bodies) {
  for (std::size_t i = 0; i < bodies.size(); i += kMaxQueueBatch) {
    const auto outcomes = queue.send_batch(bodies.subspan(i, std::min(kMaxQueueBatch, bodies.size() - i)));
    for (std::size_t k = 0; k < outcomes.size(); ++k)
      if (const auto& f = outcomes[k].failure)
        throw QueueError(queue.url() + ": message " + std::to_string(i + k) + " not sent: " + f->message,
                         f->retryable ? Failure::transient : Failure::permanent);
  }
}

QueueStatus Queue::status() {
  QueueStatus s;
  s.counts = counts();
  if (const auto dead = dead_letter_queue()) s.dead_letters = dead->counts();
  return s;
}

bool Queue::send_to_dead_letters(const std::string&, const std::string& body, const std::string&) {
  const auto dead = dead_letter_queue();
  if (!dead) return false;
  send_all(*dead, std::span<const std::string>(&body, 1));
  return true;
}

std::vector<std::optional<EntryFailure>> check_send_batch(std::span<const std::string> bodies,
                                                          std::size_t max_message_bytes, const std::string& url) {
  if (bodies.empty() || bodies.size() > kMaxQueueBatch)
    throw QueueError(url + ": send_batch takes 1 to 10 messages, got " + std::to_string(bodies.size()));
  std::size_t total = 0;
  for (const auto& b : bodies) total += b.size();
  if (total > kMaxBatchBytes)
    throw QueueError(url + ": send_batch carries at most " + std::to_string(kMaxBatchBytes) + " bytes, got " +
                     std::to_string(total));
  std::vector<std::optional<EntryFailure>> out(bodies.size());
  for (std::size_t i = 0; i < bodies.size(); ++i)
    if (bodies[i].size() > max_message_bytes)
      out[i] = EntryFailure{false, "message of " + std::to_string(bodies[i].size()) + " bytes exceeds the limit of " +
                                       std::to_string(max_message_bytes)};
  return out;
}

}  // namespace overhead::ports
