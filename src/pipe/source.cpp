#include "pipe/source.hpp"

#include <stdexcept>
#include <unordered_map>

#include "ports/errors.hpp"
#include "util/line_reader.hpp"

namespace overhead::pipe {

using ports::ItemError;
using ports::kMaxQueueBatch;
using ports::Queue;

FileSource::FileSource(std::vector<std::shared_ptr<const SourceRecord>> records, std::vector<std::string> tokenizers)
    : records_(std::move(records)), tokenizers_(std::move(tokenizers)) {}

PollResult FileSource::poll(std::size_t max, std::chrono::milliseconds, std::vector<SourceEntry>& out) {
  out.clear();
  std::lock_guard lock(mutex_);
  const std::size_t total = records_.size() * tokenizers_.size();
  while (out.size() < max && next_ < total) {
    const std::size_t t = next_ / records_.size();
    const auto& rec = records_[next_ % records_.size()];
    SourceEntry e;
    e.source = rec;
    e.tokenizer = tokenizers_[t];
    e.origin = source_origin(*rec);
    out.push_back(std::move(e));
    ++next_;
  }
  return out.empty() ? PollResult::finished : PollResult::items;
}

namespace {
std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

QueueSource::QueueSource(std::shared_ptr<Queue> queue, std::chrono::milliseconds wait, std::chrono::milliseconds idle_exit,
                         const std::atomic<bool>* stop, std::size_t expected)
    : queue_(std::move(queue)), wait_(wait), idle_exit_(idle_exit), stop_(stop), expected_(expected),
      last_arrival_ns_(0) {}

PollResult QueueSource::poll(std::size_t max, std::chrono::milliseconds max_wait, std::vector<SourceEntry>& out) {
  out.clear();
  if (stop_ && stop_->load()) return PollResult::finished;
  // The idle clock starts at the first poll, not at construction (loading tokenizers takes a while).
  std::int64_t unset = 0;
  last_arrival_ns_.compare_exchange_strong(unset, steady_ns(), std::memory_order_relaxed);
  auto messages = queue_->receive(std::min(max, kMaxQueueBatch), std::max(std::chrono::milliseconds(0), std::min(wait_, max_wait)));
  if (messages.empty()) {
    const std::int64_t idle_ns = steady_ns() - last_arrival_ns_.load(std::memory_order_relaxed);
    const bool idle_too_long = idle_ns >= std::chrono::duration_cast<std::chrono::nanoseconds>(idle_exit_).count();
    return idle_too_long || (stop_ && stop_->load()) ? PollResult::finished : PollResult::quiet;
  }
  last_arrival_ns_.store(steady_ns(), std::memory_order_relaxed);
  for (auto& m : messages) {
    SourceEntry e;
    e.origin = queue_->url() + " message " + m.id;  // as the consumer names its messages
    e.body = std::move(m.body);
    e.receipt = std::move(m.receipt);
    out.push_back(std::move(e));
  }
  return PollResult::items;
}

std::vector<std::string> QueueSource::ack(std::span<const std::string> receipts) {
  std::vector<std::string> failed;
  for (std::size_t i = 0; i < receipts.size(); i += kMaxQueueBatch) {
    auto f = queue_->delete_batch(receipts.subspan(i, std::min(kMaxQueueBatch, receipts.size() - i)));
    failed.insert(failed.end(), f.begin(), f.end());
  }
  return failed;
}

void QueueSource::dead_letter(const SourceEntry& entry, const std::string& reason) {
  if (!entry.receipt.empty()) (void)queue_->send_to_dead_letters(entry.receipt, entry.body, reason);
}

void QueueSource::extend(std::span<const std::string> receipts, std::chrono::milliseconds timeout) {
  // A stale receipt needs nothing: its message is already back or gone.
  for (std::size_t i = 0; i < receipts.size(); i += kMaxQueueBatch)
    (void)queue_->change_visibility_batch(receipts.subspan(i, std::min(kMaxQueueBatch, receipts.size() - i)), timeout);
}

std::vector<std::shared_ptr<const SourceRecord>> load_source_records(const std::string& path, std::size_t limit,
                                                                     DeadLetterSink& dead_letters, std::size_t max_line_bytes) {
  std::vector<std::shared_ptr<const SourceRecord>> out;
  std::unordered_map<std::string, std::size_t> first_line_of_id;
  util::LineReader reader(path, max_line_bytes);
  const auto file = std::make_shared<const std::string>(path);
  std::string line;
  bool any_line = false;
  // The next line, or false at the end; a line over the limit is dead-lettered and passed over.
  const auto next_line = [&] {
    for (;;) {
      try {
        return reader.next(line);
      } catch (const util::LineTooLongError& e) {
        any_line = true;
        dead_letters.add(DeadLetter{kind_name(DeadLetterKind::malformed_json), path + ":" + std::to_string(e.line_number()), "",
                                    e.what(), ""});
      }
    }
  };
  while ((limit == 0 || out.size() < limit) && next_line()) {
    if (line.find_first_not_of(" \t") == std::string::npos) continue;  // blank lines are not records
    any_line = true;
    try {
      auto rec = parse_source_line(line, reader.line_number(), file);
      const auto [at, fresh] = first_line_of_id.emplace(rec->id, reader.line_number());
      if (!fresh) {
        dead_letters.add(DeadLetter{kind_name(DeadLetterKind::duplicate_id), path + ":" + std::to_string(reader.line_number()), "",
                                    "id \"" + rec->id + "\" is already used by line " + std::to_string(at->second) +
                                        "; this line is skipped",
                                    line});
        continue;
      }
      out.push_back(std::move(rec));
    } catch (const ItemError& e) {
      dead_letters.add(DeadLetter{e.kind(), path + ":" + std::to_string(reader.line_number()), "", e.reason(), line});
    }
  }
  // Nothing to run is a mistake (a wrong file, a failed export), not a run of zero items.
  if (!any_line)
    throw std::runtime_error(path + ": no records (the file is empty or holds only blank lines); give the seed's "
                             "JSONL, one record per line");
  return out;
}

}  // namespace overhead::pipe
