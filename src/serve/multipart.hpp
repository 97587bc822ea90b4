// multipart/form-data (RFC 7578) as POST /v1/files receives it: the boundary from the
// Content-Type, then each part's name, filename and bytes. The parts are views into the body.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace overhead::serve {

struct FormPart {
  std::string name;
  std::optional<std::string> filename;
  std::string_view content;
};

// The parts of `body`; throws std::invalid_argument saying what is wrong (no boundary in
// `content_type`, a part without its name, a body that does not end with the closing boundary).
[[nodiscard]] std::vector<FormPart> parse_multipart(std::string_view content_type, std::string_view body);

}  // namespace overhead::serve
