#include "pipe/publisher.hpp"

#include <exception>

#include "ports/clock.hpp"
#include "pipe/dead_letter.hpp"
#include "ports/record_codec.hpp"

namespace overhead::pipe {

using ports::append_record_json;
using ports::append_stamps_json;
using ports::call_with_retries;
using ports::monotonic_ns;
using ports::Record;
using ports::RetryOutcome;
using ports::RetryPolicy;
using ports::StampPatch;

Publisher::Publisher(RecordSink& sink, DeadLetterSink& dead_letters, RetryPolicy retry, PublishListener* listener)
    : sink_(sink), dead_letters_(dead_letters), retry_(std::move(retry)), listener_(listener) {
  if (retry_.attempts < 1) retry_.attempts = 1;
}

template <class Fn>
RetryOutcome Publisher::with_retries(Fn&& put) {
  return call_with_retries(retry_, put, [&] { retries_.fetch_add(1, std::memory_order_relaxed); });
}

namespace {
std::string tries_text(const RetryOutcome& o) {
  return std::to_string(o.tries) + (o.tries == 1 ? " try" : " tries");
}
}  // namespace

bool Publisher::deliver(const Record& record) {
  const RetryOutcome o = with_retries([&] { sink_.put(record); });
  if (o.ok) {
    published_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  failed_.fetch_add(1, std::memory_order_relaxed);
  std::string payload;
  append_record_json(payload, record);
  dead_letters_.add(DeadLetter{kind_name(DeadLetterKind::publish_failed), record.experiment_tokenizer + "/" + record.id, record.tokenizer,
                               "publish failed after " + tries_text(o) + ": " + o.last_error,
                               std::move(payload)});
  return false;
}

bool Publisher::publish_stamps(std::span<const StampPatch> patches) {
  if (patches.empty()) return true;
  const RetryOutcome o = with_retries([&] { sink_.put_stamps(patches); });
  if (o.ok) return true;
  stamp_failures_.fetch_add(1, std::memory_order_relaxed);
  std::string payload;
  append_stamps_json(payload, patches);
  dead_letters_.add(DeadLetter{kind_name(DeadLetterKind::stamps_failed), patches.front().experiment_tokenizer + "/" + patches.front().id, "",
                               "stamp patch failed after " + tries_text(o) + ": " + o.last_error,
                               std::move(payload)});
  return false;
}

void Publisher::settle(std::uintptr_t token, bool ok) {
  if (listener_) listener_->on_published(token, ok, monotonic_ns());
}

void Publisher::note_outstanding(std::uint64_t n) {
  std::uint64_t seen = max_outstanding_.load(std::memory_order_relaxed);
  while (n > seen && !max_outstanding_.compare_exchange_weak(seen, n, std::memory_order_relaxed)) {
  }
}

PublisherStats Publisher::stats() const {
  return PublisherStats{published_.load(), retries_.load(), failed_.load(), stamp_failures_.load(), max_outstanding_.load()};
}

void SyncPublisher::publish(Record&& record, std::uintptr_t token) {
  note_outstanding(1);
  settle(token, deliver(record));
}

AsyncPublisher::AsyncPublisher(RecordSink& sink, DeadLetterSink& dead_letters, RetryPolicy retry,
                               PublishListener* listener, unsigned threads, std::size_t capacity)
    : Publisher(sink, dead_letters, std::move(retry), listener),
      capacity_(capacity ? capacity : 2 * std::size_t(threads ? threads : 1)) {
  if (threads == 0) threads = 1;
  threads_.reserve(threads);
  for (unsigned i = 0; i < threads; ++i) threads_.emplace_back([this] { run(); });
}

AsyncPublisher::~AsyncPublisher() { stop_threads(); }

void AsyncPublisher::publish(Record&& record, std::uintptr_t token) {
  std::unique_lock lock(mutex_);
  not_full_.wait(lock, [&] { return pending_.size() < capacity_ || stopping_; });
  if (stopping_) return;  // aborted: the record is dropped, its input comes back
  pending_.emplace_back(std::move(record), token);
  note_outstanding(pending_.size() + busy_);
  // Wake a thread only when one sleeps: the others will find the record when they loop.
  const bool wake = waiting_threads_ > 0;
  lock.unlock();
  if (wake) not_empty_.notify_one();
}

void AsyncPublisher::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    if (pending_.empty()) {
      if (stopping_) return;
      ++waiting_threads_;
      not_empty_.wait(lock, [&] { return !pending_.empty() || stopping_; });
      --waiting_threads_;
      continue;
    }
    auto [record, token] = std::move(pending_.front());
    pending_.pop_front();
    ++busy_;
    lock.unlock();
    not_full_.notify_one();
    const bool ok = deliver(record);
    settle(token, ok);
    lock.lock();
    --busy_;
    if (pending_.empty() && busy_ == 0) idle_.notify_all();
  }
}

void AsyncPublisher::flush() {
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [&] { return (pending_.empty() && busy_ == 0) || stopping_; });
}

void AsyncPublisher::abort() {
  {
    std::lock_guard lock(mutex_);
    pending_.clear();
  }
  stop_threads();
}

void AsyncPublisher::stop_threads() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  not_empty_.notify_all();
  not_full_.notify_all();
  idle_.notify_all();
  for (auto& t : threads_)
    if (t.joinable()) t.join();
}

}  // namespace overhead::pipe
