// One batch of log messages into the store, nothing held back: the batch step of the consumer,
// which `overhead lambda` runs on each SQS event. add() parses each message's body as it comes
// (a body that is no log message fails there, as bad_message); store() upserts the records in one
// store call with retries, then applies each stamp patch message with update_stamps, and names
// every message that was not stored, with why: store_failed (the call failed after its retries,
// or the store refused the record), stamps_failed (update_stamps failed after its retries) or
// stamps_deferred (a record the patch names is not stored yet: the message is to come back after
// its record). A message not named is stored.
//
// The store calls with their retries (upsert_with_retries, apply_stamps) are shared with
// pipe::Consumer's round, which goes beyond this step: it holds records for their stamp patches
// and folds the patches into them, merges a round's patches into one call, retries the records the
// store refused retryably, dead-letters what can never be stored, deletes by receipt and holds its
// round through a store outage. The step's caller settles the failures its own way (the Lambda
// answers them as batchItemFailures, and SQS redelivers them).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ports/record.hpp"
#include "ports/retry.hpp"
#include "ports/store.hpp"

namespace overhead::pipe {

// Why a message of the batch was not stored.
enum class StoreFailureKind { bad_message, store_failed, stamps_failed, stamps_deferred };
// The kind's stable name ("stamps_deferred"), as the Lambda logs it.
[[nodiscard]] const char* failure_kind_name(StoreFailureKind kind);

struct MessageFailure {
  std::string message_id;
  StoreFailureKind kind = StoreFailureKind::bad_message;
  std::string reason;  // never the body; store errors name the store by its redacted URL
};

class StoreStep {
 public:
  StoreStep(ports::Store& store, ports::RetryPolicy retry);

  // Parses one message's body: a record or stamp patches, stored by store(), or a bad_message
  // failure now.
  [[nodiscard]] std::optional<MessageFailure> add(const std::string& message_id, std::string_view body);
  // Stores what was added, records first, then the stamp patches (a patch applies only to a stored
  // record); the messages not stored, in that order.
  [[nodiscard]] std::vector<MessageFailure> store();

 private:
  ports::Store& store_;
  ports::RetryPolicy retry_;
  std::vector<ports::Record> records_;
  std::vector<std::string> record_ids_;  // the message of each record
  std::vector<std::pair<std::vector<ports::StampPatch>, std::string>> patches_;  // a patch message, its id
};

// upsert_batch with retries of the whole call: the call's outcome and, when it succeeded, the
// records the store refused (by index into `records`).
struct UpsertOutcome {
  ports::RetryOutcome call;
  std::vector<ports::UpsertFailure> refused;
};
[[nodiscard]] UpsertOutcome upsert_with_retries(ports::Store& store, std::span<const ports::Record> records,
                                                const ports::RetryPolicy& retry, const std::function<void()>& on_retry);

// update_stamps with retries: applied (every patch found its record), deferred (some record is not
// stored yet) or failed (the call failed after its retries: call.last_error, call.permanent).
struct StampsOutcome {
  enum class Result { applied, deferred, failed };
  ports::RetryOutcome call;
  std::size_t found = 0;  // patches that found their record
  std::size_t asked = 0;
  [[nodiscard]] Result result() const {
    return !call.ok ? Result::failed : found < asked ? Result::deferred : Result::applied;
  }
};
[[nodiscard]] StampsOutcome apply_stamps(ports::Store& store, std::span<const ports::StampPatch> patches,
                                         const ports::RetryPolicy& retry, const std::function<void()>& on_retry);

}  // namespace overhead::pipe
