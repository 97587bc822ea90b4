// detect_parsers (detect.hpp).
#include "agent/detect.hpp"

#include <array>

namespace overhead::agent {

namespace detect {

bool has(std::string_view text, std::string_view marker) { return text.find(marker) != std::string_view::npos; }

struct ToolMarker {
  std::string_view marker;
  std::string_view parser;
};

// Order matters where one template could carry two markers: harmony first (its templates also
// speak of tools), then the token-delimited families, the JSON-in-text Llama form last.
constexpr std::array kToolMarkers = {
    ToolMarker{"<|channel|>", "gpt_oss"},
    ToolMarker{"tool\u2581calls\u2581begin", "deepseek_v3"},
    ToolMarker{"[TOOL_CALLS]", "mistral"},
    ToolMarker{"<tool_call>", "hermes"},
    ToolMarker{"<|tool_call|>", "phi4"},
    ToolMarker{"<|tool|>", "phi4"},
    ToolMarker{"<|python_tag|>", "llama3_json"},
};

}  // namespace detect

DetectedParsers detect_parsers(std::string_view chat_template) {
  DetectedParsers found;
  for (const detect::ToolMarker& m : detect::kToolMarkers) {
    if (detect::has(chat_template, m.marker)) {
      found.tool_parser = m.parser;
      break;
    }
  }
  if (found.tool_parser.empty() && detect::has(chat_template, "ipython") && detect::has(chat_template, "\"parameters\"")) {
    found.tool_parser = "llama3_json";
  }
  if (found.tool_parser == "gpt_oss") {
    found.reasoning_parser = "gpt_oss";
  } else if (detect::has(chat_template, "<think>") || detect::has(chat_template, "</think>")) {
    found.reasoning_parser = "think";
  }
  return found;
}

}  // namespace overhead::agent
