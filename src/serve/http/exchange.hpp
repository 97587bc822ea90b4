// One request's answer as a thing a handler can hold: a deferred answer (Responder) completed later
// from any thread exactly once, or a chunked stream (ResponseStream) pushed from any thread, in
// order, with a bounded write queue and a callback when the client goes away. Both are handles on
// the exchange the connection opened for the request (detail::Exchange); the connection writes on
// its own strand what they post.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "serve/http/message.hpp"

namespace overhead::serve::http {

enum class PushResult {
  queued,  // the chunk will be written after those pushed before it
  full,    // not queued: the write queue holds its limit; push again after on_writable fires
  closed,  // not queued: the stream was closed, or the client has gone
};

class ResponseStream {
 public:
  explicit ResponseStream(std::shared_ptr<detail::Exchange> exchange) : exchange_(std::move(exchange)) {}
  // Never blocks. Empty chunks are ignored (an empty chunk would end a chunked body). `chunk` is
  // moved from only when queued: on `full` or `closed` it is left as it was, to push again.
  PushResult push(std::string&& chunk);
  // Ends the body (the last chunk goes out after what is queued). Idempotent.
  void close();
  // Ends the answer without its last chunk and closes the connection, so the client sees a cut
  // answer rather than a complete one: for a producer that failed after the head went out.
  void abort();
  // `fn` runs once, on a connection thread, when the client disconnects (or the write times out,
  // or the server is stopped) before the stream is closed; at once if that already happened. Keep
  // it short: it runs on the event loop.
  void on_cancel(std::function<void()> fn);
  // `fn` runs (on a connection thread) each time the queue has been emptied after a push that
  // returned `full`.
  void on_writable(std::function<void()> fn);
  [[nodiscard]] bool cancelled() const;
  [[nodiscard]] std::size_t queued_bytes() const;

 private:
  std::shared_ptr<detail::Exchange> exchange_;
};

class Responder {
 public:
  explicit Responder(std::shared_ptr<detail::Exchange> exchange) : exchange_(std::move(exchange)) {}
  // Dropped without an answer: answers 500, so every request gets one.
  ~Responder();
  Responder(const Responder&) = delete;
  Responder& operator=(const Responder&) = delete;

  // The answer, from any thread. The first answer (send or stream) wins; later ones return false
  // (nullptr), and so does an answer after the client has gone.
  bool send(Response res);
  // Starts a chunked answer with `head`'s status and headers (its body is ignored).
  [[nodiscard]] std::shared_ptr<ResponseStream> stream(Response head);
  // As ResponseStream::on_cancel: the client went away before the answer was written.
  void on_cancel(std::function<void()> fn);
  [[nodiscard]] bool cancelled() const;

 private:
  std::shared_ptr<detail::Exchange> exchange_;
};

namespace detail {

// What an exchange asks of its connection. Every call is thread-safe: it posts to the
// connection's strand.
class ConnectionPort {
 public:
  virtual void post_answer(std::shared_ptr<Exchange> exchange, Response res) = 0;
  virtual void post_stream_head(std::shared_ptr<Exchange> exchange, Response head) = 0;
  // New chunks, or the end, are waiting in the exchange.
  virtual void post_pump(std::shared_ptr<Exchange> exchange) = 0;

 protected:
  ~ConnectionPort() = default;
};

class Exchange : public std::enable_shared_from_this<Exchange> {
 public:
  // `finished(status)` runs exactly once: when the answer's last byte is written (its status), or
  // when the answer cannot be written (499: the client has gone; the status is never sent).
  using Finished = std::function<void(int status)>;
  // `unanswered` builds the 500 a dropped Responder sends.
  Exchange(std::weak_ptr<ConnectionPort> connection, std::size_t max_queued_bytes, Finished finished,
           std::function<Response()> unanswered);
  ~Exchange();
  Exchange(const Exchange&) = delete;
  Exchange& operator=(const Exchange&) = delete;

  // The handler's side, any thread.
  bool answer(Response res);
  std::shared_ptr<ResponseStream> begin_stream(Response head);
  PushResult push(std::string&& chunk);
  void end_stream(bool cut);
  void on_cancel(std::function<void()> fn);
  void on_writable(std::function<void()> fn);
  [[nodiscard]] bool cancelled() const;
  [[nodiscard]] bool answered() const;
  [[nodiscard]] std::size_t queued_bytes() const;
  [[nodiscard]] Response unanswered_response() const { return unanswered_(); }

  // The connection's side, on its strand.
  struct Taken {
    std::vector<std::string> chunks;
    bool end = false;  // the producer closed the stream: the last chunk follows these
    bool cut = false;  // the producer aborted: close without the last chunk
  };
  Taken take();
  // The client has gone (or the request was cut, or the server stops): pushes fail from now on,
  // and the cancel callbacks run once.
  void cancel();
  void finish(int status);

 private:
  enum class Phase { pending, answered, streaming, ended };
  // Leaves the pending phase for `next` (an answer or a stream head): the connection to write it
  // to, or null when the exchange was not pending or the client is gone (then finished as 499).
  std::shared_ptr<ConnectionPort> leave_pending(Phase next);
  std::weak_ptr<ConnectionPort> connection_;
  const std::size_t max_queued_bytes_;
  Finished finished_;
  std::function<Response()> unanswered_;

  mutable std::mutex mutex_;
  Phase phase_ = Phase::pending;
  bool cut_ = false;
  bool cancelled_ = false;
  bool finished_called_ = false;
  bool pump_posted_ = false;
  bool want_writable_ = false;
  std::deque<std::string> queue_;
  std::size_t queued_bytes_ = 0;
  std::vector<std::function<void()>> cancel_callbacks_;
  std::function<void()> writable_callback_;
};

// Lets the connection reach a Response's private parts (its exchange, deferral).
struct ResponseAccess {
  static void bind(Response& res, std::shared_ptr<Exchange> exchange) { res.exchange_ = std::move(exchange); }
  static bool deferred(const Response& res) { return res.deferred_; }
};

}  // namespace detail
}  // namespace overhead::serve::http
