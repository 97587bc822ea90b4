#include "pipe/source.hpp"

#include "pipe/errors.hpp"
#include "util/line_reader.hpp"

namespace overhead::pipe {

FileSource::FileSource(std::vector<std::shared_ptr<const SourceRecord>> records, std::vector<std::string> tokenizers)
    : records_(std::move(records)), tokenizers_(std::move(tokenizers)) {}

bool FileSource::next(std::size_t max, std::vector<SourceEntry>& out) {
  out.clear();
  std::lock_guard lock(mutex_);
  const std::size_t total = records_.size() * tokenizers_.size();
  while (out.size() < max && next_ < total) {
    const std::size_t t = next_ / records_.size();
    const auto& rec = records_[next_ % records_.size()];
    SourceEntry e;
    e.source = rec;
    e.tokenizer = tokenizers_[t];
    e.origin = "line " + std::to_string(rec->line);
    out.push_back(std::move(e));
    ++next_;
  }
  return !out.empty();
}

QueueSource::QueueSource(std::shared_ptr<Queue> queue, std::chrono::milliseconds wait, std::chrono::milliseconds idle_exit,
                         const std::atomic<bool>* stop, std::size_t expected)
    : queue_(std::move(queue)), wait_(wait), idle_exit_(idle_exit), stop_(stop), expected_(expected) {}

bool QueueSource::next(std::size_t max, std::vector<SourceEntry>& out) {
  out.clear();
  const auto idle_since = std::chrono::steady_clock::now();
  for (;;) {
    if (stop_ && stop_->load()) return false;
    auto messages = queue_->receive(std::min(max, kMaxQueueBatch), wait_);
    if (!messages.empty()) {
      for (auto& m : messages) {
        SourceEntry e;
        e.origin = "message " + m.id;
        e.body = std::move(m.body);
        e.receipt = std::move(m.receipt);
        out.push_back(std::move(e));
      }
      return true;
    }
    if (std::chrono::steady_clock::now() - idle_since >= idle_exit_) return false;
  }
}

std::vector<std::string> QueueSource::ack(std::span<const std::string> receipts) {
  std::vector<std::string> failed;
  for (std::size_t i = 0; i < receipts.size(); i += kMaxQueueBatch) {
    auto f = queue_->delete_batch(receipts.subspan(i, std::min(kMaxQueueBatch, receipts.size() - i)));
    failed.insert(failed.end(), f.begin(), f.end());
  }
  return failed;
}

void QueueSource::extend(std::span<const std::string> receipts, std::chrono::milliseconds timeout) {
  for (const auto& r : receipts) queue_->change_visibility(r, timeout);
}

std::vector<std::shared_ptr<const SourceRecord>> load_source_records(const std::string& path, std::size_t limit,
                                                                     DeadLetterSink& dead_letters) {
  std::vector<std::shared_ptr<const SourceRecord>> out;
  util::LineReader reader(path);
  std::string line;
  while ((limit == 0 || out.size() < limit) && reader.next(line)) {
    if (line.find_first_not_of(" \t") == std::string::npos) continue;  // blank lines are not records
    try {
      out.push_back(parse_source_line(line, reader.line_number()));
    } catch (const ItemError& e) {
      dead_letters.add(DeadLetter{e.kind(), path + ":" + std::to_string(reader.line_number()), "", e.what(), line});
    }
  }
  return out;
}

}  // namespace overhead::pipe
