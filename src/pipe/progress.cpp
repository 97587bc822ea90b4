#include "pipe/progress.hpp"

#include <unistd.h>

#include <cstdio>

#include "pipe/clock.hpp"

namespace overhead::pipe {

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

void Progress::draw(bool final) {
  const std::uint64_t done = done_.load(std::memory_order_relaxed);
  const double secs = static_cast<double>(monotonic_ns() - start_ns_) / 1e9;
  const double rate = secs > 0 ? static_cast<double>(done) / secs : 0.0;
  char eta[32] = "";
  if (total_ > 0 && rate > 0 && done < total_)
    std::snprintf(eta, sizeof eta, " ETA %.1fs", static_cast<double>(total_ - done) / rate);
  if (tty_) {
    constexpr int kWidth = 30;
    const int filled = total_ ? static_cast<int>(kWidth * std::min<double>(1.0, double(done) / double(total_))) : 0;
    std::string bar(static_cast<std::size_t>(filled), '#');
    bar.resize(kWidth, '.');
    std::fprintf(stderr, "\r%-28s [%s] %llu/%llu %.0f/s%s\033[K", label_.c_str(), bar.c_str(),
                 static_cast<unsigned long long>(done), static_cast<unsigned long long>(total_), rate, eta);
    if (final) std::fputc('\n', stderr);
  } else if (!final || secs >= 5) {
    std::fprintf(stderr, "%s: %llu/%llu items, %.0f/s%s%s\n", label_.c_str(), static_cast<unsigned long long>(done),
                 static_cast<unsigned long long>(total_), rate, eta, final ? " (done)" : "");
  }
  std::fflush(stderr);
}

}  // namespace overhead::pipe
