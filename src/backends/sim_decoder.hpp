// `--decoder sim:prefill=TOK_S,decode=TOK_S[,ttft_ms=MS]`: the decoder stage as a model. It waits
// (sleeps, burning no CPU) the time a GPU would take: the first token after
// ttft_ms + prompt_tokens / prefill seconds, the last one output_tokens / decode seconds after
// that, where output_tokens is the wanted length (DecodeRequest::max_tokens).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "ports/decoder.hpp"

namespace overhead::backends {

struct SimDecoderParams {
  double prefill_tok_s = 0;  // prompt tokens per second, > 0
  double decode_tok_s = 0;   // output tokens per second, > 0
  double ttft_ms = 0;        // fixed time before the first token, >= 0
};

class SimDecoder final : public ports::Decoder {
 public:
  explicit SimDecoder(SimDecoderParams p) : p_(p) {}
  [[nodiscard]] std::string describe() const override;
  [[nodiscard]] ports::DecodeResult decode(const ports::DecodeRequest& request) const override;
  [[nodiscard]] const SimDecoderParams& params() const { return p_; }

 private:
  SimDecoderParams p_;
};

// The text after "sim:". Throws std::invalid_argument naming the bad part.
[[nodiscard]] SimDecoderParams parse_sim_decoder(std::string_view params);

}  // namespace overhead::backends
