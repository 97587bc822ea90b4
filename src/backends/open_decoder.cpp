// open_decoder: the `--decoder` forms. A new decoder adds its arm to kDecoderForms.
#include <stdexcept>

#include "backends/open.hpp"
#include "backends/openai_decoder.hpp"
#include "backends/sim_decoder.hpp"
#include "ports/backend_url.hpp"

namespace overhead::backends {

namespace {

struct DecoderForm {
  std::string_view prefix;  // "sim:"
  std::string_view usage;   // shown when the form is unknown
  std::shared_ptr<const ports::Decoder> (*open)(std::string_view rest);
  void (*check)(std::string_view rest);  // parses the form only: nothing is started
};

constexpr DecoderForm kDecoderForms[] = {
    {"sim:", "sim:prefill=TOK_S,decode=TOK_S[,ttft_ms=MS]",
     [](std::string_view rest) -> std::shared_ptr<const ports::Decoder> {
       return std::make_shared<SimDecoder>(parse_sim_decoder(rest));
     },
     [](std::string_view rest) { (void)parse_sim_decoder(rest); }},
    {"openai:", "openai:URL[,model=NAME][,timeout_ms=MS][,usage=required][,api_key_env=NAME]",
     [](std::string_view rest) -> std::shared_ptr<const ports::Decoder> {
       return std::make_shared<OpenAiDecoder>(parse_openai_decoder(rest));
     },
     [](std::string_view rest) { (void)parse_openai_decoder(rest); }},
};

// The form `spec` is written in; null for "none". Throws std::invalid_argument naming the known forms.
const DecoderForm* form_of(std::string_view spec) {
  if (spec == "none") return nullptr;
  std::string known = "none";
  for (const auto& f : kDecoderForms) {
    if (spec.starts_with(f.prefix)) return &f;
    known += ", " + std::string(f.usage);
  }
  throw std::invalid_argument("unknown decoder '" + ports::redact_url(spec) + "' (known: " + known + ")");
}

}  // namespace

std::shared_ptr<const ports::Decoder> open_decoder(std::string_view spec) {
  const DecoderForm* f = form_of(spec);
  return f ? f->open(spec.substr(f->prefix.size())) : nullptr;
}

void check_decoder(std::string_view spec) {
  if (const DecoderForm* f = form_of(spec)) f->check(spec.substr(f->prefix.size()));
}

}  // namespace overhead::backends
