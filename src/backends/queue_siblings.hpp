// Reply queues as siblings of an input queue: the queue of the same backend, on the same broker
// and with the same credentials and parameters, under another name. A gateway over a shared queue
// names its reply queue in every work item (the RPC pattern over Redis or SQS); any worker that
// can read the input queue can then answer on the sibling without being told a second URL, and
// the item body never carries a host or a secret, only a name.
//
// The names per scheme: mem:NAME, sqlite-queue:PATH?name=NAME (default "queue"),
// redis://.../STREAM, sqs://QUEUE_NAME. A reply queue of input queue IN is named
// "IN-reply-SUFFIX"; a worker answers only on names of that shape, so an item cannot make it write
// into an arbitrary queue (its own input, say).
//
// Control queues go the other way: a worker that can stop its generations (cancellation) reads
// "IN-ctl-SUFFIX" (SUFFIX: its host and pid) and names it when it takes up a gateway's item; the
// gateway sends a cancel there, and only to names of that shape (reply/remote_cancels.hpp).
//
// The batch lane, "IN-batch-lane", holds the Batch API's items (serve/batch_runner.hpp): every
// worker of IN reads it beside IN, interactive items first (pipe/lane_source.hpp).
//
// The rest of the code reaches these rules through the queue-family port (ports/queue_family.hpp,
// backends::open_queue_family): each SiblingRole is one row of the rule table in
// queue_siblings.cpp, so a new kind of sibling (a batch lane, say) is one role and one row.
#pragma once

#include <string>
#include <string_view>

#include "ports/queue_family.hpp"

namespace overhead::backends {

// The queue's name within its backend. Throws std::invalid_argument (redacted URL) for a URL that
// names no queue (e.g. "mem:" alone) or an unknown scheme.
[[nodiscard]] std::string queue_name(const std::string& url);
// `url` with the queue name replaced by `name`; everything else (credentials included) as given.
// The result is for opening only: show it with ports::redact_url.
[[nodiscard]] std::string sibling_queue_url(const std::string& url, std::string_view name);
// The `role` sibling's name: "<input name>-<infix>-<suffix>" (the infix per role in
// queue_siblings.cpp), cut and checked as reply_queue_name below.
[[nodiscard]] std::string sibling_queue_name(const std::string& input_url, ports::SiblingRole role, std::string_view suffix);
// Whether `name` follows the `role` rule of `input_url`'s queue. Never throws.
[[nodiscard]] bool is_sibling_queue_of(const std::string& input_url, ports::SiblingRole role, std::string_view name);
// The reply queue name for a gateway: "<input name>-reply-<suffix>", the suffix cut to what SQS
// allows (80 characters in all; only A-Z a-z 0-9 _ -). Throws std::invalid_argument when the input
// name itself is not such a plain name or leaves no room for a suffix.
[[nodiscard]] std::string reply_queue_name(const std::string& input_url, std::string_view suffix);
// Whether `name` is a reply queue name of `input_url`'s queue (the check every worker makes).
// Never throws: an input queue without a name has no reply queues.
[[nodiscard]] bool is_reply_queue_of(const std::string& input_url, std::string_view name);
// The control queue name of a worker: "<input name>-ctl-<suffix>", cut and checked as above.
[[nodiscard]] std::string control_queue_name(const std::string& input_url, std::string_view suffix);
// Whether `name` is a control queue name of `input_url`'s queue (the check a gateway makes before
// it sends a cancel to the queue a worker named). Never throws.
[[nodiscard]] bool is_control_queue_of(const std::string& input_url, std::string_view name);

}  // namespace overhead::backends
