// A scripted OpenAI-compatible server on a free loopback port, for the decoder's error paths and
// byte-level cases a real engine does not produce on demand: POST /v1/completions answers `status`
// with `body`, or (status 200) writes `writes` one by one, `gap` apart, each its own chunk of a
// chunked answer sent with one send() (its own TCP segment). It records the request bodies and
// counts the answers cut because the client went away. With `models_body` set, GET /v1/models
// answers it (200, JSON); with `pace` set, the server sleeps as it says before each write, so a
// test can give it a timing that is a known function of the request. (The real engine,
// tests/engine/llama_server.mjs, covers the normal path.)
//
// Plain sockets rather than cpp-httplib: Debian's libcpp-httplib is compiled with a listen backlog
// of 5, so a burst of 50 connections waits for SYN retransmits (seconds); and the write-by-write
// control is direct here. One thread per connection, HTTP/1.1 keep-alive.
#pragma once

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace overhead::testing {

class ScriptedOpenAiServer {
 public:
  int status = 200;
  std::string body;  // a non-200 answer's body
  std::string content_type = "text/event-stream";
  std::vector<std::string> writes;   // a 200 answer, write by write
  std::chrono::microseconds gap{0};  // between writes
  // When set, it answers instead of `writes` / `gap`: the request body in, the writes and the gap out.
  std::function<std::vector<std::string>(const std::string& request_body, std::chrono::microseconds& gap)> script;
  std::string models_body;  // GET /v1/models: 200 with this body when not empty
  // When set: called with the request body before write i of `count` (i < count) and once after
  // the last (i == count); it sleeps as long as the write should wait (and may keep state).
  std::function<void(const std::string& request_body, std::size_t i, std::size_t count)> pace;
  std::atomic<int> hits{0};
  std::atomic<int> client_gone{0};  // answers cut because the client closed the connection
  std::atomic<int> finished{0};     // answers written to the end

  explicit ScriptedOpenAiServer(int = 0) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (listen_fd_ < 0 || ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::listen(listen_fd_, 1024) != 0 || ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0)
      throw std::runtime_error("ScriptedOpenAiServer: cannot listen");
    port_ = ntohs(a.sin_port);
    acceptor_ = std::thread([this] { accept_loop(); });
  }
  ~ScriptedOpenAiServer() {
    stopping_ = true;
    ::shutdown(listen_fd_, SHUT_RDWR);
    acceptor_.join();
    {
      std::lock_guard lock(mutex_);
      for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
    }
    for (auto& t : connections_) t.join();
    ::close(listen_fd_);
  }
  ScriptedOpenAiServer(const ScriptedOpenAiServer&) = delete;
  ScriptedOpenAiServer& operator=(const ScriptedOpenAiServer&) = delete;

  [[nodiscard]] std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  [[nodiscard]] nlohmann::json last_body() {
    std::lock_guard lock(mutex_);
    return bodies_.empty() ? nlohmann::json() : nlohmann::json::parse(bodies_.back(), nullptr, false);
  }
  // The head (request line and headers) of the last POST, as received.
  [[nodiscard]] std::string last_head() {
    std::lock_guard lock(mutex_);
    return heads_.empty() ? std::string() : heads_.back();
  }

  // A text_completion chunk's event, as vLLM writes it.
  static std::string text_event(const std::string& text, const char* finish_reason = nullptr) {
    nlohmann::json choice = {{"index", 0}, {"text", text}, {"logprobs", nullptr},
                             {"finish_reason", finish_reason ? nlohmann::json(finish_reason) : nlohmann::json()}};
    const nlohmann::json chunk = {{"id", "cmpl-1"}, {"object", "text_completion"}, {"created", 1}, {"model", "m"},
                                  {"choices", {choice}}, {"usage", nullptr}};
    return "data: " + chunk.dump() + "\n\n";
  }
  static std::string usage_event(int prompt_tokens, int completion_tokens) {
    const nlohmann::json chunk = {{"id", "cmpl-1"}, {"object", "text_completion"}, {"created", 1}, {"model", "m"},
                                  {"choices", nlohmann::json::array()},
                                  {"usage", {{"prompt_tokens", prompt_tokens}, {"completion_tokens", completion_tokens},
                                             {"total_tokens", prompt_tokens + completion_tokens}}}};
    return "data: " + chunk.dump() + "\n\n";
  }
  static std::string done_event() { return "data: [DONE]\n\n"; }

 private:
  void accept_loop() {
    while (!stopping_) {
      const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) {
        if (stopping_) return;
        continue;
      }
      const int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      std::lock_guard lock(mutex_);
      open_fds_.push_back(fd);
      connections_.emplace_back([this, fd] { serve(fd); });
    }
  }

  static bool send_all(int fd, const std::string& s) {
    std::size_t off = 0;
    while (off < s.size()) {
      const ssize_t n = ::send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return false;
      off += static_cast<std::size_t>(n);
    }
    return true;
  }

  // Whether the peer closed: a readable socket with nothing to read.
  static bool peer_closed(int fd) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 0) <= 0) return false;
    char c;
    return ::recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0 || (p.revents & (POLLHUP | POLLERR));
  }

  void serve(int fd) {
    std::string in;
    char buf[16384];
    while (!stopping_) {
      std::size_t head_end;
      while ((head_end = in.find("\r\n\r\n")) == std::string::npos) {
        const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) return close_fd(fd);
        in.append(buf, static_cast<std::size_t>(n));
      }
      std::size_t length = 0;
      const std::string head = in.substr(0, head_end);
      for (const char* name : {"Content-Length: ", "content-length: "})
        if (const auto at = head.find(name); at != std::string::npos) length = std::stoul(head.substr(at + 16));
      while (in.size() < head_end + 4 + length) {
        const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) return close_fd(fd);
        in.append(buf, static_cast<std::size_t>(n));
      }
      const std::string request_body = in.substr(head_end + 4, length);
      in.erase(0, head_end + 4 + length);
      if (!models_body.empty() && head.starts_with("GET /v1/models ")) {
        if (!send_all(fd, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                              std::to_string(models_body.size()) + "\r\n\r\n" + models_body))
          return close_fd(fd);
        continue;
      }
      ++hits;
      {
        std::lock_guard lock(mutex_);
        bodies_.push_back(request_body);
        heads_.push_back(head);
      }
      if (!answer(fd, request_body)) return close_fd(fd);
    }
    close_fd(fd);
  }

  bool answer(int fd, const std::string& request_body) {
    if (status != 200) {
      return send_all(fd, "HTTP/1.1 " + std::to_string(status) + " Scripted\r\nContent-Type: application/json\r\n"
                          "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body);
    }
    if (!send_all(fd, "HTTP/1.1 200 OK\r\nContent-Type: " + content_type + "\r\nTransfer-Encoding: chunked\r\n\r\n"))
      return false;
    std::chrono::microseconds pause = gap;
    const std::vector<std::string> out = script ? script(request_body, pause) : writes;
    char size[32];
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (pace) pace(request_body, i, out.size());
      else if (i && pause.count()) std::this_thread::sleep_for(pause);
      if (peer_closed(fd) || !send_all(fd, (std::snprintf(size, sizeof size, "%zx\r\n", out[i].size()), size) + out[i] + "\r\n")) {
        ++client_gone;
        return false;
      }
    }
    if (pace) pace(request_body, out.size(), out.size());
    if (!send_all(fd, "0\r\n\r\n")) return false;
    ++finished;
    return true;
  }

  void close_fd(int fd) {
    std::lock_guard lock(mutex_);
    std::erase(open_fds_, fd);
    ::close(fd);
  }

  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread acceptor_;
  std::mutex mutex_;
  std::vector<int> open_fds_;
  std::vector<std::thread> connections_;
  std::vector<std::string> bodies_;
  std::vector<std::string> heads_;
};

}  // namespace overhead::testing
