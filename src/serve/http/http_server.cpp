#include "serve/http/http_server.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "serve/bounded_thread_pool.hpp"
#include "serve/http/connection.hpp"

namespace overhead::serve::http {

namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

unsigned cores() { return std::max(1u, std::thread::hardware_concurrency()); }

}  // namespace

struct HttpServer::Impl {
  Impl(HttpServerOptions o, const Routes& routes, Gatekeeper& gate)
      : options(std::move(o)),
        io(static_cast<int>(event_loop_threads())),
        work(net::make_work_guard(io)),
        acceptor(net::make_strand(io)),
        pause(acceptor.get_executor()),
        pool(options.handler_threads > 0 ? options.handler_threads : std::max(8u, cores()), options.max_waiting_requests),
        context(routes, gate, options.limits, pool, options.retry_after_s) {}

  unsigned event_loop_threads() const { return options.event_loop_threads > 0 ? options.event_loop_threads : std::min(4u, cores()); }

  void accept() {
    acceptor.async_accept(net::make_strand(io), [this](boost::system::error_code ec, tcp::socket socket) {
      if (context.stopping || !acceptor.is_open()) return;
      if (ec) {
        // Out of descriptors (or memory): accepting again at once would spin; the kernel's backlog
        // holds new connections meanwhile.
        pause.expires_after(std::chrono::milliseconds(100));
        pause.async_wait([this](boost::system::error_code) {
          if (!context.stopping) accept();
        });
        return;
      }
      start_connection(std::move(socket), context);
      accept();
    });
  }

  // Every open connection, for stop() and abort().
  std::vector<std::shared_ptr<Connection>> open_connections() {
    std::lock_guard lock(context.mutex);
    std::vector<std::shared_ptr<Connection>> out;
    out.reserve(context.open.size());
    for (const auto& [key, c] : context.open) out.push_back(c);
    return out;
  }

  void close_acceptor() {
    net::post(acceptor.get_executor(), [this] {
      boost::system::error_code ignored;
      acceptor.close(ignored);
      pause.cancel();
    });
  }

  HttpServerOptions options;
  net::io_context io;
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work;
  tcp::acceptor acceptor;
  net::steady_timer pause;
  BoundedThreadPool pool;
  ConnectionContext context;
  std::thread stopper;
};

HttpServer::HttpServer(HttpServerOptions options, const Routes& routes, Gatekeeper& gate)
    : impl_(std::make_unique<Impl>(std::move(options), routes, gate)) {}

HttpServer::~HttpServer() {
  stop();
  if (impl_->stopper.joinable()) impl_->stopper.join();
}

int HttpServer::bind() {
  Impl& s = *impl_;
  try {
    const tcp::endpoint endpoint(net::ip::make_address(s.options.host), static_cast<unsigned short>(s.options.port));
    s.acceptor.open(endpoint.protocol());
    s.acceptor.set_option(net::socket_base::reuse_address(true));
    s.acceptor.bind(endpoint);
    s.acceptor.listen(net::socket_base::max_listen_connections);
    return s.acceptor.local_endpoint().port();
  } catch (const std::exception& e) {
    throw std::runtime_error("cannot listen on " + s.options.host + ":" + std::to_string(s.options.port) + ": " + e.what());
  }
}

void HttpServer::run() {
  Impl& s = *impl_;
  if (!s.context.stopping) s.accept();
  // Once stopping, a helper waits for the last connection to close and then lets the event loop
  // run dry, so run() returns after every answer was written.
  s.stopper = std::thread([&s] {
    std::unique_lock lock(s.context.mutex);
    s.context.none_open.wait(lock, [&] { return s.context.stopping && s.context.open.empty(); });
    lock.unlock();
    net::post(s.io, [&s] { s.work.reset(); });
  });
  std::vector<std::thread> loops;
  for (unsigned i = 1; i < s.event_loop_threads(); ++i) loops.emplace_back([&s] { s.io.run(); });
  s.io.run();
  for (auto& t : loops) t.join();
  s.stopper.join();
  // Handlers still running answer into closed connections; let them end, and run what they posted.
  s.pool.shutdown();
  s.io.restart();
  s.io.poll();
}

void HttpServer::stop() {
  Impl& s = *impl_;
  {
    std::lock_guard lock(s.context.mutex);
    if (s.context.stopping.exchange(true)) {
      s.context.none_open.notify_all();
      return;
    }
    s.context.none_open.notify_all();
  }
  s.close_acceptor();
  for (const auto& c : s.open_connections()) stop_connection(c, false);
}

void HttpServer::abort() {
  stop();
  for (const auto& c : impl_->open_connections()) stop_connection(c, true);
}

std::size_t HttpServer::open_connections() const {
  std::lock_guard lock(impl_->context.mutex);
  return impl_->context.open.size();
}

std::size_t HttpServer::waiting_requests() const { return impl_->pool.queued(); }

}  // namespace overhead::serve::http
