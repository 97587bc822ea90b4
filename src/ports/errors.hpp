// Exceptions at the edges of the pipeline. Each names what failed (URL, source line, message id)
// so the CLI can print one clear line.
//
// Backend errors (QueueError, StoreError, ObjectStoreError) say whether a retry can help:
//   transient  throttling, a timeout, a lost connection, a busy database: the same call may
//              succeed later, so the publisher and the consumer retry it with backoff;
//   permanent  bad credentials, a validation error, a missing queue or table, a malformed
//              request: retrying cannot help, so nothing retries it.
// Adapters classify what their client library reports; the pipeline never inspects messages.
//
// ItemError carries a machine-readable kind that the dead-letter sink counts by.
#pragma once

#include <exception>
#include <stdexcept>
#include <string>
#include <utility>

namespace overhead::ports {

enum class Failure {
  transient,  // a retry may succeed
  permanent,  // a retry cannot succeed
};

class BackendError : public std::runtime_error {
 public:
  // Without a Failure an error is permanent: an adapter must say when a retry can help.
  explicit BackendError(const std::string& what, Failure failure = Failure::permanent)
      : std::runtime_error(what), failure_(failure) {}
  [[nodiscard]] Failure failure() const { return failure_; }
  [[nodiscard]] bool retryable() const { return failure_ == Failure::transient; }

 private:
  Failure failure_;
};

class QueueError : public BackendError {
 public:
  using BackendError::BackendError;
};

class StoreError : public BackendError {
 public:
  using BackendError::BackendError;
};

class ObjectStoreError : public BackendError {
 public:
  using BackendError::BackendError;
};

// The decoder stage (ports/decoder.hpp) failed: a server that refused the connection, timed out or
// answered 5xx/429 (transient), or answered another 4xx or no OpenAI stream (permanent).
class DecoderError : public BackendError {
 public:
  using BackendError::BackendError;
  // The engine said the request itself is at fault (an HTTP 4xx other than 401, 403, 407, 408 and
  // 429, e.g. vLLM's 400 for a prompt over the model's context length): permanent, and the
  // client's error rather than the engine's, so a gateway answers it 400 and an SDK does not
  // retry it. `refusal` is the engine's status and message, fit to show the client.
  static DecoderError engine_refused(const std::string& what, std::string refusal) {
    DecoderError e(what, Failure::permanent);
    e.refusal_ = std::move(refusal);
    return e;
  }
  // Empty unless engine_refused().
  [[nodiscard]] const std::string& refusal() const { return refusal_; }

 private:
  std::string refusal_;
};

// Whether a retry of the call that threw `e` can help. A BackendError says so itself;
// std::logic_error (invalid_argument, out_of_range: a caller's mistake) cannot be fixed by a
// retry; any other exception (a sink that is not a backend, e.g. in a test) is taken as
// transient, as every failure was before errors were typed: a retry costs little, a record lost
// to a one-off failure costs a replay.
[[nodiscard]] inline bool is_retryable(const std::exception& e) {
  if (const auto* b = dynamic_cast<const BackendError*>(&e)) return b->retryable();
  if (dynamic_cast<const std::logic_error*>(&e)) return false;
  return true;
}

// Why one entry of a batch call failed while the call as a whole went through (SQS's
// BatchResultErrorEntry, DynamoDB's UnprocessedItems). A retry resends only such entries.
struct EntryFailure {
  bool retryable = false;  // resending this entry alone may succeed (throttled); false: never (too large)
  std::string message;
};

// Why one work item could not become a record. The kind is one of DeadLetterKind's names (see
// dead_letter.hpp); it appears in summary.json and the dead-letter file. `where` ("line 12", a
// message's origin) prefixes what(); reason() is without it, for a dead letter, whose origin
// already says where.
class ItemError : public std::runtime_error {
 public:
  ItemError(std::string kind, const std::string& reason, const std::string& where = "")
      : std::runtime_error(where.empty() ? reason : where + ": " + reason), kind_(std::move(kind)), reason_(reason) {}
  [[nodiscard]] const std::string& kind() const { return kind_; }
  [[nodiscard]] const std::string& reason() const { return reason_; }

 private:
  std::string kind_;
  std::string reason_;
};

}  // namespace overhead::ports
