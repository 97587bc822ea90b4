// The one place that builds workers: from options (the worker's settings and how many threads,
// the tokenizers or a processor, where replies go) it makes the processor, the reply path and
// the workers, runs them over a source into a sink, and adds up their stats. `overhead run` (the
// five cases), `overhead worker` and the gateway's in-process workers (`overhead serve`) all run
// their workers through it, so a new worker setting is wired once.
//
// Replies (reply/reply_path.hpp), at most one of:
//   - `replies`: an in-process gateway's own path (its box): the workers answer it directly;
//   - `family` (the input queue's, ports/queue_family.hpp): the workers answer each item on the
//     reply queue it names, a sibling of the input queue (reply/queue_replies.hpp; the host owns it);
//   - neither: nobody waits for answers (a batch run).
//
// Cancellation over a shared queue (with reply queues only): given its `control_queue`, the host
// reads cancels there (reply/control_receiver.hpp) and stops the named generations through the
// workers' pipe::GenerationCancels (its own unless worker.cancels is given); the reply path names
// `control_name` to the gateway in a `taken` event as each item is taken up. Generations are
// cancellable with worker.max_decodes > 0 (started through Decoder::start).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pipe/chat_token_processor.hpp"
#include "pipe/dead_letter.hpp"
#include "pipe/processor.hpp"
#include "pipe/record_sink.hpp"
#include "pipe/source.hpp"
#include "pipe/worker.hpp"
#include "reply/control_receiver.hpp"
#include "ports/queue_family.hpp"
#include "reply/queue_replies.hpp"

namespace overhead::pipe {

struct WorkerHostOptions {
  // Every worker's settings; worker.max_decodes is the host's bound, shared out among the threads.
  // With more than one thread, or with `number_threads`, each thread's
  // name is "<base>-<i>", base being worker.name without a trailing "-<digits>"; else worker.name.
  WorkerOptions worker;
  unsigned threads = 1;
  bool number_threads = true;
  // The processor is a ChatTokenProcessor over these tokenizers (strftime_now pinned to `date`),
  // unless the host is given a processor.
  std::vector<std::string> tokenizers;
  std::optional<std::string> date;
  reply::ReplyPath* replies = nullptr;
  std::shared_ptr<const ports::QueueFamily> family;  // answer on the reply queues items name (see above)
  std::shared_ptr<ports::Queue> control_queue;  // null: gateways cannot cancel this host's generations
  std::string control_name;              // its name, as a gateway opens it (a sibling of the input)
};

class WorkerHost {
 public:
  // Builds the processor (loading the tokenizers; see load_errors()) unless `processor` is given,
  // and the reply path. Throws std::invalid_argument for both kinds of replies at once.
  explicit WorkerHost(WorkerHostOptions options, const Processor* processor = nullptr);
  WorkerHost(const WorkerHost&) = delete;
  WorkerHost& operator=(const WorkerHost&) = delete;

  // Runs the workers (one thread each) over `source` until it is finished or stopped and every
  // record is settled; returns their stats added up. Rethrows the first worker's failure after
  // every thread ended. May be called again (the next case) with other parts.
  WorkerStats run(Source& source, RecordSink& sink, DeadLetterSink& dead_letters);

  [[nodiscard]] const Processor& processor() const { return *processor_; }
  // The tokenizers that failed to load (empty when the host was given its processor).
  [[nodiscard]] const std::map<std::string, std::string>& load_errors() const;
  // Cancels read from the control queue so far (0 without one).
  [[nodiscard]] std::uint64_t cancels_received() const { return control_ ? control_->cancels() : 0; }
  // The reply queues' counts, when the host answers on them; else null.
  [[nodiscard]] const reply::QueueReplies* queue_replies() const { return queue_replies_.get(); }
  [[nodiscard]] WorkerHostOptions& options() { return options_; }

 private:
  WorkerHostOptions options_;
  std::unique_ptr<ChatTokenProcessor> own_processor_;
  const Processor* processor_ = nullptr;
  std::unique_ptr<reply::QueueReplies> queue_replies_;
  std::unique_ptr<GenerationCancels> own_cancels_;   // outlives the control receiver that calls it
  std::unique_ptr<reply::ControlReceiver> control_;
};

// The sum of several workers' stats (elapsed: the longest; CPU: the sum).
[[nodiscard]] WorkerStats add_worker_stats(const std::vector<WorkerStats>& stats);

}  // namespace overhead::pipe
