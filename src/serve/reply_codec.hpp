// A worker's reply to a gateway on a reply queue (the RPC pattern over a shared broker): a record
// that was published goes as the log queue's record body, unchanged, so the gateway reads it back
// with the same codec and every stamp survives; a request the worker refused goes as
// {"failed":{"id":..,"kind":..,"reason":..}}.
#pragma once

#include <string>
#include <string_view>

#include "serve/reply_box.hpp"

namespace overhead::serve {

[[nodiscard]] std::string encode_reply(const Reply& reply);
// Throws std::runtime_error naming `origin` when the body is neither shape.
[[nodiscard]] Reply decode_reply(std::string_view body, const std::string& origin);

}  // namespace overhead::serve
