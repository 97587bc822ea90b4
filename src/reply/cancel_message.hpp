// The wire format of a worker's control queue (backends/queue_siblings.hpp: "<input>-ctl-<suffix>"):
// one message body holds one or more cancels, one JSON object per line, so that a gateway sends
// the cancels that wait for one worker in one broker call:
//   {"cancel":{"id":"chatcmpl-..."}}
// Written by hand, read with simdjson (no DOM kept).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace overhead::reply {

// Appends one cancel as one line (a '\n' first when `body` is not empty).
void append_cancel(std::string& body, std::string_view id);
// Calls `on_cancel` with the id of every cancel in `body`, in order. Returns one reason per line
// that could not be read (naming `origin` and the line); the other lines are still delivered.
std::vector<std::string> decode_cancels(std::string_view body, const std::string& origin,
                                        const std::function<void(std::string&& id)>& on_cancel);

}  // namespace overhead::reply
