// The Boost.Beast side of the HTTP-library comparison (bench/serve/http_libs.sh): the idiomatic
// asynchronous design of Beast's own http_server_async example, sized for a small machine. One
// io_context is run by hardware_concurrency threads; each connection is a session on its own
// strand (so its handlers never run concurrently) doing async read -> handle -> async write with
// keep-alive. The handler runs inline on the io thread, as httplib runs it on its pool thread;
// the work is the shared TokenizeHandler, so only the library differs.
// Usage: overhead_bench_beast_server PORT [TOKENIZER...]   (PORT 0: any; stdout's first line is the port)
//        OVERHEAD_BENCH_IO_THREADS=N: N io threads instead of hardware_concurrency
#include <boost/asio/dispatch.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tokenize_handler.hpp"

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

using overhead::bench::TokenizeHandler;

// httplib's default read timeout; a stalled client frees its session after it.
constexpr auto kReadTimeout = std::chrono::seconds(5);
// httplib reads any body size by default; Beast's parser stops at 1 MB unless told.
constexpr std::uint64_t kBodyLimit = 64u << 20;

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket&& socket, TokenizeHandler& handler) : stream_(std::move(socket)), handler_(handler) {}

  void start() {
    // Enter the session's strand before touching the stream (the accept ran on the acceptor's).
    net::dispatch(stream_.get_executor(), beast::bind_front_handler(&Session::read, shared_from_this()));
  }

 private:
  void read() {
    parser_.emplace();
    parser_->body_limit(kBodyLimit);
    stream_.expires_after(kReadTimeout);
    http::async_read(stream_, buffer_, *parser_, beast::bind_front_handler(&Session::on_read, shared_from_this()));
  }

  void on_read(beast::error_code ec, std::size_t) {
    if (ec) return close();  // end of stream, timeout or a bad request: drop the connection
    const http::request<http::string_body> req = parser_->release();
    res_ = {};
    res_.version(req.version());
    res_.keep_alive(req.keep_alive());
    if (req.method() == http::verb::post && req.target() == "/v1/tokenize") {
      auto reply = handler_.tokenize(req.body());
      res_.result(static_cast<unsigned>(reply.status));
      res_.set(http::field::content_type, "application/json");
      res_.body() = std::move(reply.body);
    } else if (req.method() == http::verb::get && req.target() == "/ping") {
      res_.result(http::status::ok);
      res_.set(http::field::content_type, "text/plain");
      res_.body() = std::string(overhead::bench::kPingBody);
    } else {
      res_.result(http::status::not_found);
    }
    res_.prepare_payload();
    stream_.expires_never();
    http::async_write(stream_, res_, beast::bind_front_handler(&Session::on_write, shared_from_this()));
  }

  void on_write(beast::error_code ec, std::size_t) {
    if (ec) return close();
    if (!res_.keep_alive()) return close();
    read();
  }

  void close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> res_;
  TokenizeHandler& handler_;
};

class Listener : public std::enable_shared_from_this<Listener> {
 public:
  Listener(net::io_context& ioc, tcp::endpoint endpoint, TokenizeHandler& handler)
      : ioc_(ioc), acceptor_(net::make_strand(ioc)), handler_(handler) {
    acceptor_.open(endpoint.protocol());
    acceptor_.set_option(net::socket_base::reuse_address(true));
    acceptor_.bind(endpoint);
    acceptor_.listen(net::socket_base::max_listen_connections);
  }

  [[nodiscard]] unsigned short port() const { return acceptor_.local_endpoint().port(); }

  void accept() {
    // Each connection gets its own strand on the shared io_context.
    acceptor_.async_accept(net::make_strand(ioc_), beast::bind_front_handler(&Listener::on_accept, shared_from_this()));
  }

 private:
  void on_accept(beast::error_code ec, tcp::socket socket) {
    if (!ec) {
      // As httplib's set_tcp_nodelay(true) in the other server; Beast writes header and body in
      // one gathered send, so this matters less here, but both run with the same socket options.
      socket.set_option(tcp::no_delay(true), ec);
      std::make_shared<Session>(std::move(socket), handler_)->start();
    }
    accept();
  }

  net::io_context& ioc_;
  tcp::acceptor acceptor_;
  TokenizeHandler& handler_;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s PORT [TOKENIZER...]\n", argv[0]);
    return 2;
  }
  const auto wanted = static_cast<unsigned short>(std::atoi(argv[1]));
  TokenizeHandler handler(std::vector<std::string>(argv + 2, argv + argc));

  // One io thread per core is Asio's usual sizing. OVERHEAD_BENCH_IO_THREADS overrides it, to see
  // how much of a difference under load is only the scheduler's share per thread (httplib runs 8+).
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (const char* env = std::getenv("OVERHEAD_BENCH_IO_THREADS"); env && std::atoi(env) > 0) threads = std::atoi(env);
  net::io_context ioc(threads);
  std::shared_ptr<Listener> listener;
  try {
    listener = std::make_shared<Listener>(ioc, tcp::endpoint(net::ip::make_address("127.0.0.1"), wanted), handler);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cannot bind 127.0.0.1:%u: %s\n", static_cast<unsigned>(wanted), e.what());
    return 1;
  }
  std::printf("%u\n", static_cast<unsigned>(listener->port()));
  std::fflush(stdout);
  listener->accept();

  std::vector<std::thread> pool;
  for (int i = 1; i < threads; ++i) pool.emplace_back([&ioc] { ioc.run(); });
  ioc.run();
  for (auto& t : pool) t.join();
  return 0;
}
