// The service times `overhead simulate` plugs into its simulations: E of a CPU worker from its
// linear fit, and D of a GPU slot in the per-request chain from the roofline at the batch the
// request finds. Each as the model's mean ("fixed"), or exponential around it ("exp"), the latter
// for comparing with M/M/c theory and for a pessimistic spread.
#pragma once

#include "cost/cost_model.hpp"
#include "cost/roofline.hpp"
#include "cost/sim_result.hpp"

namespace overhead::cost {

// E(x) = alpha + beta x microseconds, in seconds.
ServiceTime cpu_service(const ELinear& e, bool exponential);

// A request keeps the step time of the batch it found when it started (the engine simulation does
// not; see engine_sim.hpp): its prefill steps and out - 1 decode steps, with the pool's busy slots
// spread over `replicas` replicas (rounded up).
ServiceTime gpu_slot_service(const Roofline& replica, int replicas, bool exponential);

}  // namespace overhead::cost
