// The gateway's single bearer token (--auth-token-file, $OVERHEAD_AUTH_TOKEN): read from a file or
// an environment variable, never printed. It becomes the key named "default" (api_keys.hpp), which
// checks every bearer token by its SHA-256, as it checks the keys of the store.
#pragma once

#include <string>
#include <string_view>

namespace overhead::serve {

// Reads the token from `file` (first line, trailing whitespace dropped) or, when `file` is empty,
// from environment variable `env_var` (empty when unset). Throws std::runtime_error naming the
// file (never its contents) when it cannot be read or is empty.
[[nodiscard]] std::string load_token(const std::string& file, const char* env_var);

}  // namespace overhead::serve
