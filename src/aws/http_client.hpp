// HTTP/1.1 over libcurl for the AWS clients: one connection cache shared by every thread (so a
// request reuses a warm keep-alive connection instead of opening a new TCP connection), a pool of
// reusable curl handles, and a timeout on every call. One send() is one attempt; retrying is the
// caller's policy (aws/retry.hpp), because only the caller knows which answers are worth repeating.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace overhead::aws {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
  std::string method = "GET";
  std::string url;  // scheme://host[:port]/path[?query], already encoded
  HeaderList headers;  // sent as given; a body without a Content-Type here goes without one
  std::string_view body;
  std::chrono::milliseconds timeout{10000};  // the whole call: connect, send, wait, receive
};

struct HttpResponse {
  long status = 0;
  HeaderList headers;  // names lower-cased
  std::string body;
  // The first value of a header (name lower-case), empty when absent.
  std::string_view header(std::string_view name) const;
};

// A call that produced no HTTP answer: the connection could not be made, was dropped, or timed out.
class TransportError : public std::runtime_error {
 public:
  enum class Kind { connect, timeout, dropped, other };
  TransportError(Kind kind, const std::string& what) : std::runtime_error(what), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

struct HttpClientOptions {
  std::chrono::milliseconds connect_timeout{3000};
  std::size_t max_pooled_handles = 64;  // idle curl handles kept for reuse
};

class HttpClient {
 public:
  explicit HttpClient(HttpClientOptions options = {});
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Thread-safe. Throws TransportError when no HTTP response arrived.
  HttpResponse send(const HttpRequest& request);

  // TCP connections opened so far (from curl's own count), to show that warm calls reuse them.
  std::uint64_t connections_opened() const { return connections_opened_.load(std::memory_order_relaxed); }

 private:
  struct Shared;
  void* acquire_handle();
  void release_handle(void* handle);

  HttpClientOptions options_;
  std::unique_ptr<Shared> shared_;
  std::mutex pool_mutex_;
  std::vector<void*> pool_;
  std::atomic<std::uint64_t> connections_opened_{0};
};

}  // namespace overhead::aws
