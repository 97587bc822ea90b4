#include "pipe/worker_batches.hpp"

#include <algorithm>
#include <unordered_set>

#include "pipe/worker.hpp"
#include "ports/clock.hpp"

namespace overhead::pipe {

using ports::monotonic_ns;
using ports::StampPatch;

BatchLoop::BatchLoop(Source& source, const WorkerOptions& options) : source_(source), options_(options) {}

void BatchLoop::hook(WorkerStage stage) const {
  if (options_.fault) options_.fault(stage);
}

BatchLoopStats BatchLoop::stats() const { return BatchLoopStats{batches_.load(), delete_failures_.load()}; }

std::chrono::milliseconds BatchLoop::open_wait() const { return std::min(options_.settle_interval, options_.visibility / 4); }

void BatchLoop::item_settled(ReceivedBatch& b) {
  if (b.pending.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    // Take the lock so a settler that just checked `pending` under it cannot miss this wake-up.
    std::lock_guard lock(mutex_);
    cv_.notify_all();
  }
}

void BatchLoop::fail() {
  std::lock_guard lock(mutex_);
  if (!io_error_) io_error_ = std::current_exception();
  aborted_ = true;
  notify_all_waiters();
}

void BatchLoop::rethrow_if_failed() {
  std::lock_guard lock(mutex_);
  if (aborted_ && io_error_) std::rethrow_exception(io_error_);
}

PollResult BatchLoop::poll_batch(std::shared_ptr<ReceivedBatch>& out) {
  out.reset();
  // While batches are open, wait only briefly so that settling and extending go on (a finished
  // batch left undeleted through a long poll would time out and be delivered again).
  std::chrono::milliseconds max_wait = std::chrono::milliseconds::max();
  {
    std::lock_guard lock(mutex_);
    if (!open_.empty()) max_wait = open_wait();
  }
  auto b = std::make_shared<ReceivedBatch>();
  const PollResult got = source_.poll(options_.batch, max_wait, b->entries);
  if (got != PollResult::items) return got;
  b->received = monotonic_ns();
  b->last_extended = b->received;
  b->index = next_batch_index_++;
  b->slots.resize(b->entries.size());
  for (std::size_t i = 0; i < b->entries.size(); ++i) {
    b->slots[i].batch = b.get();
    if (!b->entries[i].receipt.empty()) b->receipts.push_back(b->entries[i].receipt);
  }
  b->pending.store(b->entries.size(), std::memory_order_relaxed);
  batches_.fetch_add(1, std::memory_order_relaxed);
  out = std::move(b);
  return PollResult::items;
}

void BatchLoop::open_batch(const std::shared_ptr<ReceivedBatch>& b) {
  std::lock_guard lock(mutex_);
  open_.push_back(b);
  unsettled_ += b->entries.size();
}

void BatchLoop::process_batch(ReceivedBatch& b) {
  hook(WorkerStage::after_receive);
  work_->take_up(b);
}

void BatchLoop::extend_old_batches() {
  if (!source_.has_acks()) return;
  const std::int64_t now = monotonic_ns();
  const std::int64_t half = options_.visibility.count() * 500'000;  // half the timeout, in ns
  std::vector<std::shared_ptr<ReceivedBatch>> old;
  {
    std::lock_guard lock(mutex_);
    for (auto& b : open_)
      if (now - b->last_extended > half) old.push_back(b);
  }
  for (auto& b : old) {
    source_.extend(b->receipts, options_.visibility);
    b->last_extended = now;
  }
}

bool BatchLoop::settle(bool wait) {
  std::shared_ptr<ReceivedBatch> front;
  {
    std::unique_lock lock(mutex_);
    if (open_.empty()) return false;
    if (wait) cv_.wait(lock, [&] { return aborted_ || open_.front()->pending.load(std::memory_order_acquire) == 0; });
    if (aborted_ || open_.front()->pending.load(std::memory_order_acquire) != 0) return true;
    front = open_.front();
  }
  // First the batch's publish_acked stamps (with the input_deleted stamps of the batches
  // deleted before it), confirmed on the log queue while the input still exists: a crash up to
  // the delete replays the input and with it the records and this patch.
  std::vector<StampPatch> patches = std::move(deleted_stamps_);
  deleted_stamps_.clear();
  patches.reserve(patches.size() + front->slots.size());
  for (const ItemSlot& s : front->slots)
    if (s.ok) patches.push_back(StampPatch{s.key, s.id, s.acked, 0});
  const bool stamps_sent = publisher_->publish_stamps(patches);
  hook(WorkerStage::before_delete);
  std::int64_t deleted = 0;
  std::unordered_set<std::string> not_deleted;
  if (source_.has_acks() && !front->receipts.empty()) {
    if (!stamps_sent) {
      // The log queue refused the patch (it is dead-lettered): keep the input, so its replay
      // sends records and stamps again rather than leave stored records without them.
      not_deleted.insert(front->receipts.begin(), front->receipts.end());
    } else {
      // Abandoned items keep their input (WorkerOptions::abandon).
      std::vector<std::string> acks;
      acks.reserve(front->receipts.size());
      for (std::size_t i = 0; i < front->entries.size(); ++i)
        if (!front->slots[i].abandoned && !front->entries[i].receipt.empty()) acks.push_back(front->entries[i].receipt);
      try {
        if (!acks.empty())
          for (auto& r : source_.ack(acks)) not_deleted.insert(std::move(r));
      } catch (const std::exception&) {
        // The queue failed: nothing of the batch is known to be deleted. The inputs come back
        // after their visibility timeout and are replayed into the idempotent store.
        not_deleted.insert(front->receipts.begin(), front->receipts.end());
      }
      deleted = monotonic_ns();
    }
    delete_failures_.fetch_add(not_deleted.size(), std::memory_order_relaxed);
  }
  hook(WorkerStage::after_delete);
  if (deleted > 0)
    for (std::size_t i = 0; i < front->slots.size(); ++i) {
      const ItemSlot& s = front->slots[i];
      // input_deleted only for an input that is gone; a failed delete leaves it empty.
      if (s.ok && !not_deleted.count(front->entries[i].receipt))
        deleted_stamps_.push_back(StampPatch{s.key, s.id, 0, deleted});
    }
  {
    std::lock_guard lock(mutex_);
    open_.pop_front();
    unsettled_ -= front->entries.size();
  }
  room_cv_.notify_one();
  return true;
}

void BatchLoop::settle_ready() {
  while (settle(false)) {
    std::lock_guard lock(mutex_);
    if (aborted_ || open_.empty() || open_.front()->pending.load(std::memory_order_acquire) != 0) break;
  }
}

bool BatchLoop::send_deleted_stamps() {
  std::vector<StampPatch> patches = std::move(deleted_stamps_);
  deleted_stamps_.clear();
  return publisher_->publish_stamps(patches);
}

void BatchLoop::send_deleted_stamps_if_idle() {
  if (deleted_stamps_.empty()) return;
  {
    std::lock_guard lock(mutex_);
    if (!open_.empty()) return;  // the next batch's patch carries them
  }
  send_deleted_stamps();
}

void BatchLoop::receive_loop() {
  try {
    for (;;) {
      {
        // Receive as far ahead as the in-flight bound allows, so that the processing thread
        // finds the next batch waiting at a boundary.
        std::unique_lock lock(mutex_);
        room_cv_.wait(lock, [&] { return aborted_ || unsettled_ + options_.batch <= options_.max_in_flight; });
        if (aborted_) return;
      }
      std::shared_ptr<ReceivedBatch> b;
      const PollResult got = poll_batch(b);
      std::lock_guard lock(mutex_);
      if (got == PollResult::quiet) continue;
      if (got == PollResult::finished) {
        source_done_ = true;
        batch_cv_.notify_one();
        return;
      }
      open_.push_back(b);
      unsettled_ += b->entries.size();
      channel_.push_back(std::move(b));
      batch_cv_.notify_one();
    }
  } catch (...) {
    fail();
  }
}

void BatchLoop::settle_loop() {
  try {
    for (;;) {
      settle_ready();
      extend_old_batches();
      send_deleted_stamps_if_idle();
      std::unique_lock lock(mutex_);
      if (aborted_) return;
      if (!open_.empty() && open_.front()->pending.load(std::memory_order_acquire) == 0) continue;
      if (source_done_ && worker_done_ && open_.empty()) return;
      // Woken when the front batch's last item settles; the timeout keeps old batches extended.
      cv_.wait_for(lock, std::max(std::chrono::milliseconds(1), open_wait()));
    }
  } catch (...) {
    fail();
  }
}

void BatchLoop::join_io() {
  if (receiver_.joinable()) receiver_.join();
  if (settler_.joinable()) settler_.join();
}

void BatchLoop::run_prefetching() {
  receiver_ = std::thread([this] { receive_loop(); });
  settler_ = std::thread([this] { settle_loop(); });
  for (;;) {
    std::shared_ptr<ReceivedBatch> b;
    {
      std::unique_lock lock(mutex_);
      batch_cv_.wait(lock, [&] { return aborted_ || !channel_.empty() || source_done_; });
      if (aborted_ || channel_.empty()) break;
      b = std::move(channel_.front());
      channel_.pop_front();
    }
    process_batch(*b);
  }
  work_->drain();
  {
    std::unique_lock lock(mutex_);
    if (aborted_) {  // an I/O thread failed (or crashed on purpose): stop as abruptly
      lock.unlock();
      join_io();
      std::rethrow_exception(io_error_);
    }
  }
  publisher_->flush();
  {
    std::lock_guard lock(mutex_);
    worker_done_ = true;
  }
  cv_.notify_all();
  join_io();
  if (io_error_) std::rethrow_exception(io_error_);
  send_deleted_stamps();
}

void BatchLoop::run_inline() {
  for (;;) {
    rethrow_if_failed();  // a generation's end could not publish
    settle_ready();
    extend_old_batches();
    send_deleted_stamps_if_idle();
    for (;;) {  // room for one more batch within the in-flight bound
      {
        std::lock_guard lock(mutex_);
        if (aborted_ || unsettled_ + options_.batch <= options_.max_in_flight) break;
      }
      settle(true);
    }
    std::shared_ptr<ReceivedBatch> b;
    const PollResult got = poll_batch(b);
    if (got == PollResult::finished) break;
    if (got == PollResult::quiet) continue;  // settle and extend, then poll again
    open_batch(b);
    process_batch(*b);
  }
  work_->drain();
  publisher_->flush();
  rethrow_if_failed();
  while (settle(true)) {
    rethrow_if_failed();
  }
  send_deleted_stamps();
}

void BatchLoop::run(BatchWork& work, Publisher& publisher) {
  work_ = &work;
  publisher_ = &publisher;
  try {
    // Prefetch hides a receive/delete round trip; a file source has none, so it runs in-line.
    if (options_.prefetch && source_.has_acks())
      run_prefetching();
    else
      run_inline();
  } catch (...) {
    {
      std::lock_guard lock(mutex_);
      aborted_ = true;
    }
    notify_all_waiters();
    work.drain();  // generations still hold this run's batches
    join_io();
    publisher.abort();
    throw;
  }
}

}  // namespace overhead::pipe
