// Each generation's share of the engine's time, as the worker sees it: while n generations are in
// flight at once, each is charged 1/n of every second. The shares of the generations over a span
// sum to the time in that span during which any was in flight (the engine's busy time, as far as
// this worker's generations keep it busy), and a generation alone is charged its whole decode.
// Kept as one running integral S(t) = integral of 1/n(t) dt: a generation's share is S at its end
// less S at its start. Thread-safe: generations start on the worker's thread and end on the
// decoder's.
#pragma once

#include <cstdint>
#include <mutex>

namespace overhead::pipe {

class EngineShare {
 public:
  // A generation starts at `now_ns` (monotonic): the mark to give end().
  [[nodiscard]] double begin(std::int64_t now_ns);
  // It ended at `now_ns`: its share in seconds since `mark`.
  [[nodiscard]] double end(std::int64_t now_ns, double mark);

 private:
  void advance(std::int64_t now_ns);  // under mutex_

  std::mutex mutex_;
  std::int64_t in_flight_ = 0;
  std::int64_t last_ns_ = 0;
  double integral_s_ = 0;  // S(last_ns_)
};

}  // namespace overhead::pipe
