#include "pipe/worker_host.hpp"

#include <algorithm>
#include <cctype>
#include <exception>
#include <stdexcept>
#include <thread>

namespace overhead::pipe {
namespace {

// "case3-worker-0" -> "case3-worker"; a name without a numbered tail is its own base.
std::string name_base(const std::string& name) {
  const std::size_t dash = name.rfind('-');
  if (dash == std::string::npos || dash + 1 == name.size()) return name;
  const bool digits = std::all_of(name.begin() + static_cast<std::ptrdiff_t>(dash) + 1, name.end(),
                                  [](unsigned char c) { return std::isdigit(c) != 0; });
  return digits ? name.substr(0, dash) : name;
}

const std::map<std::string, std::string> kNoErrors;

}  // namespace

WorkerHost::WorkerHost(WorkerHostOptions options, const Processor* processor) : options_(std::move(options)) {
  const bool over_queue = options_.family != nullptr;
  if (over_queue && options_.replies) throw std::invalid_argument("a worker host answers either in process or on reply queues, not both");
  if (processor) {
    processor_ = processor;
  } else {
    own_processor_ = std::make_unique<ChatTokenProcessor>(options_.tokenizers, options_.date);
    processor_ = own_processor_.get();
  }
  if (options_.control_queue && !over_queue)
    throw std::invalid_argument("a control queue is read by a worker host that answers on reply queues");
  if (over_queue) {
    const std::string control = options_.control_queue ? options_.control_name : std::string();
    queue_replies_ = std::make_unique<reply::QueueReplies>(options_.family, 65536,
                                                           reply::ReplyBatching{}, control);
    options_.worker.replies = queue_replies_.get();
  } else {
    options_.worker.replies = options_.replies;
  }
  if (options_.control_queue) {
    if (!options_.worker.cancels) {
      own_cancels_ = std::make_unique<GenerationCancels>();
      options_.worker.cancels = own_cancels_.get();
    }
    control_ = std::make_unique<reply::ControlReceiver>(options_.control_queue,
                                                        [cancels = options_.worker.cancels](const std::string& id) { cancels->cancel(id); });
  }
}

const std::map<std::string, std::string>& WorkerHost::load_errors() const {
  return own_processor_ ? own_processor_->load_errors() : kNoErrors;
}

WorkerStats WorkerHost::run(Source& source, RecordSink& sink, DeadLetterSink& dead_letters) {
  const unsigned n = std::max(1u, options_.threads);
  std::vector<WorkerStats> stats(n);
  std::vector<std::exception_ptr> errors(n);
  std::vector<std::thread> threads;
  const bool numbered = n > 1 || options_.number_threads;
  // --max-decodes bounds the generations of the whole host: shared out among its threads.
  WorkerOptions shared = options_.worker;
  if (shared.max_decodes > 0) shared.max_decodes = (shared.max_decodes + n - 1) / n;
  const std::string base = name_base(options_.worker.name);
  for (unsigned i = 0; i < n; ++i)
    threads.emplace_back([&, i] {
      try {
        WorkerOptions o = shared;
        if (numbered) o.name = base + "-" + std::to_string(i);
        Worker worker(source, *processor_, sink, dead_letters, o);
        stats[i] = worker.run();
      } catch (...) {
        errors[i] = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  // What the workers answered on reply queues leaves before the host reports back.
  if (queue_replies_) queue_replies_->flush();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
  return add_worker_stats(stats);
}

WorkerStats add_worker_stats(const std::vector<WorkerStats>& stats) {
  WorkerStats total;
  for (const auto& s : stats) {
    total.items += s.items;
    total.ok += s.ok;
    total.bad_input += s.bad_input;
    total.publish_failed += s.publish_failed;
    total.batches += s.batches;
    total.delete_failures += s.delete_failures;
    total.elapsed_ns = std::max(total.elapsed_ns, s.elapsed_ns);
    total.cpu_ns += s.cpu_ns;
    total.publisher.published += s.publisher.published;
    total.publisher.retries += s.publisher.retries;
    total.publisher.failed += s.publisher.failed;
    total.publisher.stamp_failures += s.publisher.stamp_failures;
    total.publisher.max_outstanding = std::max(total.publisher.max_outstanding, s.publisher.max_outstanding);
  }
  return total;
}

}  // namespace overhead::pipe
