// Shared by the incremental detokenizer tests: stream ids one by one through an
// IncrementalDetokenizer and compare with Tokenizer::decode of them all, checking every delta.
#pragma once

#include <span>
#include <string>

#include "tok/incremental_detokenizer.hpp"
#include "tok/tokenizer.hpp"
#include "util/utf8.hpp"

namespace overhead::tok::incremental_test {

// "" when the deltas of `ids` (and finish()) concatenate to decode(ids, skip) and each is valid
// UTF-8; otherwise what differs.
inline std::string check_stream(const Tokenizer& tok, std::span<const TokenId> ids, bool skip) {
  IncrementalDetokenizer stream(tok, DetokenizeOptions{.skip_special_tokens = skip});
  std::string all, delta;
  for (std::size_t k = 0; k <= ids.size(); ++k) {
    delta.clear();
    if (k < ids.size()) {
      stream.push(ids[k], delta);
    } else {
      stream.finish(delta);
    }
    if (!util::utf8::is_valid(delta)) return "delta " + std::to_string(k) + " is not valid UTF-8";
    all += delta;
  }
  const std::string want = tok.decode(ids, skip);
  if (all == want) return "";
  std::size_t at = 0;
  while (at < all.size() && at < want.size() && all[at] == want[at]) ++at;
  return "streamed " + std::to_string(all.size()) + " bytes, decode gives " + std::to_string(want.size()) +
         "; first difference at byte " + std::to_string(at) + " (skip_special_tokens=" + (skip ? "true" : "false") +
         ", " + std::to_string(ids.size()) + " ids)";
}

}  // namespace overhead::tok::incremental_test
