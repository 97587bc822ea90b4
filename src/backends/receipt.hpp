// Receipt handles of the embedded queues: "<message seq>:<receive nonce>". A new receive of the
// same message draws a new nonce, so an old receipt no longer deletes or extends it (SQS rules).
#pragma once

#include <charconv>
#include <string>

namespace overhead::backends {

// Parses "<seq>:<nonce>"; false for anything else (a foreign or garbled receipt).
template <typename Int>
[[nodiscard]] bool parse_receipt(const std::string& receipt, Int& seq, Int& nonce) {
  const auto colon = receipt.find(':');
  if (colon == std::string::npos) return false;
  const char* b = receipt.data();
  const auto r1 = std::from_chars(b, b + colon, seq);
  const auto r2 = std::from_chars(b + colon + 1, b + receipt.size(), nonce);
  return r1.ec == std::errc() && r1.ptr == b + colon && r2.ec == std::errc() && r2.ptr == b + receipt.size();
}

}  // namespace overhead::backends
