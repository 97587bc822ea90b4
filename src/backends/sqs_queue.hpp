// The Amazon SQS queue (`sqs://QUEUE_NAME?region=R&endpoint=URL&visibility_ms=&wait_s=&max_receives=
// &max_message_bytes=&timeout_ms=&create=0|1`): the Queue contract over the SQS JSON 1.0 protocol,
// signed with SigV4 (aws/sigv4.hpp) and sent on the pooled HTTP client (aws/http_client.hpp).
//   send      SendMessageBatch; an entry SQS refuses as throttled/internal is reported retryable,
//             one refused as invalid is permanent; bodies over max_message_bytes never leave;
//   receive   ReceiveMessage with MaxNumberOfMessages, WaitTimeSeconds (whole seconds, rounded
//             up, at most 20) and VisibilityTimeout (whole seconds, rounded up), asking for
//             ApproximateReceiveCount, which becomes Message::receive_count;
//   delete    DeleteMessageBatch; extend: ChangeMessageVisibilityBatch;
//   DLQ       SQS's own redrive policy: the queue's RedrivePolicy names the dead-letter queue.
//             With create=1 the queue (and, when max_receives > 0, QUEUE_NAME-dlq with a redrive
//             policy of maxReceiveCount = max_receives) is created when missing.
// Errors: throttling, 5xx and a lost connection are retried with capped backoff and jitter, then
// thrown transient; 4xx answers (bad signature, access denied, unknown queue) are permanent with a
// hint. No error text holds a secret: only the SQS error code and message and the URL.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "ports/backend_url.hpp"
#include "ports/queue.hpp"

namespace overhead::backends {

// Opens the queue of a parsed sqs:// URL (the open_queue arm). Throws std::invalid_argument for
// a bad parameter and ports::QueueError when the queue cannot be found or created.
std::shared_ptr<ports::Queue> open_sqs_queue(const ports::BackendUrl& url, const ports::ClockMs& clock);

}  // namespace overhead::backends
