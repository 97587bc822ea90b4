#include "pipe/worker.hpp"

#include <algorithm>
#include <random>
#include <unordered_set>

#include "ports/clock.hpp"
#include "pipe/dead_letter.hpp"
#include "ports/errors.hpp"
#include "ports/retry.hpp"

namespace overhead::pipe {

Worker::Worker(Source& source, const Processor& processor, RecordSink& sink, DeadLetterSink& dead_letters,
               WorkerOptions options)
    : source_(source), processor_(processor), dead_letters_(dead_letters), options_(std::move(options)) {
  if (options_.batch == 0) options_.batch = 1;
  if (options_.decoder) {
    const std::string d = options_.decoder->describe();
    decoder_kind_ = d.substr(0, d.find(':'));  // the kind only: the rest may name a host
  } else {
    decoder_kind_ = "none";
  }
  if (options_.max_in_flight == 0) options_.max_in_flight = 4 * options_.batch;
  if (options_.max_in_flight < options_.batch) options_.max_in_flight = options_.batch;
  if (options_.decoder && options_.max_decodes > 0) {
    // Room for every generation in flight plus a batch being taken up.
    options_.max_in_flight = std::max(options_.max_in_flight, options_.max_decodes + options_.batch);
    std::random_device random;
    attempt_prefix_ = options_.name + "-" + std::to_string(random()) + "-";
    retry_thread_ = std::thread([this] { retry_loop(); });
  }
  PublishListener* listener = this;
  if (options_.publishers == 0)
    publisher_ = std::make_unique<SyncPublisher>(sink, dead_letters, options_.retry, listener);
  else
    publisher_ = std::make_unique<AsyncPublisher>(sink, dead_letters, options_.retry, listener, options_.publishers,
                                                  options_.publish_capacity);
}

Worker::~Worker() {
  if (retry_thread_.joinable()) {
    {
      std::lock_guard lock(decode_mutex_);
      retry_stop_ = true;
    }
    decode_cv_.notify_all();
    retry_thread_.join();
  }
  if (publisher_) publisher_->abort();
}

// One generation of one item (Decoder::start): its record so far, what the decoder needs, and
// where its text goes. Owned by the decoder while it runs (the callbacks), so it outlives
// start() when the decoder is asynchronous.
class Worker::Generation final : public DecodeCallbacks, public std::enable_shared_from_this<Generation> {
 public:
  Generation(Worker& w, Batch& b, std::size_t i, Record r, std::string prompt, std::int64_t max_tokens, std::string tok,
             bool stream, std::string attempt_id)
      : worker_(w),
        batch(b),
        index(i),
        record(std::move(r)),
        prompt_(std::move(prompt)),
        max_tokens_(max_tokens),
        tokenizer(std::move(tok)),
        stream_(stream),
        attempt(std::move(attempt_id)) {}

  void begin() {
    ++tries;
    DecodeRequest req;
    req.prompt = prompt_;
    req.prompt_tokens = record.token_count;
    req.max_tokens = max_tokens_;
    req.tokenizer = tokenizer;
    req.stream_text = stream_;
    req.sampling = sampling.get();
    auto ticket = worker_.options_.decoder->start(req, shared_from_this());  // dropping the ticket does not cancel
    if (GenerationCancels* cancels = worker_.options_.cancels) {
      cancels->started(record.id, std::move(ticket));
      if (finished) cancels->ended(record.id);  // it ended before start() returned
    }
  }
  // The generation's end: no more cancelling it.
  void end() {
    finished = true;
    if (GenerationCancels* cancels = worker_.options_.cancels) cancels->ended(record.id);
  }
  void on_text(std::string_view text, std::int64_t) override {
    if (!stream_) return;
    worker_.options_.replies->text(record.id, attempt, streamed, text);
    streamed += static_cast<std::int64_t>(text.size());
  }
  void on_done(DecodeResult result) override { worker_.generation_done(*this, std::move(result)); }
  void on_error(const DecoderError& e) override {
    last_error = e.what();
    // The engine blamed the request: the client's error, in the engine's words, never retried.
    if (!e.refusal().empty()) return worker_.generation_failed(*this, DeadLetterKind::engine_refused, e.refusal());
    // A retry may help, and no text went out that a second generation could contradict.
    if (e.retryable() && streamed == 0 && tries < worker_.options_.decoder_retry.attempts) {
      worker_.retry_generation(shared_from_this());
      return;
    }
    worker_.generation_failed(*this, DeadLetterKind::decode_failed,
                              "decoder " + worker_.options_.decoder->describe() + " failed after " + std::to_string(tries) +
                                  (tries == 1 ? " try" : " tries") + (e.retryable() ? "" : " (permanent)") + ": " + last_error);
  }

 private:
  Worker& worker_;

 public:
  Batch& batch;
  std::size_t index;
  Record record;

 private:
  std::string prompt_;
  std::int64_t max_tokens_;

 public:
  std::string tokenizer;

 private:
  bool stream_;

 public:
  std::string attempt;
  std::shared_ptr<const SamplingParams> sampling;  // the request's, null: the engine's defaults
  std::int64_t streamed = 0;  // bytes of text passed on
  std::atomic<bool> finished{false};
  int tries = 0;
  std::string last_error;
};

void Worker::start_generation(Batch& b, std::size_t i, Record r, const ProcessResult& res, std::shared_ptr<const SourceRecord> src,
                              const std::string& tokenizer) {
  {
    std::unique_lock lock(decode_mutex_);
    decode_cv_.wait(lock, [&] { return generations_ < options_.max_decodes; });
    ++generations_;
  }
  const std::int64_t max_tokens = res.answer_tokens ? *res.answer_tokens : src->max_tokens.value_or(0);
  const bool stream = src->stream && options_.replies;
  auto g = std::make_shared<Generation>(*this, b, i, std::move(r), res.prompt, max_tokens, tokenizer, stream,
                                        attempt_prefix_ + std::to_string(attempts_.fetch_add(1)));
  g->sampling = src->sampling;
  g->begin();
}

void Worker::generation_done(Generation& g, DecodeResult d) {
  g.end();
  Record& r = g.record;
  if (d.output_tokens < 0) {
    // The server did not say how many tokens it produced: count its text with the item's tokenizer.
    const auto n = processor_.count_text(g.tokenizer, d.text);
    d.output_tokens = n ? *n : 0;
  }
  r.decode_start = d.decode_start;
  r.first_token = d.first_token;
  r.decode_end = d.decode_end;
  r.output_tokens = d.output_tokens;
  r.finish_reason = d.finish_reason;
  if (options_.store_text) r.text = d.text;
  Slot& slot = g.batch.slots[g.index];
  if (options_.replies) {
    slot.answer = std::make_unique<reply::Reply>(reply::Reply::answered(r, std::move(d.text), std::move(d.finish_reason), g.attempt));
    slot.answer->decoder = decoder_kind_;
  }
  try {
    r.publish_start = monotonic_ns();
    publisher_->publish(std::move(r), reinterpret_cast<std::uintptr_t>(&slot));
  } catch (const std::exception&) {
    fail_io();  // as a failed publish on the worker's thread would: the run stops with it
  }
  release_generation();
}

void Worker::generation_failed(Generation& g, DeadLetterKind why, const std::string& reason) {
  g.end();
  const std::string kind = kind_name(why);
  // Counted before answered: a client that got the refusal finds the dead letter counted.
  const std::string id = g.record.id;
  dead_letter_item(g.batch, g.index, kind, reason, g.tokenizer);
  refuse(id, kind, reason);
  release_generation();
}

void Worker::release_generation() {
  {
    std::lock_guard lock(decode_mutex_);
    --generations_;
  }
  decode_cv_.notify_all();
}

void Worker::retry_generation(std::shared_ptr<Generation> g) {
  {
    std::lock_guard lock(decode_mutex_);
    retries_.push_back(std::move(g));
  }
  decode_cv_.notify_all();
}

// Retries wait their backoff here, not on the decoder's thread (which runs every generation).
void Worker::retry_loop() {
  std::unique_lock lock(decode_mutex_);
  for (;;) {
    decode_cv_.wait(lock, [&] { return retry_stop_ || !retries_.empty(); });
    if (retries_.empty()) return;
    std::shared_ptr<Generation> g = std::move(retries_.front());
    retries_.pop_front();
    const bool stopping = retry_stop_;
    lock.unlock();
    if (stopping) {
      generation_failed(*g, DeadLetterKind::decode_failed, "the worker stopped before a retry of the decoder: " + g->last_error);
    } else {
      options_.decoder_retry.wait(g->tries);
      g->begin();
    }
    lock.lock();
  }
}

void Worker::wait_generations() {
  std::unique_lock lock(decode_mutex_);
  decode_cv_.wait(lock, [&] { return generations_ == 0; });
}

void Worker::on_published(std::uintptr_t token, bool ok, std::int64_t acked_ns) {
  auto* slot = reinterpret_cast<Slot*>(token);
  slot->ok = ok;
  slot->acked = acked_ns;
  (ok ? ok_ : publish_failed_).fetch_add(1, std::memory_order_relaxed);
  if (slot->answer) {
    // Only a confirmed record is an answer; one the publisher gave up on is a refusal.
    std::unique_ptr<reply::Reply> answer = std::move(slot->answer);
    if (ok) {
      options_.replies->deliver(std::move(*answer));
    } else {
      refuse(answer->id, kind_name(DeadLetterKind::publish_failed), "the record was not confirmed by the log queue");
    }
  }
  item_settled(*slot->batch);
}

void Worker::item_settled(Batch& b) {
  if (b.pending.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    // Take the lock so a settler that just checked `pending` under it cannot miss this wake-up.
    std::lock_guard lock(mutex_);
    cv_.notify_all();
  }
}

PollResult Worker::poll_batch(std::shared_ptr<Batch>& out) {
  out.reset();
  // While batches are open, wait only briefly so that settling and extending go on (a finished
  // batch left undeleted through a long poll would time out and be delivered again).
  std::chrono::milliseconds max_wait = std::chrono::milliseconds::max();
  {
    std::lock_guard lock(mutex_);
    if (!open_.empty()) max_wait = std::min(options_.settle_interval, options_.visibility / 4);
  }
  auto b = std::make_shared<Batch>();
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

void Worker::open_batch(const std::shared_ptr<Batch>& b) {
  std::lock_guard lock(mutex_);
  open_.push_back(b);
  unsettled_ += b->entries.size();
}

void Worker::dead_letter_item(Batch& b, std::size_t i, const std::string& kind, const std::string& reason,
                              const std::string& tokenizer) {
  const SourceEntry& e = b.entries[i];
  std::string payload = !e.body.empty() ? e.body : (e.source ? e.source->prompt_json : std::string());
  dead_letters_.add(DeadLetter{kind, e.origin, tokenizer, reason, std::move(payload)});
  // Also where an operator of a shared queue looks (STREAM-dlq, `overhead status`), not only in
  // this worker's file. The file holds the letter either way, so a failed copy loses nothing.
  try {
    source_.dead_letter(e, kind + ": " + reason);
  } catch (const std::exception&) {
  }
  bad_.fetch_add(1, std::memory_order_relaxed);
  item_settled(b);
}

std::string Worker::answerable_id(const SourceEntry& e, const SourceRecord* src) {
  if (!options_.replies) return {};
  if (src) return src->id;  // noted before processing
  const auto address = peek_item_address(e.body);
  if (!address) return {};
  try {
    options_.replies->note(address->id, address->reply_to);
  } catch (const std::exception&) {
    return {};  // a reply queue this worker must not write to
  }
  return address->id;
}

void Worker::refuse(const std::string& id, const std::string& kind, const std::string& reason) {
  if (id.empty() || !options_.replies) return;
  try {
    options_.replies->deliver(reply::Reply::refused(id, kind, reason));
  } catch (const std::exception&) {
    // A reply path never stops the worker: the gateway times the request out.
  }
}

void Worker::process_item(Batch& b, std::size_t i) {
  SourceEntry& e = b.entries[i];
  if (options_.abandon && options_.abandon->load(std::memory_order_relaxed)) {
    b.slots[i].abandoned = true;
    item_settled(b);
    return;
  }
  // The item's cycle starts when the worker takes it up. Its batch may have arrived earlier (the
  // whole batch at once, and with prefetch before the previous batch was done), so the batch's
  // arrival is not the item's start; the receive round trip shows in the gap before a new batch.
  const std::int64_t taken_up = std::max(b.received, monotonic_ns());
  const std::int64_t seq = next_seq_++;
  items_.fetch_add(1, std::memory_order_relaxed);
  if (options_.progress) options_.progress->fetch_add(1, std::memory_order_relaxed);

  std::shared_ptr<const SourceRecord> src = e.source;
  std::string tokenizer = e.tokenizer;
  Record r;
  ProcessResult encoded;
  DecodeResult decoded;
  bool noted = false;  // the reply path knows the item: a refusal from here on is answered
  const auto refused = [&](const std::string& kind, const std::string& reason) {
    refuse(answerable_id(e, noted ? src.get() : nullptr), kind, reason);
    dead_letter_item(b, i, kind, reason, tokenizer);
  };
  try {
    if (!src) {
      WorkItem item = decode_item_body(e.body, e.origin);
      src = std::move(item.source);
      tokenizer = std::move(item.tokenizer);
    }
    if (options_.replies) {
      options_.replies->note(src->id, src->reply_to);  // may refuse the item (a queue it must not answer on)
      noted = true;
    }
    if (options_.max_prompt_bytes > 0 && src->prompt_bytes > options_.max_prompt_bytes)
      throw ItemError(kind_name(DeadLetterKind::prompt_too_large), "prompt of " + std::to_string(src->prompt_bytes) +
                                              " bytes is over --max-prompt-bytes " + std::to_string(options_.max_prompt_bytes));
    r.render_start = monotonic_ns();
    if (!options_.decoder) {
      const ProcessResult res = processor_.process(*src, tokenizer);
      r.encode_end = monotonic_ns();
      r.render_end = res.render_end;
      r.token_count = res.token_count;
    } else {
      encoded = processor_.process_for_decoder(*src, tokenizer, options_.decoder->needs_prompt());
      r.encode_end = encoded.encode_end ? encoded.encode_end : monotonic_ns();
      r.render_end = encoded.render_end;
      r.token_count = encoded.token_count;
      if (options_.max_decodes == 0) decoded = decode_item(r, encoded, *src, tokenizer);
    }
  } catch (const ItemError& err) {
    refused(err.kind(), err.reason());
    return;
  } catch (const std::exception& err) {
    refused(kind_name(DeadLetterKind::processing_error), err.what());
    return;
  }
  r.experiment = options_.experiment;
  r.tokenizer = tokenizer;  // a copy: a generation started below still counts its text with it
  r.experiment_tokenizer = r.experiment + '#' + r.tokenizer;
  r.id = src->id;
  r.model = src->model;
  r.start_time = iso8601_utc(r.render_start + wall_offset_ns_);
  r.end_time = iso8601_utc(r.encode_end + wall_offset_ns_);
  r.api_input = src->api_input;
  r.api_output = src->api_output;
  r.case_number = options_.case_number;
  r.worker = options_.name;
  r.seq = seq;
  r.batch = b.index;
  r.batch_boundary = i == 0;
  r.received = taken_up;
  r.prompt_chars = src->prompt_chars;
  r.prompt_bytes = src->prompt_bytes;
  r.run_id = options_.run_id;
  Slot& slot = b.slots[i];
  slot.key = r.experiment_tokenizer;
  slot.id = r.id;
  if (options_.decoder && options_.max_decodes > 0) {
    hook(WorkerStage::after_render);
    start_generation(b, i, std::move(r), encoded, std::move(src), tokenizer);
    return;
  }
  if (options_.replies) {
    slot.answer = std::make_unique<reply::Reply>(reply::Reply::answered(r, std::move(decoded.text), std::move(decoded.finish_reason)));
    slot.answer->decoder = decoder_kind_;
  }
  hook(WorkerStage::after_render);
  r.publish_start = monotonic_ns();
  publisher_->publish(std::move(r), reinterpret_cast<std::uintptr_t>(&slot));
  hook(WorkerStage::after_publish);
}

DecodeResult Worker::decode_item(Record& r, const ProcessResult& res, const SourceRecord& src, const std::string& tokenizer) {
  DecodeRequest req;
  req.prompt = res.prompt;
  req.prompt_tokens = res.token_count;
  req.max_tokens = res.answer_tokens ? *res.answer_tokens : src.max_tokens.value_or(0);
  req.tokenizer = tokenizer;
  req.sampling = src.sampling.get();
  DecodeResult d;
  std::string refusal;  // the engine blamed the request (DecoderError::engine_refused)
  const RetryOutcome out = call_with_retries(options_.decoder_retry, [&] {
    try {
      d = options_.decoder->decode(req);
    } catch (const DecoderError& e) {
      refusal = e.refusal();
      throw;
    }
  }, [] {});
  if (!out.ok && !refusal.empty()) throw ItemError(kind_name(DeadLetterKind::engine_refused), refusal);
  if (!out.ok) {
    // The letter's origin names the item; the reason does not repeat it.
    ItemError err(kind_name(DeadLetterKind::decode_failed),
                  "decoder " + options_.decoder->describe() + " failed after " + std::to_string(out.tries) +
                      (out.tries == 1 ? " try" : " tries") + (out.permanent ? " (permanent)" : "") + ": " + out.last_error);
    throw err;
  }
  if (d.output_tokens < 0) {
    // The server did not say how many tokens it produced: count its text with the item's tokenizer.
    const auto n = processor_.count_text(tokenizer, d.text);
    d.output_tokens = n ? *n : 0;
  }
  r.decode_start = d.decode_start;
  r.first_token = d.first_token;
  r.decode_end = d.decode_end;
  r.output_tokens = d.output_tokens;
  r.finish_reason = d.finish_reason;
  if (options_.store_text) r.text = d.text;
  return d;
}

void Worker::process_batch(Batch& b) {
  hook(WorkerStage::after_receive);
  for (std::size_t i = 0; i < b.entries.size(); ++i) process_item(b, i);
}

void Worker::extend_old_batches() {
  if (!source_.has_acks()) return;
  const std::int64_t now = monotonic_ns();
  const std::int64_t half = options_.visibility.count() * 500'000;  // half the timeout, in ns
  std::vector<std::shared_ptr<Batch>> old;
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

bool Worker::settle(bool wait) {
  std::shared_ptr<Batch> front;
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
  for (const Slot& s : front->slots)
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
      const Slot& s = front->slots[i];
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

bool Worker::send_deleted_stamps() {
  std::vector<StampPatch> patches = std::move(deleted_stamps_);
  deleted_stamps_.clear();
  return publisher_->publish_stamps(patches);
}

void Worker::send_deleted_stamps_if_idle() {
  if (deleted_stamps_.empty()) return;
  {
    std::lock_guard lock(mutex_);
    if (!open_.empty()) return;  // the next batch's patch carries them
  }
  send_deleted_stamps();
}

void Worker::fail_io() {
  std::lock_guard lock(mutex_);
  if (!io_error_) io_error_ = std::current_exception();
  aborted_ = true;
  notify_all_waiters();
}

void Worker::receive_loop() {
  try {
    for (;;) {
      {
        // Receive as far ahead as the in-flight bound allows, so that the processing thread
        // finds the next batch waiting at a boundary.
        std::unique_lock lock(mutex_);
        room_cv_.wait(lock, [&] { return aborted_ || unsettled_ + options_.batch <= options_.max_in_flight; });
        if (aborted_) return;
      }
      std::shared_ptr<Batch> b;
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
    fail_io();
  }
}

void Worker::settle_loop() {
  try {
    for (;;) {
      while (settle(false)) {
        std::lock_guard lock(mutex_);
        if (aborted_ || open_.empty() || open_.front()->pending.load(std::memory_order_acquire) != 0) break;
      }
      extend_old_batches();
      send_deleted_stamps_if_idle();
      std::unique_lock lock(mutex_);
      if (aborted_) return;
      if (!open_.empty() && open_.front()->pending.load(std::memory_order_acquire) == 0) continue;
      if (source_done_ && worker_done_ && open_.empty()) return;
      // Woken when the front batch's last item settles; the timeout keeps old batches extended.
      cv_.wait_for(lock, std::max(std::chrono::milliseconds(1), std::min(options_.settle_interval, options_.visibility / 4)));
    }
  } catch (...) {
    fail_io();
  }
}

WorkerStats Worker::run() {
  const std::int64_t start = monotonic_ns();
  const std::int64_t cpu_start = thread_cpu_ns();
  wall_offset_ns_ = wall_ns() - monotonic_ns();
  std::thread receiver, settler;
  const auto join_io = [&] {
    if (receiver.joinable()) receiver.join();
    if (settler.joinable()) settler.join();
  };
  try {
    // Prefetch hides a receive/delete round trip; a file source has none, so it runs in-line.
    if (options_.prefetch && source_.has_acks()) {
      receiver = std::thread([this] { receive_loop(); });
      settler = std::thread([this] { settle_loop(); });
      for (;;) {
        std::shared_ptr<Batch> b;
        {
          std::unique_lock lock(mutex_);
          batch_cv_.wait(lock, [&] { return aborted_ || !channel_.empty() || source_done_; });
          if (aborted_ || channel_.empty()) break;
          b = std::move(channel_.front());
          channel_.pop_front();
        }
        process_batch(*b);
      }
      wait_generations();
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
    } else {
      for (;;) {
        while (settle(false)) {
          std::lock_guard lock(mutex_);
          if (open_.empty() || open_.front()->pending.load(std::memory_order_acquire) != 0) break;
        }
        extend_old_batches();
        send_deleted_stamps_if_idle();
        for (;;) {  // room for one more batch within the in-flight bound
          {
            std::lock_guard lock(mutex_);
            if (unsettled_ + options_.batch <= options_.max_in_flight) break;
          }
          settle(true);
        }
        std::shared_ptr<Batch> b;
        const PollResult got = poll_batch(b);
        if (got == PollResult::finished) break;
        if (got == PollResult::quiet) continue;  // settle and extend, then poll again
        open_batch(b);
        process_batch(*b);
      }
      wait_generations();
      publisher_->flush();
      while (settle(true)) {
      }
      send_deleted_stamps();
    }
  } catch (...) {
    {
      std::lock_guard lock(mutex_);
      aborted_ = true;
    }
    notify_all_waiters();
    wait_generations();  // they hold this run's batches
    join_io();
    publisher_->abort();
    throw;
  }
  WorkerStats s;
  s.items = items_.load();
  s.ok = ok_.load();
  s.bad_input = bad_.load();
  s.publish_failed = publish_failed_.load();
  s.batches = batches_.load();
  s.delete_failures = delete_failures_.load();
  s.elapsed_ns = monotonic_ns() - start;
  s.cpu_ns = thread_cpu_ns() - cpu_start;
  s.publisher = publisher_->stats();
  return s;
}

}  // namespace overhead::pipe
