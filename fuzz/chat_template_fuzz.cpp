// libFuzzer target for the chat-template engine: the input is split at the first NUL into a
// template and a JSON messages document; the template is compiled and, when both parse, rendered.
// Any TemplateError is fine; a crash, a sanitizer report or a hang is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "chat/chat_template.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const std::size_t cut = in.find('\0');
  const std::string_view source = in.substr(0, cut);
  nlohmann::ordered_json messages = nlohmann::ordered_json::parse(
      R"([{"role":"system","content":"sys"},{"role":"user","content":" hi \u3000"},{"role":"assistant","content":null,"tool_calls":[{"function":{"name":"f","arguments":{"a":1}}}]}])");
  if (cut != std::string_view::npos) {
    auto parsed = nlohmann::ordered_json::parse(in.substr(cut + 1), nullptr, false);
    if (!parsed.is_discarded()) messages = std::move(parsed);
  }
  try {
    auto t = overhead::chat::ChatTemplate::compile(source, "fuzz");
    overhead::chat::RenderOptions o;
    o.date = "2024-07-26";
    o.max_output_bytes = 1 << 20;
    o.max_loop_iterations = 100000;
    o.max_call_depth = 50;
    (void)t->render(messages, o, nlohmann::ordered_json::object({{"tools", nlohmann::ordered_json::array()}}));
  } catch (const overhead::chat::TemplateError&) {
  }
  return 0;
}
