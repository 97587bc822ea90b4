#include "pipe/worker.hpp"

#include <algorithm>

#include "ports/clock.hpp"

namespace overhead::pipe {

using ports::monotonic_ns;
using ports::thread_cpu_ns;

namespace {

// The options as both halves read them: the bounds that follow from others filled in.
WorkerOptions normalized(WorkerOptions o) {
  if (o.batch == 0) o.batch = 1;
  if (o.max_in_flight == 0) o.max_in_flight = 4 * o.batch;
  if (o.max_in_flight < o.batch) o.max_in_flight = o.batch;
  // Room for every generation in flight plus a batch being taken up.
  if (o.decoder && o.max_decodes > 0) o.max_in_flight = std::max(o.max_in_flight, o.max_decodes + o.batch);
  return o;
}

}  // namespace

Worker::Worker(Source& source, const Processor& processor, RecordSink& sink, DeadLetterSink& dead_letters,
               WorkerOptions options)
    : options_(normalized(std::move(options))),
      loop_(source, options_),
      items_(source, processor, sink, dead_letters, options_, loop_) {}

Worker::~Worker() = default;

WorkerStats Worker::run() {
  const std::int64_t start = monotonic_ns();
  const std::int64_t cpu_start = thread_cpu_ns();
  items_.begin_run();
  loop_.run(items_, items_.publisher());
  const ItemStageStats items = items_.stats();
  const BatchLoopStats batches = loop_.stats();
  WorkerStats s;
  s.items = items.items;
  s.ok = items.ok;
  s.bad_input = items.bad_input;
  s.publish_failed = items.publish_failed;
  s.prompt_token_mismatches = items.prompt_token_mismatches;
  s.batches = batches.batches;
  s.delete_failures = batches.delete_failures;
  s.elapsed_ns = monotonic_ns() - start;
  s.cpu_ns = thread_cpu_ns() - cpu_start;
  s.publisher = items_.publisher().stats();
  return s;
}

}  // namespace overhead::pipe
