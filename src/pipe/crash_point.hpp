// A crash at a named point of the worker, for kill tests of whole processes: when the
// environment variable OVERHEAD_WORKER_CRASH is set to STAGE:N (STAGE one of after_receive,
// after_render, after_publish, before_delete, after_delete; N >= 1), the process SIGKILLs itself
// the N-th time the worker reaches that stage. A real SIGKILL: no destructor, no flush, nothing
// after that point runs, exactly as a kill from outside that happened to fall there.
#pragma once

#include <functional>
#include <string>

#include "pipe/worker.hpp"

namespace overhead::pipe {

// The hook for WorkerOptions::fault; empty when `spec` is empty. A malformed spec throws
// std::invalid_argument naming the variable and what is wrong.
std::function<void(WorkerStage)> crash_point(const std::string& spec);

// crash_point($OVERHEAD_WORKER_CRASH), empty when the variable is not set.
std::function<void(WorkerStage)> crash_point_from_env();

}  // namespace overhead::pipe
