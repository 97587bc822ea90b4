// The wire format of a reply queue. One message body holds one or more events, one JSON object
// per line, so that a worker can batch the deltas of many streams (and their final replies) into
// one broker call:
//   {"delta":{"id":..,"attempt":..,"offset":N,"text":..}}
//   {"done":{"id":..,"attempt":..,"finish_reason":..,"text_bytes":N[,"text":..]},"record":{...}}
//   {"failed":{"id":..,"kind":..,"reason":..}}
//   {"taken":{"id":..,"control":..}}      (a worker that can cancel took the request up)
// The record is the log queue's record body (ports/record_codec.hpp), so every stamp survives.
// A done reply leaves its text out when it was streamed: the deltas carried it, and text_bytes
// lets the reader check it has all of it. A body that is a bare record (a worker before this
// format) reads as a done reply without text. Written by hand (no DOM, deltas are per token),
// read with simdjson; ill-formed UTF-8 in a reason or a text is replaced, never thrown on.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "reply/reply.hpp"

namespace overhead::reply {

using ReplyEvent = std::variant<Delta, Reply, Taken>;

// Append one event as one line (a '\n' first when `body` is not empty).
void append_delta(std::string& body, std::string_view id, std::string_view attempt, std::int64_t offset, std::string_view text);
// Extends the delta that ends `body` by `text` (the caller knows that the last line is a delta of
// the same id and attempt that ends where `text` begins): contiguous pieces of one stream in one
// body cost one event, not one per token.
void extend_last_delta(std::string& body, std::string_view text);
void append_taken(std::string& body, std::string_view id, std::string_view control);
// `with_text`: carry reply.text (a request that was not streamed); else only text_bytes.
void append_reply(std::string& body, const Reply& reply, bool with_text = true);

// Calls `on_event` for every event of `body`, in order. Returns one reason per line that could not
// be read (naming `origin` and the line); the other lines are still delivered.
std::vector<std::string> decode_events(std::string_view body, const std::string& origin,
                                       const std::function<void(ReplyEvent&&)>& on_event);

}  // namespace overhead::reply
