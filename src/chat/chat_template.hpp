// Chat templates: HF `chat_template` Jinja programs rendered byte for byte as transformers'
// apply_chat_template(..., tokenize=False) renders them (Jinja2 ImmutableSandboxedEnvironment with
// trim_blocks, lstrip_blocks, loop controls, tojson without HTML escaping, raise_exception,
// strftime_now). A template is compiled once into an immutable tree; any number of threads may
// render from it at the same time.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace overhead::chat {

// A syntax error, or an error raised while rendering (raise_exception, an undefined value used,
// a type error, a sandbox limit). what() is "<template name>:<line>:<col>: <message>"; message()
// is the bare message, worded as Jinja2/Python word it.
class TemplateError : public std::runtime_error {
 public:
  using runtime_error::runtime_error;
  TemplateError(const std::string& full, std::string message) : std::runtime_error(full), message_(std::move(message)) {}
  const std::string& message() const { return message_; }

 private:
  std::string message_;
};

struct RenderOptions {
  bool add_generation_prompt = false;
  std::optional<std::string> date;  // "YYYY-MM-DD" pins strftime_now (midnight local time); else the clock
  // Sandbox limits: a hostile template stops with a TemplateError instead of running away.
  std::size_t max_output_bytes = 64u << 20;
  std::uint64_t max_loop_iterations = 10'000'000;
  int max_call_depth = 200;
  std::uint32_t max_render_ms = 2'000;  // wall time of one render (loops and macro calls check it); 0 = none
};

// Engine types, internal to the module (an installed package carries no definition of them).
struct Node;
struct Value;
class Symbols;

class ChatTemplate {
 public:
  // Compile once (throws TemplateError on syntax error); the result is immutable and thread-safe to render.
  static std::shared_ptr<const ChatTemplate> compile(std::string_view source, std::string name);
  // Build from a parsed tokenizer_config.json: picks chat_template (the "default" entry if it is a
  // list), and takes bos_token/eos_token/unk_token/sep_token/pad_token/cls_token/mask_token (string or
  // AddedToken object) and additional_special_tokens as context variables, as transformers'
  // apply_chat_template does. Throws TemplateError if there is no template.
  static std::shared_ptr<const ChatTemplate> from_tokenizer_config(const nlohmann::json& config, std::string name);
  static std::shared_ptr<const ChatTemplate> from_tokenizer_config(const nlohmann::ordered_json& config,
                                                                   std::string name);

  // Render with `messages` (a JSON array) and optional extra variables (tools, documents, ...).
  // Variables in `extra` override the defaults (tools=None, documents=None, special tokens).
  // nlohmann::json keeps object keys sorted; pass ordered_json where key order matters (tojson of
  // tool schemas), since Python keeps insertion order.
  std::string render(const nlohmann::json& messages, const RenderOptions& options,
                     const nlohmann::json& extra = nlohmann::json::object()) const;
  std::string render(const nlohmann::ordered_json& messages, const RenderOptions& options,
                     const nlohmann::ordered_json& extra = nlohmann::ordered_json::object()) const;

  // The same render from engine values converted once (chat/json_value.hpp value_from_json), so a
  // caller that renders a conversation more than once, or builds it without JSON, pays no
  // conversion per render. `messages` is normally a list; `extra`, when given, a dict of further
  // variables. The text replaces the contents of `out`, whose capacity is reused: a loop over many
  // conversations allocates no output buffer once it has grown. On error `out` holds a partial render.
  void render_into(std::string& out, const Value& messages, const RenderOptions& options,
                   const Value* extra = nullptr) const;

  const std::string& name() const { return name_; }
  const std::string& source() const { return source_; }

  ChatTemplate(const ChatTemplate&) = delete;
  ChatTemplate& operator=(const ChatTemplate&) = delete;
  ~ChatTemplate();

 private:
  ChatTemplate();
  template <typename Json>
  std::string render_impl(const Json& messages, const RenderOptions& options, const Json& extra) const;
  template <typename Json>
  static std::shared_ptr<const ChatTemplate> from_config_impl(const Json& config, std::string name);
  [[noreturn]] void fail_at(std::uint32_t offset, const std::string& message) const;
  // Resolves the ids of the context variables once the special tokens are known.
  void bind_context_names();

  std::string name_;
  std::string source_;  // newline-normalised, as Jinja's lexer sees it
  std::unique_ptr<Node> root_;
  std::vector<std::pair<std::string, std::string>> special_tokens_;
  std::vector<std::string> additional_special_tokens_;
  bool has_additional_special_tokens_ = false;
  // Variable ids of the tree (chat/symbols.hpp; ids are SymbolId, a std::uint32_t); a context
  // variable the template never names is not defined at all. Held by pointer so that this header
  // needs no internal header.
  std::unique_ptr<Symbols> symbols_;
  std::optional<std::uint32_t> messages_id_, tools_id_, documents_id_, add_generation_prompt_id_, additional_id_;
  std::vector<std::pair<std::uint32_t, std::string_view>> special_token_ids_;  // views into special_tokens_
};

}  // namespace overhead::chat
