#include "cost/worker_front.hpp"

#include <algorithm>
#include <deque>
#include <functional>
#include <queue>
#include <utility>

namespace overhead::cost {
namespace {

// The publisher pool, first come first served. Records are offered in non-decreasing time order
// (the event loop's), so they are handed off and taken by a thread in that order too, and the
// records waiting for a thread at an instant are a prefix of those handed off and not yet taken.
class PublisherPool {
 public:
  PublisherPool(int publishers, std::size_t capacity) : capacity_(capacity) {
    for (int i = 0; i < publishers; ++i) free_.push(0);
  }

  // A record offered at `t` that publishes for `seconds`: (when it is handed off, when a thread
  // takes it). Handed off at `t` when fewer than `capacity` records wait; else when a thread
  // takes the record that makes room (and after the workers blocked before it).
  std::pair<double, double> offer(double t, double seconds) {
    drop_taken(t);
    double handed = t;
    if (waiting_.size() >= capacity_) {
      handed = waiting_[waiting_.size() - capacity_];
      drop_taken(handed);
    }
    const double take = std::max(handed, free_.top());
    free_.pop();
    free_.push(take + seconds);
    waiting_.push_back(take);
    return {handed, take};
  }

 private:
  // A record taken at the very instant another is offered has left first (its slot is free).
  void drop_taken(double t) {
    while (!waiting_.empty() && waiting_.front() <= t) waiting_.pop_front();
  }
  std::size_t capacity_;
  std::priority_queue<double, std::vector<double>, std::greater<>> free_;  // when each thread is free
  std::deque<double> waiting_;  // take times of the records handed off and not yet taken
};

struct Batch {
  std::size_t first = 0, last = 0;  // requests [first, last) in arrival order
  double in_hand = 0;
};

struct Worker {
  std::deque<Batch> hand;  // received, not finished; the front is being processed
  std::size_t next = 0;    // the front batch's next request to start
  bool busy = false;       // a request of its is in E, or its record waits to be handed off
  bool asking = false;     // a receive of its is pending
  double free = 0;         // when its processing thread can start the next request
};

// A worker's next step: a receive is answered (ask) or E of its current request ends (offer).
// Ordered by time, then by when it was scheduled, so that the run is deterministic.
struct Event {
  double t = 0;
  std::uint64_t order = 0;
  std::size_t worker = 0;
  bool ask = false;
  bool operator>(const Event& o) const { return t != o.t ? t > o.t : order > o.order; }
};

}  // namespace

WorkerFront simulate_workers(const std::vector<double>& arrival, const SimConfig& config, std::mt19937_64& rng) {
  const std::size_t n = arrival.size();
  const StageSpec& stage = config.stages.front();
  const InputQueueSpec& in = config.input;
  const bool prefetch = in.prefetch && in.on();
  const std::size_t batch = std::max<std::size_t>(1, in.batch);
  const bool publishing = config.publish.publishers > 0;
  PublisherPool pool(std::max(1, config.publish.publishers),
                     config.publish.capacity ? config.publish.capacity : 2 * static_cast<std::size_t>(std::max(1, config.publish.publishers)));

  WorkerFront f;
  f.e_start.assign(n, 0);
  f.e_s.assign(n, 0);
  f.handed_off.assign(n, 0);
  if (publishing) {
    f.publish_start.assign(n, 0);
    f.publish_s.assign(n, 0);
  }
  std::vector<Worker> workers(static_cast<std::size_t>(stage.servers));
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
  std::uint64_t order = 0;
  std::size_t head = 0;  // the next request the queue hands out
  auto ask = [&](std::size_t w, double t) {
    workers[w].asking = true;
    events.push({t, order++, w, true});
  };
  auto start = [&](std::size_t w, double s) {
    Worker& wk = workers[w];
    const std::size_t i = wk.hand.front().first + wk.next;
    const double e = stage.service_s(config.workload[i % config.workload.size()], 1, rng);
    if (!(e >= 0)) throw CostError("simulate: stage " + stage.name + " gave a negative or NaN service time");
    f.e_start[i] = s;
    f.e_s[i] = e;
    wk.busy = true;
    events.push({s + e, order++, w, false});
  };
  for (std::size_t w = 0; w < workers.size(); ++w) ask(w, 0);

  while (!events.empty()) {
    const Event ev = events.top();
    events.pop();
    Worker& wk = workers[ev.worker];
    if (ev.ask) {
      wk.asking = false;
      if (head == n) continue;  // nothing left to receive: this worker asks no more
      // A long poll: answered when the first message is there, with all that are by then.
      const double served = std::max(ev.t, arrival[head]);
      std::size_t last = head + 1;
      while (last < n && last - head < batch && arrival[last] <= served) ++last;
      const double in_hand = served + in.receive_s;
      wk.hand.push_back({head, last, in_hand});
      head = last;
      ++f.receives;
      if (!prefetch) f.io_seconds += in.receive_s;
      if (prefetch && wk.hand.size() < 2) ask(ev.worker, in_hand);
      if (!wk.busy && wk.hand.size() == 1) start(ev.worker, std::max(wk.free, in_hand));
      continue;
    }
    const std::size_t i = wk.hand.front().first + wk.next;
    double handed = ev.t;
    if (publishing) {
      const double p = config.publish.publish_s(config.workload[i % config.workload.size()], 1, rng);
      if (!(p >= 0)) throw CostError("simulate: the publish stage gave a negative or NaN service time");
      const auto [h, take] = pool.offer(ev.t, p);
      handed = h;
      f.publish_start[i] = take;
      f.publish_s[i] = p;
    }
    f.handed_off[i] = handed;
    wk.free = handed;
    wk.busy = false;
    if (++wk.next == wk.hand.front().last - wk.hand.front().first) {
      wk.hand.pop_front();
      wk.next = 0;
      if (!prefetch) {
        // The worker's own thread deletes the batch, then receives the next.
        wk.free += in.delete_s;
        f.io_seconds += in.delete_s;
        ask(ev.worker, wk.free);
      } else if (!wk.asking) {
        ask(ev.worker, wk.free);  // room for one more batch ahead
      }
    }
    if (!wk.hand.empty()) start(ev.worker, std::max(wk.free, wk.hand.front().in_hand));
  }
  return f;
}

}  // namespace overhead::cost
