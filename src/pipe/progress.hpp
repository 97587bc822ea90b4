// Progress of a long step: on a terminal, a bar redrawn in place (items done, rate, ETA); when
// stderr is not a terminal, one plain line every few seconds, so logs stay readable.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace overhead::pipe {

// The bar's line for a terminal `columns` wide: "label [####....] done/total rate/s ETA", never
// wider than columns - 1 (the bar shrinks first, then disappears, then the line is cut).
[[nodiscard]] std::string progress_line(const std::string& label, std::uint64_t done, std::uint64_t total,
                                        double rate, const std::string& eta, std::size_t columns);

class Progress {
 public:
  // `total` 0 = unknown (no ETA). `enabled` false = silent.
  Progress(std::string label, std::uint64_t total, bool enabled = true);
  ~Progress();  // prints the final state
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  std::atomic<std::uint64_t>& counter() { return done_; }

 private:
  void loop();
  void draw(bool final);

  std::string label_;
  std::uint64_t total_;
  bool enabled_;
  bool tty_;
  std::int64_t start_ns_;
  std::atomic<std::uint64_t> done_{0};
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace overhead::pipe
