// Stop strings matched on a text that arrives in pieces (the worker's own detokenized answer,
// when the engine streams token ids): push() passes on what is final and holds back the longest
// tail that could still become a stop string (a proper prefix of one), as serving engines' fronts
// do; once a stop string appears, the text before it is passed on and everything from it on is
// dropped (OpenAI's stop: the stop string is not part of the answer). The stop that counts is the
// one that ends first in the text (of two ending at the same byte, the longer), as when the text
// arrives byte by byte, so the concatenation of what push() and finish() pass on is the same
// however the text was split.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace overhead::pipe {

class StopStrings {
 public:
  explicit StopStrings(std::span<const std::string> stops);
  // Appends to `out` the text that is final now; true once a stop string was found (later pieces
  // pass nothing on).
  bool push(std::string_view piece, std::string& out);
  // The stream ended without a stop string: appends the held tail.
  void finish(std::string& out);
  [[nodiscard]] bool stopped() const { return stopped_; }

 private:
  std::vector<std::string> stops_;  // the non-empty ones
  std::string held_;                // the tail not yet passed on
  bool stopped_ = false;
};

}  // namespace overhead::pipe
