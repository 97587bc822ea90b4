#include "backends/curl_stream_loop.hpp"

#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <time.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

#include "ports/clock.hpp"

namespace overhead::backends {

CurlTransfer::CurlTransfer() : easy_(curl_easy_init()) {
  if (!easy_) throw std::runtime_error("curl_easy_init failed");
}

CurlTransfer::~CurlTransfer() { curl_easy_cleanup(easy_); }

CurlStreamLoop::CurlStreamLoop(CoalescePolicy coalesce) : coalesce_(coalesce) {
  multi_ = curl_multi_init();
  epoll_ = epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = wake_fd_;
  if (!multi_ || epoll_ < 0 || wake_fd_ < 0 || epoll_ctl(epoll_, EPOLL_CTL_ADD, wake_fd_, &ev) != 0) {
    const std::string why = std::strerror(errno);
    if (multi_) curl_multi_cleanup(multi_);
    if (epoll_ >= 0) close(epoll_);
    if (wake_fd_ >= 0) close(wake_fd_);
    throw std::runtime_error("curl stream loop: cannot set up (" + why + ")");
  }
  curl_multi_setopt(multi_, CURLMOPT_SOCKETFUNCTION, &CurlStreamLoop::on_socket);
  curl_multi_setopt(multi_, CURLMOPT_SOCKETDATA, this);
  curl_multi_setopt(multi_, CURLMOPT_TIMERFUNCTION, &CurlStreamLoop::on_timer);
  curl_multi_setopt(multi_, CURLMOPT_TIMERDATA, this);
  // Keep idle connections for the next transfers (HTTP/1.1: one per stream in flight).
  curl_multi_setopt(multi_, CURLMOPT_MAXCONNECTS, 1024L);
  thread_ = std::thread([this] { run(); });
}

CurlStreamLoop::~CurlStreamLoop() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake();
  thread_.join();
  curl_multi_cleanup(multi_);
  close(epoll_);
  close(wake_fd_);
}

void CurlStreamLoop::add(std::shared_ptr<CurlTransfer> transfer) {
  in_flight_.fetch_add(1, std::memory_order_relaxed);
  {
    std::lock_guard lock(mutex_);
    commands_.push_back({false, std::move(transfer)});
  }
  wake();
}

void CurlStreamLoop::cancel(const std::shared_ptr<CurlTransfer>& transfer) {
  if (transfer->cancel_requested_.exchange(true)) return;  // idempotent
  {
    std::lock_guard lock(mutex_);
    commands_.push_back({true, transfer});
  }
  wake();
}

void CurlStreamLoop::wake() {
  const std::uint64_t one = 1;
  // A full counter (never, at 2^64-2) still leaves the fd readable: the wake-up is not lost.
  [[maybe_unused]] const auto n = write(wake_fd_, &one, sizeof one);
}

int CurlStreamLoop::on_socket(CURL*, curl_socket_t s, int what, void* self, void* socket_data) {
  auto* loop = static_cast<CurlStreamLoop*>(self);
  if (what == CURL_POLL_REMOVE) {
    epoll_ctl(loop->epoll_, EPOLL_CTL_DEL, s, nullptr);  // may already be closed: nothing to undo
    curl_multi_assign(loop->multi_, s, nullptr);
    return 0;
  }
  epoll_event ev{};
  ev.events = ((what & CURL_POLL_IN) ? EPOLLIN : 0u) | ((what & CURL_POLL_OUT) ? EPOLLOUT : 0u);
  ev.data.fd = s;
  int op = socket_data ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
  if (epoll_ctl(loop->epoll_, op, s, &ev) != 0 && errno == (op == EPOLL_CTL_ADD ? EEXIST : ENOENT))
    epoll_ctl(loop->epoll_, op == EPOLL_CTL_ADD ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, s, &ev);
  curl_multi_assign(loop->multi_, s, loop);  // non-null: registered
  return 0;
}

int CurlStreamLoop::on_timer(CURLM*, long timeout_ms, void* self) {
  auto* loop = static_cast<CurlStreamLoop*>(self);
  loop->timer_deadline_ns_ = timeout_ms < 0 ? -1 : ports::monotonic_ns() + std::int64_t{timeout_ms} * 1'000'000;
  return 0;
}

void CurlStreamLoop::socket_action(curl_socket_t s, int flags) {
  int running = 0;
  curl_multi_socket_action(multi_, s, flags, &running);
}

void CurlStreamLoop::read_done() {
  int left = 0;
  while (CURLMsg* msg = curl_multi_info_read(multi_, &left)) {
    if (msg->msg != CURLMSG_DONE) continue;
    CURL* easy = msg->easy_handle;
    const CURLcode result = msg->data.result;
    CurlTransfer* raw = nullptr;
    curl_easy_getinfo(easy, CURLINFO_PRIVATE, &raw);
    curl_multi_remove_handle(multi_, easy);
    const auto it = running_.find(raw);
    if (it == running_.end()) continue;
    std::shared_ptr<CurlTransfer> t = std::move(it->second);
    running_.erase(it);
    in_flight_.fetch_sub(1, std::memory_order_relaxed);
    end_safely([&] { t->on_finished(result); });
  }
}

void CurlStreamLoop::take_commands(bool& stop) {
  std::vector<Command> commands;
  {
    std::lock_guard lock(mutex_);
    commands.swap(commands_);
    stop = stop_;
  }
  for (auto& c : commands) {
    CurlTransfer* raw = c.transfer.get();
    if (!c.cancel) {
      curl_easy_setopt(raw->easy_, CURLOPT_PRIVATE, raw);
      if (raw->cancel_requested() || curl_multi_add_handle(multi_, raw->easy_) != CURLM_OK) {
        in_flight_.fetch_sub(1, std::memory_order_relaxed);
        end_safely([&] { raw->on_cancelled(); });  // cancelled before it started (or curl refused it: alike)
        continue;
      }
      running_.emplace(raw, std::move(c.transfer));
    } else if (const auto it = running_.find(raw); it != running_.end()) {
      // Removing an unfinished transfer closes its connection: the server sees the client go.
      curl_multi_remove_handle(multi_, raw->easy_);
      std::shared_ptr<CurlTransfer> t = std::move(it->second);
      running_.erase(it);
      in_flight_.fetch_sub(1, std::memory_order_relaxed);
      end_safely([&] { t->on_cancelled(); });
    }
  }
}

// A transfer's end runs its owner's callbacks; one that throws must not end the loop (and every
// other transfer with it): what it threw is dropped here, the transfer is over either way.
template <class F>
void CurlStreamLoop::end_safely(F&& end) {
  try {
    end();
  } catch (...) {
  }
}

void CurlStreamLoop::count_events(int n) {
  constexpr std::int64_t kPeriodNs = 100'000'000;
  const std::int64_t now = ports::monotonic_ns();
  if (period_start_ns_ == 0) period_start_ns_ = now;
  if (n > 0) period_events_ += n;
  if (const std::int64_t elapsed = now - period_start_ns_; elapsed >= kPeriodNs) {
    events_per_s_ = double(period_events_) * 1e9 / double(elapsed);
    period_start_ns_ = now;
    period_events_ = 0;
  }
}

void CurlStreamLoop::run() {
  // Named, so that its CPU can be told apart from the rest of the process (top -H, /proc/PID/task).
  pthread_setname_np(pthread_self(), "decoder-loop");
  std::array<epoll_event, 256> events{};
  bool stop = false;
  while (!stop) {
    // Events come often enough to gather: let them, for the window, before looking (the rule is
    // in the header). The window counts from the end of the last turn.
    if (const auto window = coalesce_.window(running_.size(), events_per_s_); window.count() > 0) {
      const timespec pause{0, static_cast<long>(std::chrono::nanoseconds(window).count())};
      nanosleep(&pause, nullptr);
    }
    int timeout_ms = -1;
    if (timer_deadline_ns_ >= 0) {
      const std::int64_t left = timer_deadline_ns_ - ports::monotonic_ns();
      timeout_ms = left <= 0 ? 0 : static_cast<int>((left + 999'999) / 1'000'000);
    }
    const int n = epoll_wait(epoll_, events.data(), static_cast<int>(events.size()), timeout_ms);
    count_events(n);
    for (int i = 0; i < n; ++i) {
      const int fd = events[i].data.fd;
      if (fd == wake_fd_) {
        std::uint64_t count = 0;
        [[maybe_unused]] const auto r = read(wake_fd_, &count, sizeof count);
        take_commands(stop);
        continue;
      }
      const std::uint32_t e = events[i].events;
      int flags = 0;
      if (e & (EPOLLIN | EPOLLHUP)) flags |= CURL_CSELECT_IN;
      if (e & EPOLLOUT) flags |= CURL_CSELECT_OUT;
      if (e & EPOLLERR) flags |= CURL_CSELECT_ERR;
      socket_action(fd, flags);
    }
    if (timer_deadline_ns_ >= 0 && ports::monotonic_ns() >= timer_deadline_ns_) {
      timer_deadline_ns_ = -1;
      socket_action(CURL_SOCKET_TIMEOUT, 0);
    }
    read_done();
  }
  // Shut down: whatever still runs or waits to start ends as closed.
  std::vector<Command> waiting;
  {
    std::lock_guard lock(mutex_);
    waiting.swap(commands_);
  }
  for (auto& [raw, t] : running_) {
    curl_multi_remove_handle(multi_, raw->easy_);
    end_safely([&] { t->on_closed(); });
  }
  running_.clear();
  for (auto& c : waiting)
    if (!c.cancel) end_safely([&] { c.transfer->on_closed(); });
  in_flight_.store(0, std::memory_order_relaxed);
}

}  // namespace overhead::backends
