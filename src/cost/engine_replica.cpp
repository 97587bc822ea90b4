#include "cost/engine_replica.hpp"

#include <algorithm>

namespace overhead::cost {

EngineReplica::EngineReplica(std::size_t slots, std::uint64_t scheduler_steps, double output_reserved, double admission_budget,
                             const AdaptiveReserve& adapts)
    : slots_(slots), running_(slots, false), reserve_share_(std::clamp(output_reserved, 0.0, 1.0)), admission_budget_(admission_budget),
      adapts_(adapts), bursts_(std::max<std::uint64_t>(1, scheduler_steps)) {
  for (std::size_t i = slots_.size(); i-- > 0;) free_slots_.push_back(i);
}

double EngineReplica::admission_need(const EngineRequest& it, double produced, double reserve_share) {
  const double out = std::max(1.0, it.out);
  return it.in + produced + reserve_share * (out - produced);
}

void EngineReplica::place(Seq s, double t, EngineTally& tally) {
  const std::size_t slot = free_slots_.back();
  free_slots_.pop_back();
  if (!s.started) {
    s.admitted = t;
    tally.admitted(s.item, t);
  }
  // A preempted sequence computes its prompt and the output it had produced again.
  s.prefill_left = s.item.in + s.produced;
  s.prefilled = 0;
  s.decoding = false;
  s.order = ++admissions_;
  computed_ += s.item.in + s.produced;
  remaining_ += std::max(1.0, s.item.out) - s.produced;
  slots_[slot] = s;
  running_[slot] = true;
  ++active_;
  prefilling_.push_back(slot);
}

void EngineReplica::admit(EngineSource& source, double t, double kv_tokens, EngineTally& tally) {
  // Multi-step scheduling: a running engine takes new sequences only between bursts.
  if (active_ > 0 && steps_ % bursts_ != 0) return;
  // No waiting request, preempted or new, joins a step that preempted (vLLM V1 schedules its
  // waiting queue only when it preempted none); then the preempted go first, at its head.
  if (preempted_this_step_) {
    preempted_this_step_ = false;
    return;
  }
  // The running decodes take their next token's KV before a waiting request gets any (vLLM V1
  // schedules the running requests first).
  const double growth = (1 - reserve_share_) * static_cast<double>(decoding_count_);
  const auto fits = [&](const EngineRequest& it, double produced) {
    return computed_ + reserve_share_ * remaining_ + growth + admission_need(it, produced, reserve_share_) <= kv_tokens;
  };
  // What the next step's budget leaves after its decodes and the prompts already running.
  double left = admission_budget_ - static_cast<double>(decoding_count_);
  for (const std::size_t slot : prefilling_) left -= slots_[slot].prefill_left;
  double up = 0;
  while (active_ < slots_.size()) {
    const bool fresh = source.peek(up) && up <= t;
    // The preempted stand at the head of the queue (vLLM prepends them); SGLang's retracted join
    // its tail, behind the requests that were waiting when they were retracted.
    const bool preempted = !preempted_.empty() && (!adapts_.on || !fresh || preempted_.front().requeued_at < up);
    if (preempted) {
      const Seq& head = preempted_.front();
      if (!fits(head.item, head.produced) && active_ > 0) return;  // nothing passes it (FIFO)
      place(preempted_.front(), t, tally);
      preempted_.pop_front();
      continue;
    }
    if (!fresh || (admission_budget_ > 0 && left <= 0)) return;
    // The head of the queue waits for KV memory; nothing behind it passes (FIFO).
    if (!fits(source.head(), 0)) return;
    Seq s;
    s.item = source.take();
    left -= s.item.in;
    place(s, t, tally);
  }
}

void EngineReplica::preempt(std::size_t slot, double t) {
  Seq& s = slots_[slot];
  if (s.decoding) {
    s.produced = produced_now(s);
    decode_context_ -= s.item.in + s.produced;
    --decoding_count_;
  } else {
    prefilling_.erase(std::find(prefilling_.begin(), prefilling_.end(), slot));
  }
  computed_ -= s.item.in + s.produced;
  remaining_ -= std::max(1.0, s.item.out) - s.produced;
  s.decoding = false;
  running_[slot] = false;
  free_slots_.push_back(slot);
  --active_;
  ++preemptions_;
  s.requeued_at = t;
  if (adapts_.on) {
    preempted_.push_back(s);  // SGLang: waiting_queue.extend(retracted_reqs)
  } else {
    preempted_this_step_ = true;
    preempted_.push_front(s);  // vLLM: the earlier admitted, preempted after it, stand before it
  }
}

std::size_t EngineReplica::victim() const {
  // vLLM: the last admitted (`self.running.pop()`). SGLang (retract_decode): the fewest output
  // tokens, and of those the longest prompt.
  std::size_t v = slots_.size();
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    if (!running_[i]) continue;
    if (v == slots_.size()) {
      v = i;
      continue;
    }
    const Seq &a = slots_[i], &b = slots_[v];
    // SGLang sorts by (output tokens, -prompt) descending and pops the end: among equals, the
    // later in its batch.
    const bool before = adapts_.on ? (produced_now(a) != produced_now(b) ? produced_now(a) < produced_now(b)
                                      : a.item.in != b.item.in        ? a.item.in > b.item.in
                                                                      : a.order > b.order)
                                   : a.order > b.order;
    if (before) v = i;
  }
  return v;
}

double EngineReplica::produced_now(const Seq& s) const {
  return s.decoding ? s.produced_at_decode + static_cast<double>(steps_ - s.decode_from) : s.produced;
}

void EngineReplica::make_room(double kv_tokens, double t) {
  if (reserve_share_ >= 1 && !adapts_.on) return;  // every output reserved: nothing can run out
  // The step's new tokens: one a decode, one each prefill that ends (its first token).
  const auto need = [&] { return computed_ + static_cast<double>(decoding_count_ + prefilling_.size()); };
  if (!adapts_.on) {
    while (active_ > 1 && need() + reserve_share_ * remaining_ - reserve_share_ * static_cast<double>(decoding_count_ + prefilling_.size()) > kv_tokens)
      preempt(victim(), t);
    return;
  }
  // SGLang: the share decays a step towards its floor; when the next decode does not fit, it
  // retracts until the rest have room for `headroom_steps` more tokens each, and sets the share to
  // what those have produced (plus that headroom) of their maximum.
  reserve_share_ = std::max(adapts_.floor, reserve_share_ - adapts_.decay);
  if (active_ <= 1 || need() <= kv_tokens) return;
  while (active_ > 1 && computed_ + adapts_.headroom_steps * static_cast<double>(active_) > kv_tokens) preempt(victim(), t);
  double produced = 0, most = 0;
  for (std::size_t i = 0; i < slots_.size(); ++i)
    if (running_[i]) {
      produced += produced_now(slots_[i]);
      most += std::max(1.0, slots_[i].item.out);
    }
  reserve_share_ = std::min(1.0, (produced + adapts_.headroom_steps * static_cast<double>(active_)) / std::max(1.0, most));
}

void EngineReplica::complete(std::size_t slot, double t, EngineSource& source, EngineTally& tally) {
  Seq& s = slots_[slot];
  tally.completed(s.item, s.admitted, s.first_token, t);
  computed_ -= s.item.in + std::max(1.0, s.item.out);
  if (s.decoding) --decoding_count_;
  s.decoding = false;
  running_[slot] = false;
  free_slots_.push_back(slot);
  --active_;
  source.completed(t);
}

void EngineReplica::start_decoding(std::size_t slot, double t, EngineSource& source, EngineTally& tally) {
  Seq& s = slots_[slot];
  if (!s.started) {
    s.started = true;
    s.first_token = t;
    tally.first_token(s.item, t);
  }
  // The token this prefill produced: its KV is computed now.
  s.produced += 1;
  computed_ += 1;
  remaining_ -= 1;
  const double out = std::max(1.0, s.item.out);
  if (s.produced >= out) {
    complete(slot, t, source, tally);
    return;
  }
  s.decoding = true;
  ++decoding_count_;
  s.decode_from = steps_;
  s.produced_at_decode = s.produced;
  s.finish_step = steps_ + static_cast<std::uint64_t>(out - s.produced);
  decoding_.push({s.finish_step, slot});
  decode_context_ += s.item.in + s.produced;
}

double EngineReplica::step(const Roofline& model, double t, EngineSource& source, EngineTally& tally) {
  // Stale entries (a sequence preempted, its slot reused) are skipped where they surface.
  const auto live = [&](const std::pair<std::uint64_t, std::size_t>& e) {
    const Seq& s = slots_[e.second];
    return running_[e.second] && s.decoding && s.finish_step == e.first;
  };
  // The step: every decode, and the prefill budget over the prefilling sequences in order.
  StepLoad load;
  load.decodes = static_cast<double>(decoding_count_);
  load.decode_context = decode_context_;
  double left = model.prefill_chunk_tokens - (model.decodes_share_budget ? load.decodes : 0);
  std::size_t finishing_prefills = 0;
  for (std::size_t i = 0; i < prefilling_.size(); ++i) {
    Seq& s = slots_[prefilling_[i]];
    const double chunk = std::min(s.prefill_left, std::max(0.0, left));
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
  // Every decode produced a token: the context grows, and the KV of its unreserved share; the
  // finished ones leave.
  decode_context_ += load.decodes;
  computed_ += load.decodes;
  remaining_ -= load.decodes;
  while (!decoding_.empty() && decoding_.top().first <= steps_) {
    const auto top = decoding_.top();
    decoding_.pop();
    if (!live(top)) continue;
    Seq& s = slots_[top.second];
    decode_context_ -= s.item.in + std::max(1.0, s.item.out);
    complete(top.second, end, source, tally);
  }
  // The prefills that ended emit their first token (or, preempted before, their next).
  for (std::size_t i = 0; i < finishing_prefills; ++i) {
    const std::size_t slot = prefilling_.front();
    prefilling_.pop_front();
    start_decoding(slot, end, source, tally);
  }
  return end;
}

}  // namespace overhead::cost
