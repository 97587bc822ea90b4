#include "cost/engine_replica.hpp"

#include <algorithm>

namespace overhead::cost {

EngineReplica::EngineReplica(std::size_t slots, std::uint64_t scheduler_steps)
    : slots_(slots), bursts_(std::max<std::uint64_t>(1, scheduler_steps)) {
  for (std::size_t i = slots_.size(); i-- > 0;) free_slots_.push_back(i);
}

void EngineReplica::admit(EngineSource& source, double t, double kv_tokens, EngineTally& tally) {
  // Multi-step scheduling: a running engine takes new sequences only between bursts.
  if (active_ > 0 && steps_ % bursts_ != 0) return;
  double up = 0;
  while (active_ < slots_.size() && source.peek(up) && up <= t) {
    // The head of the queue waits for KV memory; nothing behind it passes (FIFO).
    const double need = source.head().in + std::max(1.0, source.head().out);
    if (kv_reserved_ + need > kv_tokens) break;
    const EngineRequest it = source.take();
    const std::size_t slot = free_slots_.back();
    free_slots_.pop_back();
    Seq& s = slots_[slot];
    s = Seq{};
    s.item = it;
    s.admitted = t;
    s.prefill_left = it.in;
    kv_reserved_ += need;
    ++active_;
    prefilling_.push_back(slot);
    tally.admitted(it, t);
  }
}

void EngineReplica::complete(std::size_t slot, double t, EngineSource& source, EngineTally& tally) {
  const Seq& s = slots_[slot];
  tally.completed(s.item, s.admitted, s.first_token, t);
  kv_reserved_ -= s.item.in + std::max(1.0, s.item.out);
  free_slots_.push_back(slot);
  --active_;
  source.completed(t);
}

void EngineReplica::start_decoding(std::size_t slot, double t, EngineSource& source, EngineTally& tally) {
  Seq& s = slots_[slot];
  s.first_token = t;
  tally.first_token(s.item, t);
  if (s.item.out <= 1) {
    complete(slot, t, source, tally);
    return;
  }
  s.finish_step = steps_ + static_cast<std::uint64_t>(s.item.out - 1);
  decoding_.push({s.finish_step, slot});
  decode_context_ += s.item.in + 1;
}

double EngineReplica::step(const Roofline& model, double t, EngineSource& source, EngineTally& tally) {
  // The step: every decode, and the prefill budget over the prefilling sequences in order.
  StepLoad load;
  load.decodes = static_cast<double>(decoding_.size());
  load.decode_context = decode_context_;
  double left = model.prefill_chunk_tokens;
  std::size_t finishing_prefills = 0;
  for (std::size_t i = 0; i < prefilling_.size(); ++i) {
    Seq& s = slots_[prefilling_[i]];
    const double chunk = std::min(s.prefill_left, left);
    if (s.prefill_left > 0 && chunk <= 0) break;
    load.prefill_tokens += chunk;
    load.prefill_context += chunk * (s.prefilled + chunk / 2);
    s.prefill_left -= chunk;
    s.prefilled += chunk;
    left -= chunk;
    if (s.prefill_left > 0) break;
    finishing_prefills = i + 1;
  }
  const double step = step_seconds(model, load);
  const double end = t + step;
  busy_ += step;
  batch_time_ += static_cast<double>(active_) * step;
  ++steps_;
  ++tally.steps;
  // Every decoding sequence's token came one step after its last; with bursts, the burst's tokens
  // reach the client together at its end.
  if (bursts_ == 1) {
    tally.itl.add(step, static_cast<std::uint64_t>(load.decodes));
  } else {
    burst_s_ += step;
    burst_tokens_ += load.decodes;
    if (steps_ % bursts_ == 0) {
      const double per_step = burst_tokens_ / static_cast<double>(bursts_);
      tally.itl.add(burst_s_, static_cast<std::uint64_t>(per_step));
      tally.itl.add(0, static_cast<std::uint64_t>(burst_tokens_ - per_step));
      burst_s_ = burst_tokens_ = 0;
    }
  }
  // Every decode produced a token: the context grows; the finished ones leave.
  decode_context_ += load.decodes;
  while (!decoding_.empty() && decoding_.top().first <= steps_) {
    const std::size_t slot = decoding_.top().second;
    decoding_.pop();
    decode_context_ -= slots_[slot].item.in + slots_[slot].item.out;
    complete(slot, end, source, tally);
  }
  // The prefills that ended emit their first token.
  for (std::size_t i = 0; i < finishing_prefills; ++i) {
    const std::size_t slot = prefilling_.front();
    prefilling_.pop_front();
    start_decoding(slot, end, source, tally);
  }
  return end;
}

}  // namespace overhead::cost
