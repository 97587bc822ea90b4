#include "cli/decoder_label.hpp"

#include "ports/backend_url.hpp"

namespace overhead::cli {

std::string decoder_label(const pipe::Decoder* decoder) {
  if (decoder == nullptr) return "none";
  const std::string d = decoder->describe();
  // "scheme:REST": REST is what may be a URL ("openai:" is not one itself, so redact_url would
  // not look past it).
  const auto colon = d.find(':');
  if (colon == std::string::npos) return d;
  return d.substr(0, colon + 1) + pipe::redact_url(std::string_view(d).substr(colon + 1));
}

}  // namespace overhead::cli
