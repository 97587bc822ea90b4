// A broker's queue family: an input queue and its siblings, the queues of the same backend, on
// the same broker and with the same credentials, under other names. A gateway names its reply
// queue in every work item, a worker names its control queue to the gateway, and either side
// opens the other's queue from the name alone (the RPC pattern over Redis, SQS or a SQLite queue
// file); the work item never carries a host or a secret.
//
// Each kind of sibling is a name rule, "<input name>-<infix>-<suffix>" (SiblingRole): a side
// opens only names of the rule it expects, so an item cannot make a worker write into an
// arbitrary queue (its own input, say). A new kind of sibling is one more role and one more rule
// in the implementation, not a new opener. Implemented once over the queue-scheme registry
// (backends::open_queue_family, backends/queue_family.cpp).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "ports/queue.hpp"

namespace overhead::ports {

// The kinds of sibling queue, each with its own name rule.
enum class SiblingRole {
  reply,    // "<input>-reply-<suffix>": a gateway's, where workers answer its items
  control,  // "<input>-ctl-<suffix>": a worker's, where gateways send cancels
  batch,    // "<input>-batch-<suffix>": the batch lane (kBatchLane), where gateways put Batch API items
};

// The batch lane's suffix: one lane per input queue, shared by every gateway and worker on it.
inline constexpr std::string_view kBatchLane = "lane";

class QueueFamily {
 public:
  virtual ~QueueFamily() = default;

  // Whether other processes can reach the family (a broker, a shared file); false for mem:, whose
  // queues live in this process only.
  [[nodiscard]] virtual bool shared() const = 0;
  // The input queue's own name (for messages). Throws std::invalid_argument when it has none.
  [[nodiscard]] virtual std::string name() const = 0;
  // The sibling named `name`, opened (made when the backend makes queues on first use).
  [[nodiscard]] virtual std::shared_ptr<Queue> open(const std::string& name) const = 0;
  // The `role` sibling's name for `suffix` ("<input>-reply-<suffix>"), the suffix cut to what
  // every backend allows (80 characters in all; only A-Z a-z 0-9 _ -). Throws
  // std::invalid_argument when the input name itself is not such a plain name or leaves no room.
  [[nodiscard]] virtual std::string sibling_name(SiblingRole role, std::string_view suffix) const = 0;
  // Whether `name` follows the `role` rule of this family. Never throws: an input queue without a
  // name (mem: alone) has no siblings.
  [[nodiscard]] virtual bool is_sibling(SiblingRole role, std::string_view name) const = 0;

  // The `role` sibling of this process: the suffix is "<host>-<pid>".
  [[nodiscard]] std::string own_sibling_name(SiblingRole role) const { return sibling_name(role, process_suffix()); }
  // The batch lane's name, "<input>-batch-lane".
  [[nodiscard]] std::string batch_lane_name() const { return sibling_name(SiblingRole::batch, kBatchLane); }
  // "<host>-<pid>": what makes a process's sibling names its own.
  [[nodiscard]] static std::string process_suffix();
};

}  // namespace overhead::ports
