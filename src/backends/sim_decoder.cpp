#include "backends/sim_decoder.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <stdexcept>

#include "ports/clock.hpp"

namespace overhead::backends {

namespace {

// Sleeps until `deadline` (CLOCK_MONOTONIC ns, the stamps' clock), through signals.
void sleep_until_ns(std::int64_t deadline) {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(deadline / 1'000'000'000);
  ts.tv_nsec = static_cast<long>(deadline % 1'000'000'000);
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

std::int64_t seconds_to_ns(double s) { return static_cast<std::int64_t>(std::llround(s * 1e9)); }

std::string format_number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

SimDecoderParams parse_sim_decoder(std::string_view text) {
  const std::string form = "expected sim:prefill=TOK_S,decode=TOK_S[,ttft_ms=MS]";
  SimDecoderParams p;
  bool have_prefill = false, have_decode = false, have_ttft = false;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = std::min(text.find(',', pos), text.size());
    const std::string_view part = text.substr(pos, comma - pos);
    pos = comma + 1;
    const std::size_t eq = part.find('=');
    if (part.empty() || eq == std::string_view::npos)
      throw std::invalid_argument("sim: '" + std::string(part) + "' is not KEY=VALUE (" + form + ")");
    const std::string_view key = part.substr(0, eq), value = part.substr(eq + 1);
    double v = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (value.empty() || ec != std::errc() || end != value.data() + value.size() || !std::isfinite(v))
      throw std::invalid_argument("sim: '" + std::string(part) + "': '" + std::string(value) + "' is not a number");
    bool* seen = nullptr;
    if (key == "prefill") {
      seen = &have_prefill;
      p.prefill_tok_s = v;
    } else if (key == "decode") {
      seen = &have_decode;
      p.decode_tok_s = v;
    } else if (key == "ttft_ms") {
      seen = &have_ttft;
      p.ttft_ms = v;
    } else {
      throw std::invalid_argument("sim: unknown parameter '" + std::string(key) + "' (" + form + ")");
    }
    if (*seen) throw std::invalid_argument("sim: '" + std::string(key) + "' given twice");
    *seen = true;
    if (key == "ttft_ms" ? v < 0 : v <= 0)
      throw std::invalid_argument("sim: '" + std::string(part) + "': " + std::string(key) +
                                  (key == "ttft_ms" ? " must be >= 0" : " must be > 0 tokens per second"));
  }
  if (!have_prefill) throw std::invalid_argument("sim: 'prefill' is missing (" + form + ")");
  if (!have_decode) throw std::invalid_argument("sim: 'decode' is missing (" + form + ")");
  return p;
}

std::string SimDecoder::describe() const {
  return "sim:prefill=" + format_number(p_.prefill_tok_s) + ",decode=" + format_number(p_.decode_tok_s) +
         ",ttft_ms=" + format_number(p_.ttft_ms);
}

ports::DecodeResult SimDecoder::decode(const ports::DecodeRequest& request) const {
  ports::DecodeResult r;
  r.decode_start = ports::monotonic_ns();
  const std::int64_t out = std::max<std::int64_t>(request.max_tokens, 0);
  const std::int64_t first =
      r.decode_start + seconds_to_ns(p_.ttft_ms / 1e3 + double(request.prompt_tokens) / p_.prefill_tok_s);
  sleep_until_ns(first);
  r.output_tokens = out;
  r.finish_reason = "length";  // it generates exactly the wanted length
  if (out == 0) {  // nothing to generate: the prompt was read, no token came
    r.decode_end = ports::monotonic_ns();
    return r;
  }
  r.first_token = ports::monotonic_ns();
  sleep_until_ns(r.first_token + seconds_to_ns(double(out) / p_.decode_tok_s));
  r.decode_end = ports::monotonic_ns();
  return r;
}

}  // namespace overhead::backends
