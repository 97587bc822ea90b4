// The one nesting limit for JSON a client controls, and its check on the raw text. Every JSON
// reader of client data (the gateway's bodies, the worker's items) uses this limit, so what one
// accepts the other accepts too, and nothing recursive ever sees a deeper document: the check is
// a linear scan of the bytes, done before any parse or copy.
#pragma once

#include <cstddef>
#include <string_view>

namespace overhead::util {

// Arrays and objects nested more than this deep are refused. Real chat requests nest about 8
// deep (tool schemas a few more); the chat template engine refuses values nested more than 256
// levels below `messages` (chat/json_value.hpp), so any body within this limit also renders.
inline constexpr std::size_t kMaxJsonDepth = 256;

// The deepest nesting of arrays and objects in `text` (0 for a scalar), counting brackets outside
// strings; the scan stops as soon as it passes `stop_above` and returns stop_above + 1. Meant for
// text that is about to be parsed: on malformed JSON the figure may be off, and the parse fails.
[[nodiscard]] std::size_t json_nesting_depth(std::string_view text, std::size_t stop_above = kMaxJsonDepth);

// True when `text` nests deeper than `limit`.
[[nodiscard]] inline bool json_too_deep(std::string_view text, std::size_t limit = kMaxJsonDepth) {
  return json_nesting_depth(text, limit) > limit;
}

}  // namespace overhead::util
