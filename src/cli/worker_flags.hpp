// The worker flags of `overhead run`, `overhead worker` and `overhead serve`, bound once into the
// settings they set: pipe::WorkerHostOptions (pipe/worker_host.hpp), which holds every worker's
// pipe::WorkerOptions. A new worker setting is its field there and its flag in worker_flags.cpp;
// the commands and the server pass the whole WorkerHostOptions on. The defaults that differ by
// command (--max-decodes 64 for serve, 0 for run and worker, ...) are one table in worker_flags.cpp.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "cost/request_price.hpp"
#include "pipe/worker_host.hpp"

namespace overhead::cli {

enum class WorkerCommand { run, worker, serve };

// What a command's worker flags fill. `host` takes the settings a flag sets as they are; the
// texts below become settings after parsing (worker_host_options()).
struct WorkerFlags {
  WorkerCommand command = WorkerCommand::run;
  pipe::WorkerHostOptions host;
  std::string decoder = "none";  // --decoder (backends::open_decoder)
  std::string prefetch = "on";   // --prefetch on|off
  std::string date;              // --date: empty = strftime_now reads the clock
  std::string run_id;            // --run-id: empty = a new one (run, worker)
  // --tool-parser, --reasoning-parser (run, worker; serve has its own, for the gateway and its
  // in-process workers alike): empty = the template's.
  std::string tool_parser, reasoning_parser;
  CLI::Option* max_decodes = nullptr;  // whether --max-decodes was given
  // The prices every record is priced at (--price-*, --engine-profile, --gpu, --model); none
  // given: the records are not priced.
  cost::RequestPriceSpec price;
};

// Adds `command`'s worker flags to `cmd`, bound into `flags`, whose defaults it first sets from
// the command's row of the table.
void add_worker_flags(CLI::App& cmd, WorkerCommand command, WorkerFlags& flags);

// After parsing: the host options with the decoder opened, the run id made (run, worker), the date
// pinned, the prefetch set and the pricer made from the price flags. `shared_queue`: the input queue's family is shared (a gateway can
// name reply queues in it); without --max-decodes the command's default for a shared queue then
// applies (`worker`: 64, so a gateway's streams arrive as deltas). Throws CLI::ValidationError for
// a --decoder that does not open, or prices that cannot be found (an unknown preset or profile).
[[nodiscard]] pipe::WorkerHostOptions worker_host_options(const WorkerFlags& flags, bool shared_queue = false);

}  // namespace overhead::cli
