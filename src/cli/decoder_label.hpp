// How a command names its decoder in its log lines (`serve`'s banner, a worker's first line): the
// decoder's own description with the password of the URL in it hidden. An engine's URL may carry
// user info (openai:http://user:PASSWORD@host/v1), and a log is no place for it.
#pragma once

#include <string>

#include "ports/decoder.hpp"

namespace overhead::cli {

// "none" for no decoder; else e.g. "openai:http://user:***@host/v1,model=m".
[[nodiscard]] std::string decoder_label(const pipe::Decoder* decoder);

}  // namespace overhead::cli
