#include "ports/decoder.hpp"

#include <exception>
#include <utility>

namespace overhead::pipe {

namespace {

// The ticket of a generation that ended before start() returned: nothing left to cancel.
class FinishedTicket final : public DecodeTicket {
 public:
  void cancel() override {}
};

}  // namespace

std::shared_ptr<DecodeTicket> Decoder::start(const DecodeRequest& request, std::shared_ptr<DecodeCallbacks> callbacks) const {
  DecodeResult result;
  try {
    result = decode(request);
  } catch (const DecoderError& e) {
    callbacks->on_error(e);
    return std::make_shared<FinishedTicket>();
  } catch (const std::exception& e) {
    // A decoder's own bug or a bad_alloc: still one clear error for this generation, not a
    // thrown exception on a path that promised callbacks.
    callbacks->on_error(DecoderError(describe() + ": " + e.what(), is_retryable(e) ? Failure::transient : Failure::permanent));
    return std::make_shared<FinishedTicket>();
  }
  if (request.stream_text && !result.text.empty()) callbacks->on_text(result.text, result.output_tokens);
  callbacks->on_done(std::move(result));
  return std::make_shared<FinishedTicket>();
}

}  // namespace overhead::pipe
