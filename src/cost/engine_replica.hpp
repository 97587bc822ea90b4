// The engine's step model (engine_sim.hpp): one replica of a continuous-batching engine. At a
// step boundary it admits the ready requests in FIFO order while a slot and their KV fit; a step
// runs every decode and the prefill budget over the prefilling sequences in order, and takes
// step_seconds() of the roofline (the server model `cost` prices); a sequence emits its first
// token at the end of its last prefill step and one token per step after it, and leaves at the
// boundary after its last token.
//
// The KV a request needs at admission is its prompt and the share of its output the engine
// reserves (Roofline::output_reserved); the rest is allocated as it is produced. An engine that
// reserves less than all of it can run out: before a step whose new tokens do not fit, it preempts
// the sequence admitted last (vLLM V1's Scheduler.schedule: `self.running.pop()`), frees its KV and
// puts it back at the head of the queue, to compute its prompt and the output so far again when it
// is readmitted (`num_computed_tokens = 0`). An engine whose decodes share the prefill budget
// (Roofline::decodes_share_budget, vLLM V1's one token budget a step) gives prompts what the
// decodes leave of it.
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

// SGLang's reserved share of the output (new_token_ratio): it falls by `decay` a step to `floor`;
// after a retraction it is what the running requests have produced, plus `headroom_steps` tokens
// each, of their maximum.
struct AdaptiveReserve {
  bool on = false;
  double floor = 0, decay = 0, headroom_steps = 0;
};

class EngineReplica {
 public:
  // scheduler_steps: decode steps scheduled together (1: none; Roofline::scheduler_steps).
  // admission_budget: with decodes that share the prefill budget, a request is admitted only into a
  // step whose budget its decodes and the prompts before it leave tokens of (vLLM V1 schedules a
  // waiting request, and allocates its KV, only with token_budget > 0); 0: no such limit.
  // adapts: the reserved share moves as SGLang's new_token_ratio does (Roofline::reserve_adapts).
  EngineReplica(std::size_t slots, std::uint64_t scheduler_steps = 1, double output_reserved = 1, double admission_budget = 0,
                const AdaptiveReserve& adapts = {});

  // Admits at boundary t, in FIFO order (preempted sequences first), while a slot and the
  // `kv_tokens` of KV memory allow.
  void admit(EngineSource& source, double t, double kv_tokens, EngineTally& tally);
  // Before the step from t: preempts (the last admitted; SGLang: the fewest output tokens) while
  // the step's new tokens' KV does not fit.
  void make_room(double kv_tokens, double t);
  std::uint64_t preemptions() const { return preemptions_; }
  bool idle() const { return active_ == 0; }
  // One step from boundary t; returns when it ends. Its completions go to the tally and, for a
  // closed loop's clients, to the source.
  double step(const Roofline& model, double t, EngineSource& source, EngineTally& tally);

  double busy_s() const { return busy_; }
  double batch_time() const { return batch_time_; }  // running sequences x seconds, summed over steps

 private:
  // A running sequence (or a preempted one waiting to run again).
  struct Seq {
    EngineRequest item;
    double admitted = 0, first_token = 0;
    double prefill_left = 0, prefilled = 0;
    std::uint64_t finish_step = 0;
    std::uint64_t order = 0;          // admission order: the last admitted is preempted first
    double produced = 0;              // output tokens produced (before a preemption, kept)
    std::uint64_t decode_from = 0;    // the step count when it started decoding
    double produced_at_decode = 0;    // `produced` then
    bool decoding = false, started = false;  // started: its first token was emitted
    double requeued_at = 0;           // when it was last preempted
  };
  // Admits `s` (fresh or preempted) at boundary t into a free slot.
  void place(Seq s, double t, EngineTally& tally);
  void complete(std::size_t slot, double t, EngineSource& source, EngineTally& tally);
  void start_decoding(std::size_t slot, double t, EngineSource& source, EngineTally& tally);
  // Frees a running sequence's KV and puts it at the head of the queue.
  void preempt(std::size_t slot, double t);
  std::size_t victim() const;  // the running sequence preempted first
  double produced_now(const Seq& s) const;
  // KV a request needs when (re)admitted: its prompt, the output so far, the reserved share of the rest.
  static double admission_need(const EngineRequest& it, double produced, double reserve_share);

  std::vector<Seq> slots_;
  std::vector<bool> running_;       // by slot
  std::vector<std::size_t> free_slots_;
  std::deque<std::size_t> prefilling_;
  std::deque<Seq> preempted_;       // ahead of the source's queue, the earliest admitted first
  std::priority_queue<std::pair<std::uint64_t, std::size_t>, std::vector<std::pair<std::uint64_t, std::size_t>>,
                      std::greater<>> decoding_;  // (finish step, slot); stale entries skipped
  std::uint64_t admissions_ = 0;
  std::size_t decoding_count_ = 0;
  double reserve_share_ = 1;
  double admission_budget_ = 0;
  AdaptiveReserve adapts_;
  // KV tokens the running sequences have computed (prompt and output so far), and the output
  // tokens they have still to produce (of which reserve_share_ is reserved).
  double computed_ = 0, remaining_ = 0;
  bool preempted_this_step_ = false;
  double decode_context_ = 0;
  std::uint64_t steps_ = 0, bursts_ = 1;
  double burst_s_ = 0, burst_tokens_ = 0;  // the burst in progress
  std::size_t active_ = 0;
  double busy_ = 0, batch_time_ = 0;
  std::uint64_t preemptions_ = 0;
};

}  // namespace overhead::cost
