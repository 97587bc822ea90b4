// The engine's step model (engine_sim.hpp): one replica of a continuous-batching engine. At a
// step boundary it admits the ready requests in FIFO order while a slot and their KV fit; a step
// runs every decode and the prefill budget over the prefilling sequences in order, and takes
// step_seconds() of the roofline (the server model `cost` prices); a sequence emits its first
// token at the end of its last prefill step and one token per step after it, and leaves at the
// boundary after its last token.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <queue>
#include <utility>
#include <vector>

#include "cost/engine_source.hpp"
#include "cost/engine_tally.hpp"
#include "cost/roofline.hpp"

namespace overhead::cost {

class EngineReplica {
 public:
  // scheduler_steps: decode steps scheduled together (1: none; Roofline::scheduler_steps).
  EngineReplica(std::size_t slots, std::uint64_t scheduler_steps = 1);

  // Admits at boundary t, in FIFO order, while a slot and the `kv_tokens` of KV memory allow.
  void admit(EngineSource& source, double t, double kv_tokens, EngineTally& tally);
  bool idle() const { return active_ == 0; }
  // One step from boundary t; returns when it ends. Its completions go to the tally and, for a
  // closed loop's clients, to the source.
  double step(const Roofline& model, double t, EngineSource& source, EngineTally& tally);

  double busy_s() const { return busy_; }
  double batch_time() const { return batch_time_; }  // running sequences x seconds, summed over steps

 private:
  // A running sequence.
  struct Seq {
    EngineRequest item;
    double admitted = 0, first_token = 0;
    double prefill_left = 0, prefilled = 0;
    std::uint64_t finish_step = 0;
  };
  void complete(std::size_t slot, double t, EngineSource& source, EngineTally& tally);
  void start_decoding(std::size_t slot, double t, EngineSource& source, EngineTally& tally);

  std::vector<Seq> slots_;
  std::vector<std::size_t> free_slots_;
  std::deque<std::size_t> prefilling_;
  std::priority_queue<std::pair<std::uint64_t, std::size_t>, std::vector<std::pair<std::uint64_t, std::size_t>>,
                      std::greater<>> decoding_;  // (finish step, slot)
  double decode_context_ = 0, kv_reserved_ = 0;
  std::uint64_t steps_ = 0, bursts_ = 1;
  double burst_s_ = 0, burst_tokens_ = 0;  // the burst in progress
  std::size_t active_ = 0;
  double busy_ = 0, batch_time_ = 0;
};

}  // namespace overhead::cost
