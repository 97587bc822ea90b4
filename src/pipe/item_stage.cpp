#include "pipe/item_stage.hpp"

#include <algorithm>
#include <optional>
#include <random>

#include "pipe/stop_strings.hpp"
#include "pipe/worker.hpp"
#include "ports/clock.hpp"
#include "ports/errors.hpp"

namespace overhead::pipe {

using ports::DecodeCallbacks;
using ports::Decoder;
using ports::DecodeRequest;
using ports::DecoderError;
using ports::DecodeResult;
using ports::DecodeTicket;
using ports::Failure;
using ports::is_retryable;
using ports::iso8601_utc;
using ports::ItemError;
using ports::monotonic_ns;
using ports::Record;
using ports::SamplingParams;
using ports::thread_cpu_ns;  // CLOCK_THREAD_CPUTIME_ID: an item's own stages, not the time its thread waited
using ports::wall_ns;

// How a generation ended, as its callbacks saw it.
struct ItemStage::Ending {
  enum class Kind { done, failed, retry };
  Kind kind = Kind::done;
  DecodeResult result;  // done
  DeadLetterKind why = DeadLetterKind::decode_failed;  // failed
  std::string reason;                                  // failed
};

// One generation of one item (Decoder::start): its record so far, what the decoder needs, and
// where its text goes. Owned by the decoder while it runs (the callbacks), so it outlives start()
// when the decoder is asynchronous. A waited generation hands its end to the thread that waits
// for it (wait()); an asynchronous one to the stage (generation_ended), on the decoder's thread.
class ItemStage::Generation final : public DecodeCallbacks, public std::enable_shared_from_this<Generation> {
 public:
  Generation(ItemStage& stage, ReceivedBatch& b, std::size_t i, Record r, std::string prompt,
             std::vector<std::uint32_t> prompt_ids, std::int64_t max_tokens, std::string tok,
             std::shared_ptr<const SamplingParams> sampling, std::string json_schema, bool waited, bool stream,
             std::string attempt_id, bool tools)
      : batch(b),
        index(i),
        record(std::move(r)),
        tokenizer(std::move(tok)),
        with_tools(tools),
        attempt(std::move(attempt_id)),
        stage_(stage),
        prompt_(std::move(prompt)),
        prompt_ids_(std::move(prompt_ids)),
        max_tokens_(max_tokens),
        sampling_(std::move(sampling)),
        json_schema_(std::move(json_schema)),
        waited_(waited),
        stream_(stream) {}

  void begin() {
    ++tries;
    // Each try holds its share of the engine's time from here to its end (conclude).
    if (EngineShare* share = stage_.engine_share_.get()) share_mark_ = share->begin(monotonic_ns());
    if (decoder().streams_token_ids()) {
      // A new try detokenizes anew (a retry follows only a try that passed no text on).
      detokenizer_ = stage_.processor_.detokenizer(tokenizer);
      if (!detokenizer_)
        return conclude(Ending{Ending::Kind::failed, {}, DeadLetterKind::decode_failed,
                               "decoder " + decoder().describe() + " streams token ids and no tokenizer \"" + tokenizer +
                                   "\" is loaded to turn them into text"});
      if (sampling_ && !sampling_->stop.empty()) stops_.emplace(sampling_->stop);
      own_text_.clear();
      ids_received_ = 0;
      stop_found_ = false;
      std::lock_guard lock(ticket_mutex_);
      ticket_.reset();
      cancel_for_stop_ = false;
    }
    DecodeRequest req;
    req.prompt = prompt_;
    req.prompt_ids = prompt_ids_;
    req.prompt_tokens = record.token_count;
    req.max_tokens = max_tokens_;
    req.tokenizer = tokenizer;
    req.stream_text = stream_;
    req.sampling = sampling_.get();
    req.json_schema = json_schema_;
    std::shared_ptr<DecodeTicket> ticket;  // dropping it does not cancel
    try {
      ticket = decoder().start(req, shared_from_this());
    } catch (const std::exception& e) {
      // start() promises its failures to on_error; one that throws anyway fails this try alike.
      on_error(DecoderError(decoder().describe() + ": " + e.what(), is_retryable(e) ? Failure::transient : Failure::permanent));
      return;
    }
    if (detokenizer_) {
      // A stop string found in our text ends the generation here; it may have been found before
      // start() returned the ticket.
      std::lock_guard lock(ticket_mutex_);
      ticket_ = ticket;
      if (cancel_for_stop_ && ticket_) ticket_->cancel();
    }
    // A waited generation is never registered: nobody can cancel what the worker's own thread
    // runs to its end (the batch runs' schedule).
    GenerationCancels* cancels = stage_.options_.cancels;
    if (waited_ || !cancels || !ticket) return;
    cancels->started(record.id, std::move(ticket));
    if (finished) cancels->ended(record.id);  // it ended before start() returned
  }
  // The generation's end: no more cancelling it.
  void end() {
    finished = true;
    if (GenerationCancels* cancels = stage_.options_.cancels; cancels && !waited_) cancels->ended(record.id);
  }
  // Waited: blocks until the generation ends (or fails a try).
  Ending wait() {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [&] { return ending_.has_value(); });
    Ending e = std::move(*ending_);
    ending_.reset();
    return e;
  }

  void on_text(std::string_view text, std::int64_t) override {
    if (!stream_) return;
    stage_.options_.replies->text(record.id, attempt, streamed, text);
    streamed += static_cast<std::int64_t>(text.size());
  }
  // The engine's ids: our text (the item's tokenizer, whole characters), the stop strings matched
  // on it and held back while they may still begin, then passed on as on_text would.
  void on_token_ids(std::span<const std::uint32_t> ids) override {
    if (!detokenizer_ || stop_found_) return;
    ids_received_ += static_cast<std::int64_t>(ids.size());
    piece_.clear();
    for (const std::uint32_t id : ids) detokenizer_->push(id, piece_);
    pass_on(piece_);
    if (stop_found_) {
      std::lock_guard lock(ticket_mutex_);
      cancel_for_stop_ = true;
      if (ticket_) ticket_->cancel();
    }
  }
  void on_done(DecodeResult result) override {
    if (detokenizer_) {
      if (!stop_found_) {
        piece_.clear();
        detokenizer_->finish(piece_);
        pass_on(piece_);
      }
      if (!stop_found_ && stops_) {
        piece_.clear();
        stops_->finish(piece_);
        own_text_ += piece_;
        on_text(piece_, -1);
      }
      result.text = std::move(own_text_);
      // Our stop string ended it (we cancelled the engine, or it stopped there itself).
      if (stop_found_) {
        result.cancelled = false;
        result.finish_reason = "stop";
      }
      if (result.output_tokens < 0) result.output_tokens = ids_received_;
    }
    conclude(Ending{Ending::Kind::done, std::move(result), {}, {}});
  }
  void on_error(const DecoderError& e) override {
    last_error = e.what();
    // The engine blamed the request: the client's error, in the engine's words, never retried.
    if (!e.refusal().empty()) return conclude(Ending{Ending::Kind::failed, {}, DeadLetterKind::engine_refused, e.refusal()});
    // A retry may help, and no text went out that a second generation could contradict.
    if (e.retryable() && streamed == 0 && tries < stage_.options_.decoder_retry.attempts)
      return conclude(Ending{Ending::Kind::retry, {}, {}, {}});
    conclude(Ending{Ending::Kind::failed, {}, DeadLetterKind::decode_failed,
                    "decoder " + decoder().describe() + " failed after " + std::to_string(tries) +
                        (tries == 1 ? " try" : " tries") + (e.retryable() ? "" : " (permanent)") + ": " + last_error});
  }

  ReceivedBatch& batch;
  std::size_t index;
  Record record;
  std::string tokenizer;
  bool with_tools;             // the request gave tools: the answer's calls are counted
  std::string attempt;         // names this generation to the reply path (streamed deltas); empty when waited
  std::int64_t streamed = 0;   // bytes of text passed on
  std::atomic<bool> finished{false};
  int tries = 0;
  std::string last_error;
  std::int64_t cpu_ns = 0;      // the worker's CPU time on the item before the generation (parse .. record)
  double engine_share_s = 0;    // its share of the engine's time over its tries (EngineShare)

 private:
  const Decoder& decoder() const { return *stage_.options_.decoder; }

 public:
  // The rendered prompt (empty when the decoder takes none).
  [[nodiscard]] std::string_view prompt() const { return prompt_; }

 private:
  // Detokenized text through the stop strings, into the answer and on to the client.
  void pass_on(std::string_view text) {
    std::string& out = passed_;
    out.clear();
    if (stops_) {
      stop_found_ = stops_->push(text, out);
    } else {
      out.assign(text);
    }
    own_text_ += out;
    if (!out.empty()) on_text(out, -1);
  }
  void conclude(Ending e) {
    if (EngineShare* share = stage_.engine_share_.get()) engine_share_s += share->end(monotonic_ns(), share_mark_);
    if (!waited_) return stage_.generation_ended(shared_from_this(), std::move(e));
    {
      std::lock_guard lock(mutex_);
      ending_ = std::move(e);
    }
    cv_.notify_one();
  }

  ItemStage& stage_;
  std::string prompt_;
  std::vector<std::uint32_t> prompt_ids_;
  std::int64_t max_tokens_;
  // Decoders that stream token ids (Decoder::streams_token_ids), on the decoder's thread:
  std::unique_ptr<tok::IncrementalDetokenizer> detokenizer_;
  std::optional<StopStrings> stops_;
  std::string own_text_, piece_, passed_;
  std::int64_t ids_received_ = 0;
  bool stop_found_ = false;
  std::mutex ticket_mutex_;  // ticket_ and cancel_for_stop_: set on the worker's thread, read on the decoder's
  std::shared_ptr<DecodeTicket> ticket_;
  bool cancel_for_stop_ = false;
  std::shared_ptr<const SamplingParams> sampling_;  // the request's, null: the engine's defaults
  const std::string json_schema_;                   // the item's constraint, empty: none
  const bool waited_;
  const bool stream_;
  double share_mark_ = 0;  // EngineShare::begin of the try in flight
  // Waited: the end, for wait().
  std::mutex mutex_;
  std::condition_variable cv_;
  std::optional<Ending> ending_;
};

ItemStage::ItemStage(Source& source, const Processor& processor, RecordSink& sink, DeadLetterSink& dead_letters,
                     const WorkerOptions& options, BatchLoop& loop)
    : source_(source), processor_(processor), dead_letters_(dead_letters), options_(options), loop_(loop) {
  if (options_.decoder) {
    const std::string d = options_.decoder->describe();
    decoder_kind_ = d.substr(0, d.find(':'));  // the kind only: the rest may name a host
  } else {
    decoder_kind_ = "none";
  }
  if (options_.pricer) engine_share_ = options_.engine_share ? options_.engine_share : std::make_shared<EngineShare>();
  if (options_.decoder && options_.max_decodes > 0) {
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

ItemStage::~ItemStage() {
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

void ItemStage::hook(WorkerStage stage) const {
  if (options_.fault) options_.fault(stage);
}

void ItemStage::begin_run() { wall_offset_ns_ = wall_ns() - monotonic_ns(); }

ItemStageStats ItemStage::stats() const {
  return ItemStageStats{items_.load(), ok_.load(), bad_.load(), publish_failed_.load(), prompt_token_mismatches_.load()};
}

void ItemStage::take_up(ReceivedBatch& b) {
  for (std::size_t i = 0; i < b.entries.size(); ++i) process_item(b, i);
}

void ItemStage::drain() {
  std::unique_lock lock(decode_mutex_);
  decode_cv_.wait(lock, [&] { return generations_ == 0; });
}

void ItemStage::process_item(ReceivedBatch& b, std::size_t i) {
  SourceEntry& e = b.entries[i];
  if (options_.abandon && options_.abandon->load(std::memory_order_relaxed)) {
    b.slots[i].abandoned = true;
    loop_.item_settled(b);
    return;
  }
  // The item's cycle starts when the worker takes it up. Its batch may have arrived earlier (the
  // whole batch at once, and with prefetch before the previous batch was done), so the batch's
  // arrival is not the item's start; the receive round trip shows in the gap before a new batch.
  const std::int64_t taken_up = std::max(b.received, monotonic_ns());
  const std::int64_t cpu_start = options_.pricer ? thread_cpu_ns() : 0;
  const std::int64_t seq = next_seq_++;
  items_.fetch_add(1, std::memory_order_relaxed);
  if (options_.progress) options_.progress->fetch_add(1, std::memory_order_relaxed);

  std::shared_ptr<const SourceRecord> src = e.source;
  std::string tokenizer = e.tokenizer;
  Record r;
  ProcessResult encoded;
  bool noted = false;  // the reply path knows the item: a refusal from here on is answered
  const auto refused = [&](const std::string& kind, const std::string& reason) {
    if (src && !src->batch.empty()) {
      // A batch's line is answered by its record, whatever became of it.
      Record er;
      er.render_start = er.encode_end = monotonic_ns();
      fill_record(er, *src, tokenizer, b, i, taken_up, seq);
      publish_batch_refusal(b.slots[i], std::move(er), kind, reason);
      return;
    }
    refuse(answerable_id(e, noted ? src.get() : nullptr), kind, reason);
    dead_letter_item(b, i, kind, reason, tokenizer);
  };
  try {
    if (!src) {
      WorkItem item = parse_item_body(e.body, e.origin);
      src = std::move(item.source);
      tokenizer = std::move(item.tokenizer);
    }
    if (options_.replies && src->batch.empty()) {  // a batch's item is answered by its record alone
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
      encoded = processor_.process_for_decoder(*src, tokenizer, options_.decoder->prompt_form());
      r.encode_end = encoded.encode_end ? encoded.encode_end : monotonic_ns();
      r.render_end = encoded.render_end;
      r.token_count = encoded.token_count;
    }
  } catch (const ItemError& err) {
    refused(err.kind(), err.reason());
    return;
  } catch (const std::exception& err) {
    refused(kind_name(DeadLetterKind::processing_error), err.what());
    return;
  }
  fill_record(r, *src, tokenizer, b, i, taken_up, seq);
  const std::int64_t cpu_ns = options_.pricer ? thread_cpu_ns() - cpu_start : 0;
  ItemSlot& slot = b.slots[i];
  slot.key = r.experiment_tokenizer;
  slot.id = r.id;
  hook(WorkerStage::after_render);
  if (!options_.decoder) {
    price_record(r, cpu_ns, 0, false);
    publish_record(slot, std::move(r), {}, {}, {});
  } else if (options_.max_decodes > 0) {
    start_generation(b, i, std::move(r), std::move(encoded), *src, tokenizer, cpu_ns);
    return;  // its end publishes, on the decoder's thread
  } else if (!generate_waited(b, i, std::move(r), std::move(encoded), *src, tokenizer, cpu_ns)) {
    return;  // dead-lettered
  }
  hook(WorkerStage::after_publish);
}

void ItemStage::fill_record(Record& r, const SourceRecord& src, const std::string& tokenizer, const ReceivedBatch& b,
                            std::size_t i, std::int64_t taken_up, std::int64_t seq) const {
  r.experiment = src.batch.empty() ? options_.experiment : src.batch;  // a batch's records are its own experiment
  r.tokenizer = tokenizer;  // a copy: a generation started later still counts its text with it
  r.experiment_tokenizer = r.experiment + '#' + r.tokenizer;
  r.id = src.id;
  r.model = src.model;
  r.start_time = iso8601_utc(r.render_start + wall_offset_ns_);
  r.end_time = iso8601_utc(r.encode_end + wall_offset_ns_);
  r.api_input = src.api_input;
  r.api_output = src.api_output;
  r.case_number = options_.case_number;
  r.worker = options_.name;
  r.seq = seq;
  r.batch = b.index;
  r.batch_boundary = i == 0;
  r.received = taken_up;
  r.prompt_chars = src.prompt_chars;
  r.prompt_bytes = src.prompt_bytes;
  r.run_id = options_.run_id;
  r.constraint = src.constraint;
  r.key_name = src.key_name;  // the API key the gateway admitted it under: its cost is charged there
}

void ItemStage::price_record(Record& r, std::int64_t cpu_ns, double engine_share_s, bool decoded) const {
  if (!options_.pricer) return;
  const cost::RequestCost c = options_.pricer->price(
      {static_cast<double>(cpu_ns) / 1e9, static_cast<double>(r.token_count), static_cast<double>(r.output_tokens),
       engine_share_s, decoded});
  r.cost_e_usd = c.e_usd;
  r.cost_d_usd = c.d_usd;
  r.cost_usd = c.usd();
  r.price_source = options_.pricer->source();
}

void ItemStage::publish_record(ItemSlot& slot, Record r, std::string text, std::string finish_reason, std::string attempt) {
  if (options_.replies && r.experiment == options_.experiment) {  // a batch's item waits for no answer
    slot.answer = std::make_unique<reply::Reply>(reply::Reply::answered(r, std::move(text), std::move(finish_reason), std::move(attempt)));
    slot.answer->decoder = decoder_kind_;
  }
  r.publish_start = monotonic_ns();
  publisher_->publish(std::move(r), reinterpret_cast<std::uintptr_t>(&slot));
}

std::shared_ptr<ItemStage::Generation> ItemStage::make_generation(ReceivedBatch& b, std::size_t i, Record r, ProcessResult&& res,
                                                                  const SourceRecord& src, const std::string& tokenizer,
                                                                  bool waited, std::int64_t cpu_ns) {
  const std::int64_t max_tokens = res.answer_tokens ? *res.answer_tokens : src.max_tokens.value_or(0);
  // Text deltas only when generations overlap: one waited for answers whole, at its end.
  const bool stream = !waited && src.stream && options_.replies;
  std::string attempt = waited ? std::string() : attempt_prefix_ + std::to_string(attempts_.fetch_add(1));
  r.prompt_tokens_sent = res.prompt_tokens_sent;
  auto g = std::make_shared<Generation>(*this, b, i, std::move(r), std::move(res.prompt), std::move(res.prompt_ids), max_tokens,
                                        tokenizer, src.sampling, src.json_schema, waited, stream, std::move(attempt),
                                        !src.tools_json.empty());
  g->cpu_ns = cpu_ns;
  return g;
}

bool ItemStage::generate_waited(ReceivedBatch& b, std::size_t i, Record r, ProcessResult&& res, const SourceRecord& src,
                                const std::string& tokenizer, std::int64_t cpu_ns) {
  const auto g = make_generation(b, i, std::move(r), std::move(res), src, tokenizer, true, cpu_ns);
  for (;;) {
    g->begin();
    Ending e = g->wait();
    if (e.kind != Ending::Kind::retry) return finish_generation(*g, std::move(e));
    options_.decoder_retry.wait(g->tries);
  }
}

void ItemStage::start_generation(ReceivedBatch& b, std::size_t i, Record r, ProcessResult&& res, const SourceRecord& src,
                                 const std::string& tokenizer, std::int64_t cpu_ns) {
  {
    std::unique_lock lock(decode_mutex_);
    decode_cv_.wait(lock, [&] { return generations_ < options_.max_decodes; });
    ++generations_;
  }
  make_generation(b, i, std::move(r), std::move(res), src, tokenizer, false, cpu_ns)->begin();
}

bool ItemStage::finish_generation(Generation& g, Ending e) {
  const std::int64_t cpu_start = options_.pricer ? thread_cpu_ns() : 0;  // on this thread: the worker's or the decoder's
  g.end();
  if (e.kind == Ending::Kind::failed) {
    const std::string kind = kind_name(e.why);
    // Counted before answered: a client that got the refusal finds the dead letter counted.
    const std::string id = g.record.id;
    if (g.record.experiment != options_.experiment) {  // a batch's item: its line is answered by a record
      publish_batch_refusal(g.batch.slots[g.index], std::move(g.record), kind, e.reason);
      return false;
    }
    dead_letter_item(g.batch, g.index, kind, e.reason, g.tokenizer);
    refuse(id, kind, e.reason);
    return false;
  }
  DecodeResult& d = e.result;
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
  if (d.engine_prompt_tokens >= 0) r.engine_prompt_tokens = d.engine_prompt_tokens;
  const AnswerCounts shape =
      processor_.count_answer(g.tokenizer, d.text, g.with_tools, g.prompt(), options_.answer_parsers);
  r.tool_calls = shape.tool_calls;
  r.reasoning_tokens = shape.reasoning_tokens;
  // The engine read another prompt than the one we counted: its tokenizer is not the item's.
  if (r.prompt_tokens_mismatch()) prompt_token_mismatches_.fetch_add(1, std::memory_order_relaxed);
  if (options_.store_text || r.experiment != options_.experiment) r.text = d.text;  // a batch's answers are its output
  // E: the worker's CPU time on the item before the generation and here; the publish that follows
  // is not in it (the record it sends carries the price).
  price_record(r, options_.pricer ? g.cpu_ns + thread_cpu_ns() - cpu_start : 0, g.engine_share_s, true);
  publish_record(g.batch.slots[g.index], std::move(r), std::move(d.text), std::move(d.finish_reason), g.attempt);
  return true;
}

void ItemStage::generation_ended(std::shared_ptr<Generation> g, Ending e) {
  if (e.kind == Ending::Kind::retry) {
    {
      std::lock_guard lock(decode_mutex_);
      retries_.push_back(std::move(g));
    }
    decode_cv_.notify_all();
    return;
  }
  try {
    finish_generation(*g, std::move(e));
  } catch (const std::exception&) {
    loop_.fail();  // as a failed publish on the worker's thread would: the run stops with it
  }
  release_generation();
}

void ItemStage::release_generation() {
  {
    std::lock_guard lock(decode_mutex_);
    --generations_;
  }
  decode_cv_.notify_all();
}

// Retries wait their backoff here, not on the decoder's thread (which runs every generation).
void ItemStage::retry_loop() {
  std::unique_lock lock(decode_mutex_);
  for (;;) {
    decode_cv_.wait(lock, [&] { return retry_stop_ || !retries_.empty(); });
    if (retries_.empty()) return;
    std::shared_ptr<Generation> g = std::move(retries_.front());
    retries_.pop_front();
    const bool stopping = retry_stop_;
    lock.unlock();
    if (stopping) {
      generation_ended(g, Ending{Ending::Kind::failed, {}, DeadLetterKind::decode_failed,
                                 "the worker stopped before a retry of the decoder: " + g->last_error});
    } else {
      options_.decoder_retry.wait(g->tries);
      g->begin();
    }
    lock.lock();
  }
}

void ItemStage::on_published(std::uintptr_t token, bool ok, std::int64_t acked_ns) {
  auto* slot = reinterpret_cast<ItemSlot*>(token);
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
  loop_.item_settled(*slot->batch);
}

void ItemStage::publish_batch_refusal(ItemSlot& slot, Record r, const std::string& kind, const std::string& reason) {
  const ReceivedBatch& b = *slot.batch;
  const std::size_t i = static_cast<std::size_t>(&slot - b.slots.data());
  const SourceEntry& e = b.entries[i];
  dead_letters_.add(DeadLetter{kind, e.origin, r.tokenizer, reason, !e.body.empty() ? e.body : std::string()});
  bad_.fetch_add(1, std::memory_order_relaxed);
  slot.key = r.experiment_tokenizer;
  slot.id = r.id;
  r.finish_reason = "error";
  r.text = kind + ": " + reason;
  publish_record(slot, std::move(r), {}, {}, {});
}

void ItemStage::dead_letter_item(ReceivedBatch& b, std::size_t i, const std::string& kind, const std::string& reason,
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
  loop_.item_settled(b);
}

std::string ItemStage::answerable_id(const SourceEntry& e, const SourceRecord* src) {
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

void ItemStage::refuse(const std::string& id, const std::string& kind, const std::string& reason) {
  if (id.empty() || !options_.replies) return;
  try {
    options_.replies->deliver(reply::Reply::refused(id, kind, reason));
  } catch (const std::exception&) {
    // A reply path never stops the worker: the gateway times the request out.
  }
}

}  // namespace overhead::pipe
