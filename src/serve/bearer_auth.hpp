// Bearer-token auth for the gateway: the token comes from a file or an environment variable and
// is compared in constant time; it is never printed.
#pragma once

#include <string>
#include <string_view>

namespace overhead::serve {

// Reads the token from `file` (first line, trailing whitespace dropped) or, when `file` is empty,
// from environment variable `env_var` (empty when unset). Throws std::runtime_error naming the
// file (never its contents) when it cannot be read or is empty.
[[nodiscard]] std::string load_token(const std::string& file, const char* env_var);

// True when `authorization` is "Bearer <token>", the scheme in any case (RFC 7235); the comparison
// time does not depend on where the first differing byte is.
[[nodiscard]] bool bearer_matches(std::string_view authorization, std::string_view token);

}  // namespace overhead::serve
