// The gateway's side of the reply path: every request the gateway queued, its state (queued,
// done, failed), the text streamed so far and, once the worker answered, its reply. A synchronous
// request's answer (sync_answer.hpp) and a stream's pump (stream_pump.hpp) watch their request
// here; an asynchronous one is looked up by id (GET /v1/requests/{id}).
//
// Every request gets exactly one answer: the worker's (done or failed), or, when none came within
// the box's answer timeout, a failed one of kind "timeout" (issue 21: an asynchronous request no
// worker answers must not hold its --max-queued place forever). A late answer is then dropped.
//
// Streamed text (reply::ReplyPath::text) is taken exactly once and in order by its byte offset:
// a piece already held is dropped, a piece past a gap waits (bounded) for the gap to fill. The
// first generation (attempt) that sends text owns the stream; text of another attempt (the item
// was generated again after its worker died) marks the stream `restarted`, which a streaming
// reader must report as an error rather than splice two generations (the final reply still
// completes the request for a reader that waits for it whole).
//
// A reader with no thread of its own (the stream route on the HTTP event loop) registers a
// watcher: the box calls it after each change of that request (new text, restarted, finished) and
// at cancel_all(), on the thread that made the change, outside the box's lock; the reader then
// takes what is new with poll_stream(), which never blocks.
//
// The worker side only sees reply::ReplyPath (reply/reply_path.hpp). In one process the box is
// its own reply path (the worker calls it directly). Over a shared queue (Redis, SQS) the gateway
// owns a reply queue, named in every work item; workers answer on it (reply/queue_replies.hpp) and
// the gateway's receiver (reply/reply_receiver.hpp) calls the box; nothing else changes.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <queue>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ports/record.hpp"
#include "reply/reply_path.hpp"

namespace overhead::serve {

using reply::Reply;

enum class RequestState { queued, done, failed };
[[nodiscard]] const char* state_name(RequestState s);

// The error kind of a request no worker answered in time.
inline constexpr const char* kTimeoutKind = "timeout";

// What the gateway knows of one request it queued.
struct AnswerShape;

struct RequestInfo {
  std::string model;      // as the client named it
  std::string tokenizer;  // the listed name it was queued under
  std::int64_t created = 0;       // unix seconds, for the response's `created`
  std::int64_t submitted_ns = 0;  // monotonic ns just before the send to the input queue
  bool kept = false;      // asynchronous: kept after it finished, until evicted
  // How the answer's text is read into content, reasoning and tool calls (answer_shape.hpp);
  // null: all content.
  std::shared_ptr<const AnswerShape> shape{};
  // The API key it was admitted under (key_admission.hpp; empty: none) and that key's tokens per
  // minute, to which its completion tokens are charged once answered.
  std::string key_name{};
  std::int64_t key_tpm = 0;
};

// A request of a key that was answered: what its key is charged (the answer observer's argument).
struct AnsweredNote {
  std::string key_name;
  std::int64_t key_tpm = 0;
  std::int64_t prompt_tokens = 0;
  std::int64_t completion_tokens = 0;
  double cost_usd = 0;
};
using AnswerObserver = std::function<void(const AnsweredNote&)>;

struct RequestSnapshot {
  RequestInfo info;
  RequestState state = RequestState::queued;
  std::optional<Reply> reply;   // when done, reply->text is the whole answer
  std::int64_t replied_ns = 0;  // monotonic ns at which the reply arrived
  // An in-process worker took the request up (ReplyPath::note): at a shutdown it may still finish
  // it. Over a shared queue the gateway is not told (always false).
  bool taken = false;
};

// What a streaming reader gets: the text past what it has, and how the request stands.
struct StreamProgress {
  std::string text;        // new text, from the reader's offset on
  bool restarted = false;  // another generation took over after text was sent: the stream cannot go on
  std::optional<RequestSnapshot> finished;  // the final state, once the request is done or failed
  bool closed = false;     // poll_stream only: the box was cancelled, or the id is unknown (forgotten)
};

// Called after a watched request changed, or the box was cancelled. Must be quick, must not block,
// and may run on several threads at once (the reader serialises its own work).
using StreamWatcher = std::function<void()>;

class ReplyBox final : public reply::ReplyPath {
 public:
  // `max_kept`: finished asynchronous requests kept for lookup, and `max_kept_bytes` what their
  // answers hold (text, record, error; an answer can be megabytes, so a count alone bounds
  // nothing): past either the oldest go first, and their ids are remembered as evicted().
  // `answer_timeout`: a request not answered this long after open() fails with kind "timeout".
  explicit ReplyBox(std::size_t max_kept = 10000, std::chrono::milliseconds answer_timeout = std::chrono::hours(24),
                    std::size_t max_kept_bytes = kDefaultMaxKeptBytes)
      : max_kept_(max_kept), max_kept_bytes_(max_kept_bytes), answer_timeout_(answer_timeout) {}
  static constexpr std::size_t kDefaultMaxKeptBytes = std::size_t{256} << 20;

  // Registers a request before it is sent, so that a fast reply cannot arrive first. `timeout`
  // replaces the box's answer timeout for this request (a stream's is its whole-stream bound, far
  // longer than a synchronous answer's).
  void open(const std::string& id, RequestInfo info, std::optional<std::chrono::milliseconds> timeout = std::nullopt);
  void note(const std::string& id, const std::optional<std::string>& reply_to) override;
  void text(std::string_view id, std::string_view attempt, std::int64_t offset, std::string_view text) override;
  void deliver(Reply reply) override;
  // Called once per request of a key answered done, outside the box's lock and before its reader
  // is woken (so the charge is counted before the client has its answer), on the thread that
  // delivered it (the budgets and per-key counters, key_admission.hpp). Set before requests arrive.
  void set_answer_observer(AnswerObserver observer);
  // What a watcher's reader takes, without waiting: the text past `have` bytes, a restart, or the
  // request's end. Empty when there is nothing new; `closed` when the box was cancelled or `id` is
  // unknown.
  [[nodiscard]] std::optional<StreamProgress> poll_stream(const std::string& id, std::size_t have);
  // Sets `id`'s watcher (replacing any), and calls it once now so that nothing that came before is
  // missed. Unknown id: calls it once (its poll_stream then says closed). The watcher is dropped
  // with the request (forget(), or eviction).
  void watch(const std::string& id, StreamWatcher watcher);
  [[nodiscard]] std::optional<RequestSnapshot> find(const std::string& id);
  // Whether `id` was a kept request dropped to stay within the bounds (a client asking for it is
  // told it is gone, not that it never existed). The last kMaxEvictedIds are remembered.
  [[nodiscard]] bool evicted(const std::string& id) const;
  static constexpr std::size_t kMaxEvictedIds = 65536;
  // Drops a request whose answer was written (synchronous ones), or that was never sent.
  void forget(const std::string& id);
  // Wakes every waiter with no reply (shutdown past its deadline).
  void cancel_all();
  [[nodiscard]] bool cancelled() const;
  // Requests queued and not yet answered (those past the answer timeout are answered first).
  [[nodiscard]] std::size_t queued();

 private:
  // One condition variable per request, so a reply wakes only its own waiter.
  struct Slot {
    RequestSnapshot snapshot;
    std::int64_t deadline_ns = 0;
    std::chrono::milliseconds timeout{0};  // what deadline_ns was set from, for the timeout's message
    // The streamed text, the generation it came from, and pieces that arrived past a gap.
    std::string text;
    std::string attempt;
    bool restarted = false;
    std::map<std::int64_t, std::string> early;
    // A done reply whose text is still on its way in deltas (a queue may reorder messages).
    std::optional<Reply> waiting_reply;
    std::shared_ptr<const StreamWatcher> watcher;
  };
  using Watchers = std::vector<std::shared_ptr<const StreamWatcher>>;
  // Queues the slot's watcher for a call after the lock is released.
  void changed(Slot& slot);  // with mutex_ held
  // Calls the watchers changed() queued, after releasing `lock`.
  void call_watchers(std::unique_lock<std::mutex>& lock);
  [[nodiscard]] StreamProgress progress(const Slot& slot, std::size_t have) const;  // with mutex_ held
  void finish(const std::string& id, Slot& slot, Reply reply);  // with mutex_ held
  void text_locked(std::string_view id, std::string_view attempt, std::int64_t offset, std::string_view text);
  void deliver_locked(Reply reply);
  void take_early(Slot& slot);
  void expire_overdue();  // with mutex_ held
  void purge_deadlines();  // with mutex_ held: drops the deadlines of requests no longer queued

  void evict_kept();  // with mutex_ held: the oldest kept answers past the bounds
  std::size_t max_kept_;
  std::size_t max_kept_bytes_;
  std::chrono::milliseconds answer_timeout_;
  mutable std::mutex mutex_;
  bool cancelled_ = false;
  std::unordered_map<std::string, std::shared_ptr<Slot>> slots_;
  std::deque<std::pair<std::string, std::size_t>> finished_kept_;  // finished asynchronous (id, bytes), oldest first
  std::size_t kept_bytes_ = 0;
  std::deque<std::string> evicted_order_;  // evicted ids, oldest first (at most kMaxEvictedIds)
  std::unordered_set<std::string> evicted_;
  // (deadline, id), earliest first: requests have timeouts of their own (a stream's is longer).
  using Deadline = std::pair<std::int64_t, std::string>;
  std::priority_queue<Deadline, std::vector<Deadline>, std::greater<>> deadlines_;
  std::size_t purge_deadlines_at_ = kFirstDeadlinePurge;
  static constexpr std::size_t kFirstDeadlinePurge = 4096;
  std::size_t queued_ = 0;
  Watchers to_call_;  // watchers of slots changed under the lock, called once it is released
  std::vector<AnsweredNote> answered_;  // answers of keys to report once the lock is released
  AnswerObserver answer_observer_;
};

}  // namespace overhead::serve
