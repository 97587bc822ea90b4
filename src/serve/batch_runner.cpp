#include "serve/batch_runner.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <map>
#include <span>
#include <unordered_set>
#include <vector>

#include "serve/binding_cache.hpp"
#include "serve/completion_json.hpp"
#include "serve/request_json.hpp"
#include "util/hash.hpp"
#include "util/random_id.hpp"

namespace overhead::serve {
namespace {

using Json = nlohmann::ordered_json;

std::int64_t now_s() { return static_cast<std::int64_t>(std::time(nullptr)); }

constexpr std::size_t kMaxReportedErrors = 100;  // a failed validation lists the first errors only
constexpr std::int64_t kCheckpointLines = 200;   // `enqueued` saved this often while sending
constexpr int kSendTries = 5;

// The endpoints OpenAI's Batch API takes, and those this gateway serves.
bool is_served_endpoint(const std::string& e) { return e == "/v1/chat/completions" || e == "/v1/completions"; }
bool is_openai_endpoint(const std::string& e) {
  return e == "/v1/chat/completions" || e == "/v1/completions" || e == "/v1/embeddings" || e == "/v1/responses";
}

// The HTTP status a worker's refusal (Record::text "KIND: REASON") would have had on the chat route.
int refusal_status(const std::string& kind) {
  if (kind == "decode_failed") return 502;
  if (kind == "publish_failed" || kind == "processing_error") return 500;
  if (kind == "unknown_tokenizer") return 404;
  return 400;
}

// A line's answer in OpenAI's output form, read by `shape` as the chat route reads an answer (null:
// the text is all content). A refusal, or a constrained answer that broke its constraint, is an
// error line (`is_error`), as OpenAI files it.
std::string output_line(const Batch& b, const ports::Record& r, const AnswerShape* shape, bool& is_error) {
  const std::string digest = util::text_digest(b.id + "\n" + r.id);
  Json line;
  line["id"] = "batch_req_" + digest;
  line["custom_id"] = r.id;
  Json response;
  response["request_id"] = "req_" + digest;
  const auto error_response = [&](int status, const std::string& message, const std::string& code, const std::string& param) {
    response["status_code"] = status;
    response["body"] = Json{{"error", Json{{"message", message}, {"type", status >= 500 ? "server_error" : "invalid_request_error"},
                                           {"param", param.empty() ? Json() : Json(param)}, {"code", code}}}};
    is_error = true;
  };
  is_error = false;
  if (r.finish_reason == "error") {
    const std::size_t colon = r.text.find(':');
    const std::string kind = colon == std::string::npos ? r.text : r.text.substr(0, colon);
    const std::string reason = colon == std::string::npos ? r.text : r.text.substr(std::min(r.text.size(), colon + 2));
    error_response(refusal_status(kind), reason, kind, "");
  } else {
    Completion c;
    c.text_completion = b.endpoint == "/v1/completions";
    c.id = (c.text_completion ? "cmpl-" : "chatcmpl-") + digest;
    c.created = now_s();
    c.model = r.model;
    c.prompt_tokens = r.engine_prompt_tokens.value_or(r.prompt_tokens_sent > 0 ? r.prompt_tokens_sent : r.token_count);
    fill_answer(c, r.text, r.finish_reason.empty() ? "stop" : r.finish_reason, shape);
    c.completion_tokens = r.output_tokens;
    c.fingerprint.clear();  // the answering worker's decoder is not known here
    if (c.invalid_output) {
      error_response(c.invalid_output->status, c.invalid_output->message, c.invalid_output->code, c.invalid_output->param);
    } else {
      response["status_code"] = 200;
      response["body"] = completion_body(c);
    }
  }
  line["response"] = std::move(response);
  line["error"] = nullptr;
  return line.dump() + "\n";
}

std::string unanswered_line(const Batch& b, const std::string& custom_id, const char* code, const char* message) {
  Json line;
  line["id"] = "batch_req_" + util::text_digest(b.id + "\n" + custom_id);
  line["custom_id"] = custom_id;
  line["response"] = nullptr;
  line["error"] = Json{{"code", code}, {"message", message}};
  return line.dump() + "\n";
}

// The custom_id of a line that passed validation (its JSON is known good).
std::string custom_id_of(const std::string& line) {
  const Json j = Json::parse(line, nullptr, false);
  return j.is_object() && j.contains("custom_id") && j["custom_id"].is_string() ? j["custom_id"].get<std::string>() : std::string();
}

bool blank(const std::string& line) { return line.find_first_not_of(" \t") == std::string::npos; }

}  // namespace

BatchRunner::BatchRunner(BatchBackends backends, BindingCache& bindings, BatchLimits limits)
    : b_(std::move(backends)), bindings_(bindings), limits_(limits), shapes_(limits_.parsers) {
  if (b_.driver.empty()) b_.driver = util::random_hex_id("gateway-", 8);
  if (!b_.lane_durable)
    for (const auto& doc : b_.state->open_batches()) resend_.insert(doc.id);
  thread_ = std::thread([this] { run(); });
}

BatchRunner::~BatchRunner() {
  {
    std::lock_guard lock(wake_mutex_);
    stop_ = true;
  }
  wake_cv_.notify_all();
  thread_.join();
}

void BatchRunner::save(const Batch& b) { b_.state->put(ports::BatchKind::batch, to_document(b)); }

std::optional<Batch> BatchRunner::get(const std::string& id) {
  const auto doc = b_.state->get(ports::BatchKind::batch, id);
  if (!doc) return std::nullopt;
  return batch_from_document(*doc);
}

BatchFile BatchRunner::add_file(const std::string& filename, const std::string& purpose, std::string_view content,
                               const std::string& owner) {
  return add_file(filename, purpose, owner, [content](ports::ObjectWriter& out) {
    out.append(content);
    return static_cast<std::int64_t>(content.size());
  });
}

BatchFile BatchRunner::add_file(const std::string& filename, const std::string& purpose, const std::string& owner,
                               const std::function<std::int64_t(ports::ObjectWriter&)>& fill) {
  BatchFile f;
  f.id = util::random_hex_id("file-", 12);
  f.created_at = now_s();
  f.filename = filename;
  f.purpose = purpose;
  f.owner = owner;
  {
    const auto out = b_.files->write(f.object_key());
    f.bytes = fill(*out);
    out->finish();  // the content first: a document never names a missing object
  }
  b_.state->put(ports::BatchKind::file, to_document(f));
  return f;
}

Batch BatchRunner::create(const std::string& input_file_id, const std::string& endpoint, const std::string& window,
                          const Json& metadata, const std::string& owner, const std::vector<std::string>& owner_models) {
  if (!is_openai_endpoint(endpoint))
    throw RequestError{{400, "endpoint must be one of /v1/chat/completions, /v1/completions, /v1/embeddings, /v1/responses", "invalid_request_error",
                        "endpoint", "invalid_value"}};
  if (!is_served_endpoint(endpoint))
    throw RequestError{{400, "endpoint " + endpoint + " is not served by this gateway; batches run /v1/chat/completions and /v1/completions",
                        "invalid_request_error", "endpoint", "unsupported_value"}};
  const auto window_s = completion_window_seconds(window);
  if (!window_s)
    throw RequestError{{400, "completion_window must be \"24h\" (or \"<N>h\", N in 1..168), not \"" + window + "\"", "invalid_request_error",
                        "completion_window", "invalid_value"}};
  if (!metadata.is_null()) {
    if (!metadata.is_object() || metadata.size() > 16)
      throw RequestError{{400, "metadata must be an object of at most 16 keys", "invalid_request_error", "metadata", "invalid_value"}};
    for (const auto& [k, v] : metadata.items())
      if (k.size() > 64 || !v.is_string() || v.get_ref<const std::string&>().size() > 512)
        throw RequestError{{400, "metadata." + k + " must be a string of at most 512 characters under a key of at most 64",
                            "invalid_request_error", "metadata", "invalid_value"}};
  }
  const auto doc = b_.state->get(ports::BatchKind::file, input_file_id);
  const auto file = doc ? file_in_document(*doc) : std::nullopt;
  // Another key's file is as unknown as a missing one: its existence is not told.
  if (!file || file->owner != owner)
    throw RequestError{{404, "No such file: " + input_file_id, "invalid_request_error", "input_file_id", "file_not_found"}};
  if (file->purpose != "batch")
    throw RequestError{{400, "The file " + input_file_id + " was not uploaded with purpose \"batch\"", "invalid_request_error", "input_file_id",
                        "invalid_value"}};
  Batch b;
  {
    std::lock_guard lock(mutex_);
    if (b_.state->open_batches().size() >= limits_.max_open_batches)
      throw RequestError{{429, "There are " + std::to_string(limits_.max_open_batches) + " batches in flight, the limit; retry when one is done",
                          "requests", "", "rate_limit_exceeded"}};
    b.id = util::random_hex_id("batch_", 12);
    b.endpoint = endpoint;
    b.input_file_id = input_file_id;
    b.completion_window = window;
    b.window_s = *window_s;
    b.created_at = now_s();
    b.expires_at = b.created_at + *window_s;
    b.metadata = metadata;
    b.owner = owner;
    b.owner_models = owner_models;
    save(b);
  }
  {
    std::lock_guard lock(wake_mutex_);
    woken_ = true;
  }
  wake_cv_.notify_all();
  return b;
}

std::optional<Batch> BatchRunner::cancel(const std::string& id) {
  std::optional<Batch> b;
  {
    std::lock_guard lock(mutex_);
    b = get(id);
    if (!b) return std::nullopt;
    if (b->status == BatchStatus::cancelling || b->status == BatchStatus::cancelled) return b;
    if (!is_open(b->status) || b->status == BatchStatus::finalizing)
      throw RequestError{{409, "The batch is " + std::string(status_name(b->status)) + "; only a validating or in_progress batch can be cancelled",
                          "invalid_request_error", "", "batch_not_cancellable"}};
    b->status = BatchStatus::cancelling;
    b->cancelling_at = now_s();
    save(*b);
  }
  {
    std::lock_guard lock(wake_mutex_);
    woken_ = true;
  }
  wake_cv_.notify_all();
  return b;
}

Batch BatchRunner::save_unless_moved(const Batch& b, BatchStatus expected) {
  std::lock_guard lock(mutex_);
  const auto stored = get(b.id);
  if (stored && (stored->status != expected || stored->driver != b.driver)) return *stored;
  save(b);
  return b;
}

bool BatchRunner::hold(Batch& b) {
  const std::int64_t now = now_s();
  const std::int64_t lease = limits_.lease.count();
  if (b.driver == b_.driver) {
    if (now - b.driven_at < std::max<std::int64_t>(1, lease / 3)) return true;  // ours, renewed lately
  } else if (!b.driver.empty() && now - b.driven_at < lease) {
    return false;  // another gateway's, and it renews it
  }
  // Renew ours, or take a free or lapsed one: written, then read back (the later writer's name stands).
  const bool taken_over = !b.driver.empty() && b.driver != b_.driver;
  {
    std::lock_guard lock(mutex_);
    const auto stored = get(b.id);
    if (!stored || stored->status != b.status || stored->driver != b.driver || stored->driven_at != b.driven_at)
      return false;  // changed since it was read: the next round looks again
    b.driver = b_.driver;
    b.driven_at = now;
    save(b);
  }
  const auto again = get(b.id);
  if (!again || again->driver != b_.driver) return false;
  // Taken from a gateway whose lane was in its process: the items it held died with it, so the
  // lines without a record are sent again here (as after this gateway's own restart).
  if (taken_over && !b_.lane_durable) resend_.insert(b.id);
  return true;
}

void BatchRunner::run() {
  for (;;) {
    {
      std::unique_lock lock(wake_mutex_);
      if (stop_) return;
      woken_ = false;
    }
    try {
      for (const auto& doc : b_.state->open_batches()) {
        {
          std::lock_guard lock(wake_mutex_);
          if (stop_) return;
        }
        try {
          step(doc.id);
        } catch (const std::exception& e) {
          // A store or queue that failed: the batch's state is as last saved; the next round retries.
          std::fprintf(stderr, "overhead serve: batch %s: %s (retried)\n", doc.id.c_str(), e.what());
        }
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "overhead serve: the batch store failed: %s (retried)\n", e.what());
    }
    std::unique_lock lock(wake_mutex_);
    wake_cv_.wait_for(lock, limits_.poll_interval, [&] { return stop_ || woken_; });
  }
}

void BatchRunner::step(const std::string& id) {
  auto b = get(id);
  if (!b || !hold(*b)) return;
  switch (b->status) {
    case BatchStatus::validating:
      validate(*b);
      return;
    case BatchStatus::in_progress:
      if (now_s() >= b->expires_at) {
        Batch done = write_results(*b, "batch_expired");
        done.status = BatchStatus::expired;
        done.expired_at = now_s();
        (void)save_unless_moved(done, BatchStatus::in_progress);
        return;
      }
      if (resend_.erase(b->id) > 0) {
        // The lane's items died with the last process: send again what has no record.
        std::unordered_set<std::string> answered;
        b_.records->scan(b->id, [&](const ports::Record& r) { answered.insert(r.id); });
        enqueue(*b, &answered);
        b = get(b->id);
        if (!b) return;
      }
      if (b->enqueued < b->total) enqueue(*b);
      count(*b);
      return;
    case BatchStatus::finalizing: {
      Batch done = write_results(*b, nullptr);
      done.status = BatchStatus::completed;
      done.completed_at = now_s();
      save_unless_moved(done, BatchStatus::finalizing);
      return;
    }
    case BatchStatus::cancelling: {
      Batch done = write_results(*b, nullptr);
      done.status = BatchStatus::cancelled;
      done.cancelled_at = now_s();
      save_unless_moved(done, BatchStatus::cancelling);
      return;
    }
    default:
      return;
  }
}

void BatchRunner::validate(Batch b) {
  std::vector<LineError> errors;
  std::size_t lines = 0;
  bool over = false;
  const auto file = b_.state->get(ports::BatchKind::file, b.input_file_id);
  if (!file) {
    errors.push_back({"file_not_found", "The input file " + b.input_file_id + " was deleted", "input_file_id", 0});
  } else {
    ObjectLines in(*b_.files, file_from_document(*file).object_key(), limits_.lines.max_line_bytes);
    std::unordered_set<std::string> ids;  // bounded by max_lines
    std::string line;
    bool too_long = false;
    while (errors.size() < kMaxReportedErrors && in.next(line, too_long)) {
      if (!too_long && blank(line)) continue;
      if (++lines > limits_.max_lines) {
        over = true;
        break;
      }
      if (too_long) {
        errors.push_back({"request_too_large", "Line " + std::to_string(in.line_number()) + ": over the gateway's limit of " +
                                                   std::to_string(limits_.lines.max_line_bytes) + " bytes per request", "body", in.line_number()});
        continue;
      }
      auto checked = check_batch_line(line, in.line_number(), b, bindings_, limits_.lines);
      if (auto* e = std::get_if<LineError>(&checked)) {
        errors.push_back(std::move(*e));
        continue;
      }
      const std::string& custom_id = std::get<CheckedLine>(checked).source.id;
      if (!ids.insert(custom_id).second)
        errors.push_back({"duplicate_custom_id", "Line " + std::to_string(in.line_number()) + ": custom_id \"" + custom_id +
                                                     "\" is used by an earlier line; each line needs its own", "custom_id", in.line_number()});
    }
    if (over)
      errors.push_back({"too_many_lines", "The input file holds more than " + std::to_string(limits_.max_lines) + " requests, the limit of one batch", "",
                        0});
    else if (lines == 0 && errors.empty())
      errors.push_back({"empty_file", "The input file holds no request", "input_file_id", 0});
  }
  if (!errors.empty()) {
    Json data = Json::array();
    for (const auto& e : errors) data.push_back(e.json());
    b.errors = Json{{"object", "list"}, {"data", std::move(data)}};
    b.status = BatchStatus::failed;
    b.failed_at = now_s();
  } else {
    b.status = BatchStatus::in_progress;
    b.in_progress_at = now_s();
    b.total = static_cast<std::int64_t>(lines);
  }
  (void)save_unless_moved(b, BatchStatus::validating);
}

void BatchRunner::enqueue(Batch b, const std::unordered_set<std::string>* answered) {
  // The lane holds its window (items of every batch waiting or being answered): the rest is sent
  // at a later step, once the workers have answered some (the batch's counts move in between).
  const auto lane_full = [&] {
    const auto held = b_.lane->counts();
    return held.visible + held.in_flight >= limits_.lane_window;
  };
  if (!answered && lane_full()) return;
  const std::int64_t from = answered ? 0 : b.enqueued;
  const auto file = b_.state->get(ports::BatchKind::file, b.input_file_id);
  if (!file) throw std::runtime_error("the input file " + b.input_file_id + " was deleted while the batch was sent");
  ObjectLines in(*b_.files, file_from_document(*file).object_key(), limits_.lines.max_line_bytes);
  std::int64_t index = 0;  // non-blank lines before this one
  if (!answered && b.enqueued_offset > 0) {  // go on from the last line sent, not from the start
    in.seek(static_cast<std::uint64_t>(b.enqueued_offset), static_cast<std::size_t>(b.enqueued_line));
    index = b.enqueued;
  }
  std::string line;
  bool too_long = false;
  std::vector<std::string> pending;
  std::size_t pending_bytes = 0;
  const auto send = [&] {
    for (int tries = 0; !pending.empty(); ++tries) {
      const auto outcome = b_.lane->send_batch(pending);
      std::vector<std::string> left;
      for (std::size_t i = 0; i < outcome.size(); ++i) {
        if (!outcome[i].ok()) left.push_back(std::move(pending[i]));
        else lines_sent_.fetch_add(1, std::memory_order_relaxed);
      }
      if (!left.empty() && tries + 1 >= kSendTries)
        throw std::runtime_error("the batch lane refused an item: " + outcome.front().failure.value_or(ports::EntryFailure{}).message);
      pending = std::move(left);
    }
    pending_bytes = 0;
  };
  while (in.next(line, too_long)) {
    if (!too_long && blank(line)) continue;
    if (index++ < from) continue;  // sent before a restart
    auto checked = check_batch_line(line, in.line_number(), b, bindings_, limits_.lines);
    auto* ok = std::get_if<CheckedLine>(&checked);
    if (!ok) throw std::runtime_error("line " + std::to_string(in.line_number()) + " no longer passes its check: the input file changed");
    if (answered && (answered->count(ok->source.id) || index > b.enqueued)) continue;  // answered, or never sent
    if (pending.size() == ports::kMaxQueueBatch || pending_bytes + ok->body.size() > ports::kMaxBatchBytes) send();
    pending_bytes += ok->body.size();
    pending.push_back(std::move(ok->body));
    if (index % kCheckpointLines == 0 && !answered) {
      send();
      b.enqueued = index;
      b.enqueued_offset = static_cast<std::int64_t>(in.position());
      b.enqueued_line = static_cast<std::int64_t>(in.line_number());
      b.driven_at = now_s();  // the lease renewed while sending
      const Batch stored = save_unless_moved(b, BatchStatus::in_progress);
      // Cancelled meanwhile, or another gateway took the batch: the rest is not sent from here.
      if (stored.status != BatchStatus::in_progress || stored.driver != b_.driver) return;
      if (lane_full()) return;
    }
  }
  send();
  if (answered) return;  // a resend changes no count
  b.enqueued = index;
  b.enqueued_offset = static_cast<std::int64_t>(in.position());
  b.enqueued_line = static_cast<std::int64_t>(in.line_number());
  (void)save_unless_moved(b, BatchStatus::in_progress);
}

void BatchRunner::count(Batch b) {
  b = get(b.id).value_or(b);  // with what enqueue saved
  if (b.status != BatchStatus::in_progress) return;
  std::int64_t completed = 0, failed = 0;
  double cost = 0;
  b_.records->scan(b.id, [&](const ports::Record& r) {
    (r.finish_reason == "error" ? failed : completed) += 1;
    cost += r.cost_usd;
  });
  const bool all = b.enqueued >= b.total && completed + failed >= b.total;
  if (completed == b.completed && failed == b.failed && !all) return;
  b.completed = completed;
  b.failed = failed;
  b.cost_usd = cost;
  if (all) {
    b.status = BatchStatus::finalizing;
    b.finalizing_at = now_s();
  }
  const Batch stored = save_unless_moved(b, BatchStatus::in_progress);
  if (stored.status == BatchStatus::finalizing) step(b.id);
}

Batch BatchRunner::write_results(Batch b, const char* rest_code) {
  // One line per custom_id: the record store holds one record per (batch, custom_id) key. The
  // records are held until their input line is read again (its tools and tool_choice shape the
  // answer): memory bounded by --max-batch-lines. The output and error files are written as their
  // lines come, in the input's order (ObjectWriter): their size is not held.
  std::map<std::string, ports::Record> records;  // custom_id -> record
  double cost = 0;
  b_.records->scan(b.id, [&](const ports::Record& r) {
    cost += r.cost_usd;
    records[r.id] = r;
  });
  struct ResultFile {
    BatchFile file;
    std::unique_ptr<ports::ObjectWriter> out;  // opened at the first line: no line, no file
    std::int64_t lines = 0;
  };
  const auto result_file = [&](const char* suffix) {
    ResultFile r;
    r.file.id = "file-" + b.id.substr(6) + suffix;  // from the batch id: a repeated finalization rewrites the same file
    r.file.filename = b.id + suffix + ".jsonl";
    r.file.purpose = "batch_output";
    r.file.owner = b.owner;
    return r;
  };
  ResultFile output = result_file("_output"), errors = result_file("_error");
  const auto emit = [&](ResultFile& to, const std::string& line) {
    if (!to.out) to.out = b_.files->write(to.file.object_key());
    to.out->append(line);
    to.file.bytes += static_cast<std::int64_t>(line.size());
    ++to.lines;
  };
  const auto add = [&](const ports::Record& r, const AnswerShape* shape) {
    bool is_error = false;
    const std::string text = output_line(b, r, shape, is_error);
    emit(is_error ? errors : output, text);
  };
  const auto file = b_.state->get(ports::BatchKind::file, b.input_file_id);
  if (file) {
    ObjectLines in(*b_.files, file_from_document(*file).object_key(), limits_.lines.max_line_bytes);
    std::string line;
    bool too_long = false;
    while (in.next(line, too_long)) {
      if (too_long || blank(line)) continue;
      auto checked = check_batch_line(line, in.line_number(), b, bindings_, limits_.lines);
      auto* ok = std::get_if<CheckedLine>(&checked);
      const std::string id = ok ? ok->source.id : custom_id_of(line);
      if (id.empty()) continue;
      if (const auto r = records.find(id); r != records.end()) {
        std::shared_ptr<const AnswerShape> shape;
        if (ok && !ok->request.prompt_text && r->second.finish_reason != "error") {  // a completion's text is read as it is
          std::string load_error;
          const auto binding = bindings_.get(ok->tokenizer, load_error);
          try {
            shape = shapes_.shape(binding.get(), ok->request, "batch_req_" + util::text_digest(b.id + "\n" + id));
          } catch (const RequestError&) {
            // A parser pair the flags refuse: the answer is read as plain content, as it was generated.
          }
        }
        add(r->second, shape.get());
        records.erase(r);
      } else if (rest_code) {
        // Every line without an answer gets its error line (OpenAI's expiry).
        emit(errors, unanswered_line(b, id, rest_code, "This request could not be executed before the completion window expired."));
      }
    }
  }
  for (const auto& [id, r] : records) add(r, nullptr);  // the input file deleted meanwhile: read as plain content
  b.cost_usd = cost;
  b.completed = output.lines;
  b.failed = errors.lines;
  const auto finish = [&](ResultFile& r) -> std::string {
    if (!r.out) return {};
    r.out->finish();  // the content first: a document never names a missing object
    r.file.created_at = now_s();
    b_.state->put(ports::BatchKind::file, to_document(r.file));
    return r.file.id;
  };
  b.output_file_id = finish(output);
  b.error_file_id = finish(errors);
  return b;
}

}  // namespace overhead::serve
