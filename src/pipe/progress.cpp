#include "pipe/progress.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>

#include <cstdio>

#include "ports/clock.hpp"

namespace overhead::pipe {

using ports::monotonic_ns;

Progress::Progress(std::string label, std::uint64_t total, bool enabled)
    : label_(std::move(label)), total_(total), enabled_(enabled), tty_(isatty(STDERR_FILENO) == 1),
      start_ns_(monotonic_ns()) {
  if (enabled_) thread_ = std::thread([this] { loop(); });
}

Progress::~Progress() {
  if (!enabled_) return;
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
  draw(true);
}

void Progress::loop() {
  // A terminal redraws often; a log gets a line every 5 s.
  const auto period = tty_ ? std::chrono::milliseconds(100) : std::chrono::milliseconds(5000);
  std::unique_lock lock(mutex_);
  while (!cv_.wait_for(lock, period, [&] { return stop_; })) draw(false);
}

namespace {

// Columns of the terminal on stderr, asked at every redraw so a resize takes effect; 80 when it
// cannot tell.
std::size_t terminal_columns() {
  winsize ws{};
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 80;
}

}  // namespace

std::string progress_line(const std::string& label, std::uint64_t done, std::uint64_t total, double rate,
                          const std::string& eta, std::size_t columns) {
  char counts[96];
  std::snprintf(counts, sizeof counts, " %llu/%llu %.0f/s", static_cast<unsigned long long>(done),
                static_cast<unsigned long long>(total), rate);
  const std::string tail = counts + eta;
  // A line as wide as the terminal wraps on some terminals, and a wrapped line is not redrawn in
  // place by '\r': stay one column short.
  const std::size_t room = columns > 1 ? columns - 1 : 0;
  constexpr std::size_t kMaxBar = 30;
  std::string line = label;
  if (line.size() + 3 + 10 + tail.size() <= room) {  // a bar only when at least 10 columns are left for it
    const std::size_t width = std::min(kMaxBar, room - line.size() - 3 - tail.size());
    const double share = total ? std::min(1.0, double(done) / double(total)) : 0.0;
    const auto filled = static_cast<std::size_t>(double(width) * share);
    line += " [" + std::string(filled, '#') + std::string(width - filled, '.') + "]";
  }
  line += tail;
  if (line.size() > room) line.resize(room);
  return line;
}

void Progress::draw(bool final) {
  const std::uint64_t done = done_.load(std::memory_order_relaxed);
  const double secs = static_cast<double>(monotonic_ns() - start_ns_) / 1e9;
  const double rate = secs > 0 ? static_cast<double>(done) / secs : 0.0;
  char eta[32] = "";
  if (total_ > 0 && rate > 0 && done < total_)
    std::snprintf(eta, sizeof eta, " ETA %.1fs", static_cast<double>(total_ - done) / rate);
  if (tty_) {
    const std::string text = progress_line(label_, done, total_, rate, eta, terminal_columns());
    std::fprintf(stderr, "\r%s\033[K", text.c_str());
    if (final) std::fputc('\n', stderr);
  } else if (!final || secs >= 5) {
    std::fprintf(stderr, "%s: %llu/%llu items, %.0f/s%s%s\n", label_.c_str(), static_cast<unsigned long long>(done),
                 static_cast<unsigned long long>(total_), rate, eta, final ? " (done)" : "");
  }
  std::fflush(stderr);
}

}  // namespace overhead::pipe
