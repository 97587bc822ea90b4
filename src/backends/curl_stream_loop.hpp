// CurlStreamLoop: one thread that drives many HTTP transfers at once with one libcurl multi handle,
// event-driven (curl_multi_socket_action over epoll): a wake-up touches only the sockets that have
// data, so hundreds of long streams cost no thread each and no scan of every transfer per chunk
// (curl_multi_perform would walk them all). The multi handle keeps the connections between
// transfers. The openai decoder runs its generations on it.
//
// Coalescing: at an engine's pace each token is its own small write, so without care each token
// is one wake-up of this thread, and a wake-up (epoll_wait returning; on a virtual machine a
// hypervisor context switch) costs far more than reading the token. When waiting would gather
// several events per wake-up, the loop waits a short window after each turn before it looks
// again, then takes every socket that became readable meanwhile in one turn. The rule
// (CoalescePolicy): wait `max_window` (5 ms by default) when at least 2 transfers are in flight and
// the socket events of the last 100 ms came at a rate that fills a window with at least 2 (400
// events/s: 8 streams of 50 tokens/s); else do not wait. So a lone stream is never delayed, a
// few slow ones neither; a token's added latency is at most the window (2.5 ms on average), and
// a new transfer's start or a cancel waits at most one window too.
#pragma once

#include <curl/curl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

namespace overhead::backends {

// What the loop drives: an easy handle the subclass set up, and how it ends. Exactly one of the
// three on_* is called, on the loop's thread, after which the loop drops its reference.
class CurlTransfer {
 public:
  CurlTransfer();
  virtual ~CurlTransfer();
  CurlTransfer(const CurlTransfer&) = delete;
  CurlTransfer& operator=(const CurlTransfer&) = delete;
  [[nodiscard]] CURL* easy() const { return easy_; }
  // Set by cancel(): a write callback may stop early on it.
  [[nodiscard]] bool cancel_requested() const { return cancel_requested_.load(std::memory_order_relaxed); }

  virtual void on_finished(CURLcode result) = 0;  // curl ended it (done, failed, timed out)
  virtual void on_cancelled() = 0;                 // cancel() removed it; its connection is closed
  virtual void on_closed() = 0;                    // the loop shut down first

 private:
  friend class CurlStreamLoop;
  CURL* easy_;
  std::atomic<bool> cancel_requested_{false};
};

struct CoalescePolicy {
  std::chrono::microseconds max_window{5000};  // 0: never wait (one turn per wake-up)
  double min_events_per_window = 2;
  [[nodiscard]] std::chrono::microseconds window(std::size_t in_flight, double events_per_s) const {
    const double per_window = events_per_s * std::chrono::duration<double>(max_window).count();
    return in_flight >= 2 && per_window >= min_events_per_window ? max_window : std::chrono::microseconds(0);
  }
};

class CurlStreamLoop {
 public:
  // Starts the thread. Throws std::runtime_error when curl, epoll or eventfd cannot be set up.
  explicit CurlStreamLoop(CoalescePolicy coalesce = {});
  // Ends every transfer still running with on_closed(), then joins. Must not run on the loop's
  // own thread (from a transfer's callback).
  ~CurlStreamLoop();
  CurlStreamLoop(const CurlStreamLoop&) = delete;
  CurlStreamLoop& operator=(const CurlStreamLoop&) = delete;

  // Thread-safe. The transfer starts on the loop's next turn.
  void add(std::shared_ptr<CurlTransfer> transfer);
  // Thread-safe, idempotent; nothing when the transfer already ended.
  void cancel(const std::shared_ptr<CurlTransfer>& transfer);
  // Transfers added and not yet ended (a gauge for tests and benchmarks).
  [[nodiscard]] std::size_t in_flight() const { return in_flight_.load(std::memory_order_relaxed); }

 private:
  struct Command {
    bool cancel = false;
    std::shared_ptr<CurlTransfer> transfer;
  };
  static int on_socket(CURL* easy, curl_socket_t s, int what, void* self, void* socket_data);
  static int on_timer(CURLM* multi, long timeout_ms, void* self);
  void run();
  void wake();
  void take_commands(bool& stop);
  void socket_action(curl_socket_t s, int flags);
  void read_done();
  void count_events(int n);  // after each epoll_wait: keeps events_per_s_
  template <class F>
  static void end_safely(F&& end);

  CURLM* multi_ = nullptr;
  int epoll_ = -1;
  int wake_fd_ = -1;
  const CoalescePolicy coalesce_;
  // The socket-event rate the window is chosen by, measured over periods of 100 ms (loop thread only).
  double events_per_s_ = 0;
  std::int64_t period_start_ns_ = 0;
  std::int64_t period_events_ = 0;
  std::int64_t timer_deadline_ns_ = -1;  // loop thread only; -1: no timer
  std::unordered_map<CurlTransfer*, std::shared_ptr<CurlTransfer>> running_;  // loop thread only
  std::atomic<std::size_t> in_flight_{0};
  std::mutex mutex_;  // guards commands_, stop_
  std::vector<Command> commands_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace overhead::backends
