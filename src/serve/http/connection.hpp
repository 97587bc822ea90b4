// One client connection of the HTTP server (http_server.hpp): reads requests one at a time on its
// own strand, hands each to a handler, writes the answer (whole, deferred or streamed) and waits
// for the next. The server keeps every open connection in ConnectionContext so it can stop them.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <unordered_map>

#include <boost/asio/ip/tcp.hpp>

#include "serve/bounded_thread_pool.hpp"
#include "serve/http/http_server.hpp"

namespace overhead::serve::http {

class Connection;

// What every connection of one server shares.
struct ConnectionContext {
  ConnectionContext(const Routes& r, Gatekeeper& g, const ServerLimits& l, BoundedThreadPool& p, int retry_after)
      : routes(r), gate(g), limits(l), pool(p), retry_after_s(retry_after) {}
  const Routes& routes;
  Gatekeeper& gate;
  const ServerLimits limits;
  BoundedThreadPool& pool;
  const int retry_after_s;
  std::atomic<bool> stopping{false};

  // The open connections (they own themselves through this map until they close).
  std::mutex mutex;
  std::condition_variable none_open;
  std::unordered_map<const Connection*, std::shared_ptr<Connection>> open;
};

// Takes over `socket` (already accepted) and starts reading requests from it.
void start_connection(boost::asio::ip::tcp::socket socket, ConnectionContext& context);
// From any thread: an idle connection closes now, a busy one after its answer (`abort`: now).
void stop_connection(const std::shared_ptr<Connection>& connection, bool abort);

}  // namespace overhead::serve::http
