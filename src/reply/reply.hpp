// The reply: what a worker answers to the gateway that queued a request. A request ends in exactly
// one Reply: done (the record as published, the answer's text, the engine's finish reason) or
// failed (a dead-letter kind and its reason, whoever refused: worker, decoder, publisher). Before
// a done reply, a streamed request also gets its text as it is generated, in Deltas.
//
// The measurement Record is carried unchanged (it also goes to the store, through the log queue,
// exactly as before), its price included (cost_usd and its parts, usage().cost_usd); the reply adds
// what a client needs and the store does not keep by default.
#pragma once

#include <cstdint>
#include <string>

#include "ports/record.hpp"

namespace overhead::reply {

enum class Status { done, failed };

struct Usage {
  std::int64_t prompt_tokens = 0;      // our count of the rendered prompt
  std::int64_t completion_tokens = 0;  // the decoder's output tokens (0 without a decoder)
  // What the answer cost, E + D (Record::cost_usd, the worker's --price-* flags): what a budget
  // is spent from. 0 from a worker given no price, and from one older than the price fields.
  double cost_usd = 0;
};

struct Reply {
  std::string id;
  Status status = Status::failed;
  // The generation that answered (see Delta::attempt); empty from a worker that does not stream.
  std::string attempt;
  ports::Record record;          // done: as published (publish_acked and input_deleted go to the store later)
  std::string text;             // done: the answer's text; over a queue left out when it was streamed (text_bytes)
  std::int64_t text_bytes = 0;  // done: the answer's length in bytes, streamed or not
  std::string finish_reason;    // done: as the engine said ("stop", "length", ...); "" when nothing decoded
  // done: the kind of the answering worker's decoder ("openai", "sim", "none"), which names the
  // answer's system_fingerprint (a gateway that only routes has no decoder of its own); "" from a
  // worker that does not say.
  std::string decoder;
  std::string error_kind;       // failed: a pipe::DeadLetterKind name (template_error, ...) or "timeout"
  std::string error_reason;

  [[nodiscard]] bool ok() const { return status == Status::done; }
  [[nodiscard]] Usage usage() const { return {record.token_count, record.output_tokens, record.cost_usd}; }

  static Reply answered(ports::Record record, std::string text, std::string finish_reason, std::string attempt = {});
  static Reply refused(std::string id, std::string kind, std::string reason);
};

// A piece of a streamed answer: whole UTF-8 characters, at byte `offset` of the answer. Offsets
// make delivery exactly once and in order whatever the transport does: a piece already received
// is dropped, a gap is seen. `attempt` names one generation of the item: when a worker dies
// mid-stream the item comes back and is generated again under another attempt, whose text need
// not continue the first; a reader that already passed text on can tell and say so.
struct Delta {
  std::string id;
  std::string attempt;
  std::int64_t offset = 0;
  std::string text;
};

// A worker took the request up (before any text): `control` names the worker's control queue
// (backends/queue_siblings.hpp), where the gateway sends a cancel when its client goes away
// (reply/remote_cancels.hpp). Only workers that can cancel their generations send it.
struct Taken {
  std::string id;
  std::string control;
};

}  // namespace overhead::reply
