// Where a worker hands its answers: the port between the worker (pipe::Worker, which produces
// replies) and whatever carries them to the gateway: in one process the gateway's box itself
// (serve/reply_box.hpp), over a shared queue QueueReplies (queue_replies.hpp), which the gateway's
// ReplyReceiver (reply_receiver.hpp) reads back into its box.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "reply/reply.hpp"

namespace overhead::reply {

class ReplyPath {
 public:
  virtual ~ReplyPath() = default;
  // Told of every item before it is processed, so a path that answers over a queue can remember
  // where its reply goes (the item's reply_to); the in-process box needs nothing. May refuse the
  // item by throwing ports::ItemError (a reply queue this worker must not write to).
  virtual void note(const std::string& /*id*/, const std::optional<std::string>& /*reply_to*/) {}
  // A piece of a streamed answer (Delta). Thread-safe; called in order for one attempt; must not
  // block (it runs on the decoder's thread). The views are valid only during the call.
  virtual void text(std::string_view /*id*/, std::string_view /*attempt*/, std::int64_t /*offset*/, std::string_view /*text*/) {}
  // The one final answer of a request. Thread-safe; an answer for an unknown or already answered
  // id is dropped (a replayed item after a redelivery answers twice).
  virtual void deliver(Reply reply) = 0;
};

}  // namespace overhead::reply
