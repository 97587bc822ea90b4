#include "ports/decoder.hpp"

#include <exception>
#include <future>
#include <utility>

namespace overhead::ports {

namespace {

// The ticket of a generation that ended before start() returned: nothing left to cancel.
class FinishedTicket final : public DecodeTicket {
 public:
  void cancel() override {}
};

// The default decode(): the callbacks fill a promise the caller waits on.
class WaitedCallbacks final : public DecodeCallbacks {
 public:
  std::promise<DecodeResult> promise;
  void on_done(DecodeResult result) override { promise.set_value(std::move(result)); }
  void on_error(const DecoderError& error) override { promise.set_exception(std::make_exception_ptr(error)); }
};

// The decoder whose default start() is running on this thread: its decode() must not be the
// default too (a decoder that overrides neither would recurse until the stack ends).
thread_local const Decoder* running_default_start = nullptr;

class DefaultStartScope {
 public:
  explicit DefaultStartScope(const Decoder* d) : outer_(running_default_start) { running_default_start = d; }
  ~DefaultStartScope() { running_default_start = outer_; }
  DefaultStartScope(const DefaultStartScope&) = delete;
  DefaultStartScope& operator=(const DefaultStartScope&) = delete;

 private:
  const Decoder* outer_;
};

}  // namespace

DecodeResult Decoder::decode(const DecodeRequest& request) const {
  if (running_default_start == this)
    throw DecoderError(describe() + ": the decoder implements neither decode() nor start()", Failure::permanent);
  auto waited = std::make_shared<WaitedCallbacks>();
  auto result = waited->promise.get_future();
  DecodeRequest plain = request;
  plain.stream_text = false;
  (void)start(plain, waited);
  return result.get();  // rethrows the DecoderError
}

std::shared_ptr<DecodeTicket> Decoder::start(const DecodeRequest& request, std::shared_ptr<DecodeCallbacks> callbacks) const {
  DecodeResult result;
  try {
    const DefaultStartScope scope(this);
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

}  // namespace overhead::ports
