#include "serve/http/connection.hpp"

#include <sys/socket.h>

#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <exception>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace overhead::serve::http {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace {

// The first read of a request: a request line and the usual fields fit.
constexpr std::size_t kFirstReadBytes = 1024;
// A connection's read buffer above this is given back once it is empty, so an idle connection
// does not keep the buffer an earlier large request grew.
constexpr std::size_t kIdleBufferBytes = 4096;
// After an answer that leaves part of the request unread (a refused body), the connection reads
// and drops what the client still sends for this long or this much, then closes: closing with
// unread bytes would reset the connection and could destroy the answer before the client reads it.
// 8 MiB: a client that sends its whole body before it reads (fetch, the `openai` clients) still gets
// the 413 of a body a few MiB over the limit (a file meant for the Uploads API), not a reset.
constexpr auto kLingerTime = std::chrono::seconds(2);
constexpr std::size_t kLingerBytes = std::size_t{8} << 20;

bool has_body_method(std::string_view method) { return method == "POST" || method == "PUT" || method == "PATCH"; }

// application/json, with or without parameters (charset), in any case.
bool is_json_media_type(std::string_view content_type) {
  const auto semicolon = content_type.find(';');
  std::string_view type = content_type.substr(0, semicolon);
  while (!type.empty() && (type.back() == ' ' || type.back() == '\t')) type.remove_suffix(1);
  while (!type.empty() && (type.front() == ' ' || type.front() == '\t')) type.remove_prefix(1);
  return iequals(type, "application/json");
}

void run_handler(const Route& route, const std::shared_ptr<const Request>& request, const std::shared_ptr<detail::Exchange>& exchange,
                 Gatekeeper& gate);

}  // namespace

class Connection final : public std::enable_shared_from_this<Connection>, public detail::ConnectionPort {
 public:
  Connection(tcp::socket&& socket, ConnectionContext& context)
      : executor_(socket.get_executor()), stream_(std::move(socket)), context_(context) {}

  void start() { net::dispatch(executor_, [self = shared_from_this()] { self->await_request(); }); }

  void stop(bool abort) {
    net::post(executor_, [self = shared_from_this(), abort] {
      // Idle, lingering or still reading headers: nothing admitted, nothing to answer. A request
      // admitted and reading its body is in flight: it is answered (its read deadline bounds it).
      const bool admitted = self->exchange_ != nullptr;
      if (abort || self->phase_ == Phase::idle || self->phase_ == Phase::lingering || (self->phase_ == Phase::reading && !admitted))
        self->close();
    });
  }

  void post_answer(std::shared_ptr<detail::Exchange> exchange, Response res) override {
    net::post(executor_, [self = shared_from_this(), exchange = std::move(exchange), res = std::move(res)]() mutable {
      self->write_answer(exchange, std::move(res));
    });
  }
  void post_stream_head(std::shared_ptr<detail::Exchange> exchange, Response head) override {
    net::post(executor_, [self = shared_from_this(), exchange = std::move(exchange), head = std::move(head)]() mutable {
      self->write_stream_head(exchange, std::move(head));
    });
  }
  void post_pump(std::shared_ptr<detail::Exchange> exchange) override {
    net::post(executor_, [self = shared_from_this(), exchange = std::move(exchange)] {
      if (exchange == self->exchange_) self->pump();
    });
  }

 private:
  enum class Phase { idle, reading, handling, answering, streaming, lingering, closed };

  // ---- reading a request

  void await_request() {
    if (phase_ == Phase::closed) return;
    parser_.reset();
    request_.reset();
    exchange_.reset();
    route_ = nullptr;
    label_ = "other";
    counted_ = false;
    close_after_ = false;
    linger_ = false;
    peer_closed_ = false;
    if (context_.stopping) return close();
    if (buffer_.size() == 0 && buffer_.capacity() > kIdleBufferBytes) buffer_.shrink_to_fit();
    phase_ = Phase::idle;
    if (buffer_.size() > 0) return begin_request();  // pipelined: the next request is already here
    // Idle: nothing is owed until the client sends a first byte; a kept-alive connection costs
    // this pending read and nothing else.
    stream_.expires_after(context_.limits.idle_timeout);
    stream_.async_read_some(buffer_.prepare(kFirstReadBytes), [self = shared_from_this()](beast::error_code ec, std::size_t n) {
      if (ec) return self->close();
      self->buffer_.commit(n);
      self->begin_request();
    });
  }

  void begin_request() {
    phase_ = Phase::reading;
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(context_.limits.max_header_bytes));
    // The body's limit is set once the headers are checked (on_headers): a Content-Length past
    // it is then a 413 after auth, not before. (Not boost::none: Beast 1.74 compares a
    // Content-Length with an empty limit as over it.)
    parser_->body_limit(std::numeric_limits<std::uint64_t>::max());
    // One deadline for the whole request, headers and body, from its first byte: a client that
    // trickles bytes is cut at it however often it sends one.
    stream_.expires_after(context_.limits.read_timeout);
    bhttp::async_read_header(stream_, buffer_, *parser_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      self->on_headers(ec);
    });
  }

  void on_headers(beast::error_code ec) {
    if (ec) return read_failed(ec);
    headers_at_ = Clock::now();
    const auto& msg = parser_->get();
    auto request = std::make_shared<Request>();
    request->method = std::string(msg.method_string());
    request->target = std::string(msg.target());
    request->version = msg.version() >= 11 ? 11 : 10;
    for (const auto& field : msg) request->headers.add(std::string(field.name_string()), std::string(field.value()));
    const auto question = request->target.find('?');
    request->path = request->target.substr(0, question);
    if (question != std::string::npos) request->query = request->target.substr(question + 1);
    keep_alive_ = msg.keep_alive();
    head_only_ = request->method == "HEAD";
    request_ = request;
    if (request->path.empty() || request->path.front() != '/')
      return refuse(context_.gate.error(400, "The request target must be a path starting with '/'", "invalid_request"));

    Routes::Match match = context_.routes.match(request->method, request->path);
    route_ = match.route;
    if (match.any) label_ = match.any->options.label;
    if (auto refusal = context_.gate.authorize(*request, route_)) return refuse(std::move(*refusal));
    if (!route_) {
      if (!match.path_known) return refuse(context_.gate.error(404, "No such route", "not_found"));
      Response r = context_.gate.error(405, "The method " + request->method + " is not allowed on " + request->path + "; allowed: " + match.allowed,
                                       "method_not_allowed");
      r.set_header("Allow", match.allowed);
      return refuse(std::move(r));
    }
    request->path_params = std::move(match.params);
    if (has_body_method(request->method) && route_->options.json_body && !is_json_media_type(request->get_header_value("Content-Type")))
      return refuse(context_.gate.error(415, "The body must be application/json (Content-Type: " +
                                                 (request->has_header("Content-Type") ? request->get_header_value("Content-Type") : std::string("none")) + ")",
                                        "unsupported_media_type"));
    if (auto refusal = context_.gate.admit(*request, *route_, counted_)) return refuse(std::move(*refusal));
    open_exchange();
    const std::size_t limit = route_->options.max_body_bytes ? route_->options.max_body_bytes : context_.limits.max_body_bytes;
    body_limit_ = limit;
    if (const auto length = parser_->content_length(); length && *length > limit) return refuse(too_large());
    parser_->body_limit(limit);  // counts chunked bodies as they arrive
    if (parser_->is_done()) return dispatch();
    if (const std::string* expect = request->headers.find("Expect"); expect && iequals(*expect, "100-continue")) {
      // The client waits for this before it sends the body (curl does past 1 KiB).
      auto cont = std::make_shared<bhttp::response<bhttp::empty_body>>(bhttp::status::continue_, 11);
      bhttp::async_write(stream_, *cont, [self = shared_from_this(), cont](beast::error_code wec, std::size_t) {
        if (wec) return self->client_gone();
        self->read_body();
      });
      return;
    }
    read_body();
  }

  void read_body() {
    bhttp::async_read(stream_, buffer_, *parser_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (ec) return self->read_failed(ec);
      self->dispatch();
    });
  }

  void read_failed(beast::error_code ec) {
    if (ec == bhttp::error::body_limit) return refuse(too_large());
    if (ec == bhttp::error::header_limit)
      return refuse(context_.gate.error(431, "The request's headers are over the limit of " + std::to_string(context_.limits.max_header_bytes) + " bytes",
                                        "request_header_fields_too_large"));
    const bool started = parser_ && parser_->got_some();
    if (ec == beast::error::timeout) {
      // Cut at the whole-request deadline (the stream closed the socket). Counted as 408, with no
      // answer: the client is not sending in time, and may not be reading either.
      if (exchange_) exchange_->finish(408);
      else if (started) context_.gate.finished(label_, 408, -1, false);
      return close();
    }
    if (ec == bhttp::error::end_of_stream || ec == bhttp::error::partial_message || ec == net::error::eof || ec == net::error::connection_reset ||
        ec == net::error::operation_aborted || !started) {
      return close();  // the client went away (close() counts an admitted request as 499)
    }
    refuse(context_.gate.error(400, "Malformed HTTP request: " + ec.message(), "invalid_request"));
  }

  Response too_large() {
    return context_.gate.error(413, "The request body is over the limit of " + std::to_string(body_limit_) + " bytes",
                               "request_too_large");
  }

  void open_exchange() {
    if (exchange_) return;
    auto finished = [&gate = context_.gate, label = label_, at = headers_at_, counted = counted_](int status) {
      const double seconds = at == Clock::time_point{} ? -1.0 : std::chrono::duration<double>(Clock::now() - at).count();
      gate.finished(label, status, seconds, counted);
    };
    auto unanswered = [&gate = context_.gate] { return gate.error(500, "The handler gave no answer", "internal_error"); };
    exchange_ = std::make_shared<detail::Exchange>(weak_from_this(), context_.limits.max_stream_queue_bytes, std::move(finished),
                                                   std::move(unanswered));
  }

  // Answers without reading the rest of the request; the connection closes after the answer
  // unless the request had no body left to read.
  void refuse(Response res) {
    open_exchange();
    const bool body_unread = !parser_ || !parser_->is_done();
    if (body_unread) {
      close_after_ = true;
      linger_ = true;
    }
    phase_ = Phase::handling;
    exchange_->answer(std::move(res));
  }

  // ---- handing the request to its handler

  void dispatch() {
    phase_ = Phase::handling;
    stream_.expires_never();
    auto request = std::const_pointer_cast<Request>(request_);
    request->body = std::move(parser_->get().body());
    parser_.reset();
    watch_for_disconnect();
    auto task = [route = route_, request = request_, exchange = exchange_, &gate = context_.gate] { run_handler(*route, request, exchange, gate); };
    if (route_->options.on_event_loop) return task();
    if (!context_.pool.try_enqueue(task)) {
      Response busy = context_.gate.error(503, "Every handler thread is busy and " + std::to_string(context_.pool.max_queued()) +
                                                   " requests already wait for one; retry after " + std::to_string(context_.retry_after_s) + " s",
                                          "server_busy");
      busy.set_header("Retry-After", std::to_string(context_.retry_after_s));
      exchange_->answer(std::move(busy));
    }
  }

  // While a handler works, a pending wait tells when the client closes its end, so the exchange
  // can cancel (a stream's producer stops generating for nobody).
  void watch_for_disconnect() {
    if (watching_) return;
    watching_ = true;
    const unsigned generation = ++watch_generation_;
    stream_.socket().async_wait(tcp::socket::wait_read, [self = shared_from_this(), generation](beast::error_code ec) {
      self->on_readable(generation, ec);
    });
  }

  void on_readable(unsigned generation, beast::error_code ec) {
    if (generation != watch_generation_) return;  // a cancelled watch
    watching_ = false;
    if (phase_ != Phase::handling && phase_ != Phase::answering && phase_ != Phase::streaming) return;
    if (ec == net::error::operation_aborted) return;
    if (!ec) {
      char c;
      const ssize_t n = ::recv(stream_.socket().native_handle(), &c, 1, MSG_PEEK | MSG_DONTWAIT);
      // A pipelined request waits in the socket for its turn; a client gone meanwhile shows at the
      // next write.
      if (n > 0) return;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return watch_for_disconnect();
    }
    // A client that closes as soon as it has read the last chunk can be seen here before that
    // write's completion: the write in flight settles whether the answer was whole.
    if (writing_) {
      peer_closed_ = true;
      return;
    }
    client_gone();
  }

  void stop_watching() {
    if (!watching_) return;
    watching_ = false;
    ++watch_generation_;
    beast::error_code ignored;
    stream_.socket().cancel(ignored);  // only the watch is pending at this point
  }

  // ---- a whole answer

  void write_answer(const std::shared_ptr<detail::Exchange>& exchange, Response res) {
    if (exchange != exchange_ || phase_ == Phase::closed) return exchange->finish(499);
    phase_ = Phase::answering;
    auto msg = std::make_shared<bhttp::response<bhttp::string_body>>();
    msg->version(request_ ? request_->version : 11);
    msg->result(static_cast<unsigned>(res.status));
    for (const auto& [name, value] : res.headers.fields()) msg->insert(name, value);
    msg->keep_alive(keep_alive_ && !close_after_ && !context_.stopping);
    if (head_only_) {
      msg->content_length(res.body.size());
    } else {
      msg->body() = std::move(res.body);
      msg->prepare_payload();
    }
    const int status = res.status;
    // The write itself tells whether the client is still there; a watch could see a client that
    // closes right after reading the answer before this write's completion.
    stop_watching();
    stream_.expires_after(context_.limits.write_timeout);
    bhttp::async_write(stream_, *msg, [self = shared_from_this(), msg, status](beast::error_code ec, std::size_t) {
      if (ec) return self->client_gone();
      self->exchange_->finish(status);
      self->end_of_answer(!msg->keep_alive());
    });
  }

  void end_of_answer(bool close_now) {
    stop_watching();
    if (linger_) return linger_close();
    if (close_now || context_.stopping) return linger_close();
    await_request();
  }

  // ---- a streamed answer

  void write_stream_head(const std::shared_ptr<detail::Exchange>& exchange, Response head) {
    if (exchange != exchange_ || phase_ == Phase::closed) return exchange->cancel();
    phase_ = Phase::streaming;
    stream_status_ = head.status;
    chunked_ = request_ && request_->version >= 11;
    head_ = std::make_unique<bhttp::response<bhttp::empty_body>>();
    head_->version(request_ ? request_->version : 11);
    head_->result(static_cast<unsigned>(head.status));
    for (const auto& [name, value] : head.headers.fields()) head_->insert(name, value);
    if (chunked_) {
      head_->chunked(true);
      head_->keep_alive(keep_alive_ && !context_.stopping);
    } else {
      head_->keep_alive(false);  // HTTP/1.0 has no chunks: the body ends with the connection
    }
    head_serializer_ = std::make_unique<bhttp::response_serializer<bhttp::empty_body>>(*head_);
    writing_ = true;
    stream_.expires_after(context_.limits.write_timeout);
    bhttp::async_write_header(stream_, *head_serializer_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      self->writing_ = false;
      if (ec || self->peer_closed_) return self->client_gone();
      self->pump();
    });
  }

  // Writes what the producer pushed since the last write, in one gathered write.
  void pump() {
    if (phase_ != Phase::streaming || writing_) return;
    if (peer_closed_) return client_gone();
    detail::Exchange::Taken taken = exchange_->take();
    if (taken.cut) {
      exchange_->finish(500);
      return close();
    }
    out_.clear();
    for (auto& chunk : taken.chunks) {
      if (chunked_) {
        char size[20];
        std::snprintf(size, sizeof size, "%zx\r\n", chunk.size());
        out_.emplace_back(size);
        out_.push_back(std::move(chunk));
        out_.emplace_back("\r\n");
      } else {
        out_.push_back(std::move(chunk));
      }
    }
    if (taken.end && chunked_) out_.emplace_back("0\r\n\r\n");
    if (out_.empty()) {
      if (taken.end) finish_stream();
      return;
    }
    std::vector<net::const_buffer> buffers;
    buffers.reserve(out_.size());
    for (const auto& s : out_) buffers.emplace_back(s.data(), s.size());
    writing_ = true;
    stream_.expires_after(context_.limits.write_timeout);
    net::async_write(stream_, buffers, [self = shared_from_this(), end = taken.end](beast::error_code ec, std::size_t) {
      self->writing_ = false;
      self->out_.clear();
      if (ec) return self->client_gone();
      if (end) return self->finish_stream();  // whole, even if the client closed right after
      if (self->peer_closed_) return self->client_gone();
      self->pump();
    });
  }

  void finish_stream() {
    exchange_->finish(stream_status_);
    phase_ = Phase::answering;
    end_of_answer(!chunked_ || !head_->keep_alive());
  }

  // ---- closing

  void client_gone() {
    if (exchange_) exchange_->cancel();  // its cancel callbacks run; it counts as 499
    close();
  }

  // Stops sending, then reads and drops what the client still sends (bounded), then closes.
  void linger_close() {
    phase_ = Phase::lingering;
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.expires_after(kLingerTime);
    drain();
  }

  void drain() {
    buffer_.consume(buffer_.size());
    stream_.async_read_some(buffer_.prepare(4096), [self = shared_from_this()](beast::error_code ec, std::size_t n) {
      self->lingered_ += n;
      if (ec || self->lingered_ > kLingerBytes || self->phase_ != Phase::lingering) return self->close();
      self->buffer_.commit(n);
      self->drain();
    });
  }

  void close() {
    if (phase_ == Phase::closed) return;
    phase_ = Phase::closed;
    if (exchange_) exchange_->cancel();  // no-op once its answer was written
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.socket().close(ignored);
    std::shared_ptr<Connection> self;  // released after the lock, so the destructor runs outside it
    {
      std::lock_guard lock(context_.mutex);
      const auto it = context_.open.find(this);
      if (it != context_.open.end()) {
        self = std::move(it->second);
        context_.open.erase(it);
      }
      if (context_.open.empty()) context_.none_open.notify_all();
    }
  }

  // The connection's strand (the accepted socket's executor): every handler below runs on it.
  net::any_io_executor executor_;
  beast::tcp_stream stream_;
  ConnectionContext& context_;
  beast::flat_buffer buffer_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  Phase phase_ = Phase::idle;

  // The request in progress.
  std::shared_ptr<const Request> request_;
  const Route* route_ = nullptr;
  std::size_t body_limit_ = 0;  // the route's, or the server's
  std::string_view label_ = "other";
  bool counted_ = false;
  Clock::time_point headers_at_{};
  std::shared_ptr<detail::Exchange> exchange_;
  bool keep_alive_ = false;
  bool head_only_ = false;
  bool close_after_ = false;
  bool linger_ = false;
  std::size_t lingered_ = 0;

  bool watching_ = false;
  unsigned watch_generation_ = 0;
  bool peer_closed_ = false;  // the client closed while a stream write was in flight

  // A stream in progress.
  int stream_status_ = 200;
  bool chunked_ = true;
  bool writing_ = false;
  std::unique_ptr<bhttp::response<bhttp::empty_body>> head_;
  std::unique_ptr<bhttp::response_serializer<bhttp::empty_body>> head_serializer_;
  std::vector<std::string> out_;
};

namespace {

// Runs on a handler thread (or the event loop for routes that ask for it).
void run_handler(const Route& route, const std::shared_ptr<const Request>& request, const std::shared_ptr<detail::Exchange>& exchange,
                 Gatekeeper& gate) {
  Response res;
  detail::ResponseAccess::bind(res, exchange);
  try {
    route.handler(*request, res);
  } catch (const std::exception&) {
    // The message may hold internals (paths, URLs); the client gets a plain 500.
    res = gate.error(500, "The server failed on this request", "internal_error");
  }
  if (detail::ResponseAccess::deferred(res)) return;  // its Responder answers
  exchange->answer(std::move(res));
}

}  // namespace

void start_connection(tcp::socket socket, ConnectionContext& context) {
  beast::error_code ignored;
  // Header and body go out in one gathered write, but a stream's chunks are small writes that
  // must not wait for the client's delayed ACK.
  socket.set_option(tcp::no_delay(true), ignored);
  auto connection = std::make_shared<Connection>(std::move(socket), context);
  {
    std::lock_guard lock(context.mutex);
    context.open.emplace(connection.get(), connection);
  }
  connection->start();
}

void stop_connection(const std::shared_ptr<Connection>& connection, bool abort) { connection->stop(abort); }

}  // namespace overhead::serve::http
