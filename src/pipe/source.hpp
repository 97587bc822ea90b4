// Where a worker takes its items from, a batch at a time.
//   FileSource   records read from the local JSONL (cases 1-4): every record once per tokenizer,
//                tokenizer by tokenizer; nothing to acknowledge.
//   QueueSource  the input queue (case 5, `overhead worker`): receive up to 10 with a wait,
//                acknowledge = delete by receipt, and visibility can be extended.
//
// A poll waits at most once, for a bounded time, and says whether the source is merely quiet or
// finished. The worker settles (deletes) and extends its received batches between polls, so a
// long wait for more input never lets finished batches time out and come back.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "util/line_reader.hpp"
#include "pipe/dead_letter.hpp"
#include "ports/queue.hpp"
#include "pipe/work_item.hpp"

namespace overhead::pipe {

struct SourceEntry {
  // A file entry carries the parsed record; a queue entry carries the undecoded body (the
  // worker decodes it, so that cost is counted per item where it happens).
  std::shared_ptr<const SourceRecord> source;
  std::string tokenizer;
  std::string origin;   // "line N" or "message ID"
  std::string body;
  std::string receipt;  // empty for a file entry
};

// What one poll found.
enum class PollResult {
  items,     // `out` holds at least one entry
  quiet,     // nothing arrived within the wait; poll again
  finished,  // no more entries will come (all read, idle for too long, or stopped)
};

class Source {
 public:
  virtual ~Source() = default;
  // Fills `out` with up to `max` entries, waiting at most `max_wait` (and at most the source's
  // own wait) for the first one.
  virtual PollResult poll(std::size_t max, std::chrono::milliseconds max_wait, std::vector<SourceEntry>& out) = 0;
  // Acknowledges consumed entries by receipt (deletes them from a queue). Returns the receipts
  // that failed (stale).
  virtual std::vector<std::string> ack(std::span<const std::string> receipts) = 0;
  // Keeps the given entries invisible for a while longer (no-op for files).
  virtual void extend(std::span<const std::string> receipts, std::chrono::milliseconds timeout) = 0;
  virtual bool has_acks() const = 0;
  // Copies an entry the worker cannot use (bad input) to the source's dead-letter queue with the
  // reason, where the source has one; the entry is still acknowledged as usual. No-op for files.
  virtual void dead_letter(const SourceEntry&, const std::string& /*reason*/) {}
  // Items the source expects to deliver in all (0 = unknown), for the progress bar.
  virtual std::size_t expected() const = 0;
};

// Thread-safe: several workers may share one source.
class FileSource final : public Source {
 public:
  FileSource(std::vector<std::shared_ptr<const SourceRecord>> records, std::vector<std::string> tokenizers);
  PollResult poll(std::size_t max, std::chrono::milliseconds max_wait, std::vector<SourceEntry>& out) override;
  std::vector<std::string> ack(std::span<const std::string>) override { return {}; }
  void extend(std::span<const std::string>, std::chrono::milliseconds) override {}
  bool has_acks() const override { return false; }
  std::size_t expected() const override { return records_.size() * tokenizers_.size(); }

 private:
  std::vector<std::shared_ptr<const SourceRecord>> records_;
  std::vector<std::string> tokenizers_;
  std::mutex mutex_;      // taken once per batch, not per item
  std::size_t next_ = 0;  // index over tokenizers x records
};

class QueueSource final : public Source {
 public:
  // Each receive waits up to `wait` for a message. Finished when no message arrived for
  // `idle_exit` (0 = at the first empty receive) or when `stop` becomes true.
  QueueSource(std::shared_ptr<ports::Queue> queue, std::chrono::milliseconds wait, std::chrono::milliseconds idle_exit,
              const std::atomic<bool>* stop = nullptr, std::size_t expected = 0);
  PollResult poll(std::size_t max, std::chrono::milliseconds max_wait, std::vector<SourceEntry>& out) override;
  std::vector<std::string> ack(std::span<const std::string> receipts) override;
  void extend(std::span<const std::string> receipts, std::chrono::milliseconds timeout) override;
  bool has_acks() const override { return true; }
  // Sends the body with the reason to the queue's dead-letter queue (send_to_dead_letters).
  void dead_letter(const SourceEntry& entry, const std::string& reason) override;
  std::size_t expected() const override { return expected_; }
  ports::Queue& queue() { return *queue_; }

 private:
  std::shared_ptr<ports::Queue> queue_;
  std::chrono::milliseconds wait_, idle_exit_;
  const std::atomic<bool>* stop_;
  std::size_t expected_;
  // steady_clock ns of the last receive that brought a message (or of the first poll; 0 before
  // it); shared by the workers polling this source.
  std::atomic<std::int64_t> last_arrival_ns_;
};

// Reads the seed's JSONL (".gz" gunzipped): one SourceRecord per good line, the first `limit`
// (0 = all). A bad line is dead-lettered (kind, "PATH:N", reason, the line) and skipped. So is a
// line whose id an earlier line already has (kind duplicate_id, naming both lines): records are
// keyed by tokenizer and id, so the later one would silently overwrite the earlier in a store.
// Blank lines are skipped. A line longer than `max_line_bytes` is dead-lettered as malformed_json
// without being kept (only its first bytes are). Throws std::runtime_error naming the file when
// it holds no line at all.
std::vector<std::shared_ptr<const SourceRecord>> load_source_records(const std::string& path, std::size_t limit,
                                                                     DeadLetterSink& dead_letters,
                                                                     std::size_t max_line_bytes = util::kDefaultMaxLineBytes);

}  // namespace overhead::pipe
