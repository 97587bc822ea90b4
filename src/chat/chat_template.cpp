#include "chat/chat_template.hpp"

#include <type_traits>

#include "chat/ast.hpp"
#include "chat/interpreter.hpp"
#include "chat/json_value.hpp"
#include "chat/lexer.hpp"
#include "chat/parser.hpp"
#include "chat/symbols.hpp"

namespace overhead::chat {

static_assert(std::is_same_v<SymbolId, std::uint32_t>, "chat_template.hpp holds variable ids as std::uint32_t");

namespace {

// Jinja's lexer first turns \r\n and \r into \n and drops one trailing newline
// (keep_trailing_newline=False).
std::string normalize_newlines(std::string_view src) {
  std::string out;
  out.reserve(src.size());
  for (std::size_t i = 0; i < src.size(); ++i) {
    if (src[i] == '\r') {
      out.push_back('\n');
      if (i + 1 < src.size() && src[i + 1] == '\n') ++i;
    } else {
      out.push_back(src[i]);
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

template <typename Json>
std::optional<std::string> token_text(const Json& t) {
  if (t.is_string()) return t.template get<std::string>();
  if (t.is_object()) {
    const auto it = t.find("content");
    if (it != t.end() && it->is_string()) return it->template get<std::string>();
  }
  return std::nullopt;
}

}  // namespace

ChatTemplate::ChatTemplate() : symbols_(std::make_unique<Symbols>()) {}
ChatTemplate::~ChatTemplate() = default;

void ChatTemplate::fail_at(std::uint32_t offset, const std::string& message) const {
  std::uint32_t line, col;
  line_col(source_, offset, line, col);
  throw TemplateError(name_ + ":" + std::to_string(line) + ":" + std::to_string(col) + ": " + message, message);
}

std::shared_ptr<const ChatTemplate> ChatTemplate::compile(std::string_view source, std::string name) {
  std::shared_ptr<ChatTemplate> t(new ChatTemplate());
  t->name_ = std::move(name);
  t->source_ = normalize_newlines(source);
  try {
    t->root_ = parse_template(tokenize(t->source_));
  } catch (const LexError& e) {
    t->fail_at(e.offset, e.message);
  }
  resolve_symbols(*t->root_, *t->symbols_);
  t->bind_context_names();
  return t;
}

void ChatTemplate::bind_context_names() {
  messages_id_ = symbols_->find("messages");
  tools_id_ = symbols_->find("tools");
  documents_id_ = symbols_->find("documents");
  add_generation_prompt_id_ = symbols_->find("add_generation_prompt");
  additional_id_ = has_additional_special_tokens_ ? symbols_->find("additional_special_tokens") : std::nullopt;
  special_token_ids_.clear();
  for (const auto& [k, v] : special_tokens_)
    if (const auto id = symbols_->find(k)) special_token_ids_.emplace_back(*id, v);
}

template <typename Json>
std::shared_ptr<const ChatTemplate> ChatTemplate::from_config_impl(const Json& config, std::string name) {
  if (!config.is_object()) throw TemplateError(name + ": tokenizer_config.json is not a JSON object", "not an object");
  const auto it = config.find("chat_template");
  if (it == config.end() || it->is_null())
    throw TemplateError(name + ": tokenizer_config.json has no chat_template", "no chat_template");
  std::string source;
  if (it->is_string()) {
    source = it->template get<std::string>();
  } else if (it->is_array()) {
    // A list of {"name", "template"}: transformers uses the one named "default".
    const Json* chosen = nullptr;
    for (const auto& e : *it)
      if (e.is_object() && e.contains("name") && e["name"] == "default") chosen = &e;
    if (!chosen || !chosen->contains("template") || !(*chosen)["template"].is_string())
      throw TemplateError(name + ": chat_template list has no \"default\" entry", "no default chat_template");
    source = (*chosen)["template"].template get<std::string>();
  } else {
    throw TemplateError(name + ": chat_template must be a string or a list", "bad chat_template");
  }
  auto compiled = compile(source, std::move(name));
  auto* t = const_cast<ChatTemplate*>(compiled.get());
  for (const char* key : {"bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"}) {
    const auto k = config.find(key);
    if (k == config.end()) continue;
    if (auto s = token_text(*k)) t->special_tokens_.emplace_back(key, *s);
  }
  const auto add = config.find("additional_special_tokens");
  if (add != config.end() && add->is_array()) {
    t->has_additional_special_tokens_ = true;
    for (const auto& x : *add)
      if (auto s = token_text(x)) t->additional_special_tokens_.push_back(*s);
  }
  t->bind_context_names();
  return compiled;
}

std::shared_ptr<const ChatTemplate> ChatTemplate::from_tokenizer_config(const nlohmann::json& config, std::string name) {
  return from_config_impl(config, std::move(name));
}
std::shared_ptr<const ChatTemplate> ChatTemplate::from_tokenizer_config(const nlohmann::ordered_json& config,
                                                                        std::string name) {
  return from_config_impl(config, std::move(name));
}

template <typename Json>
std::string ChatTemplate::render_impl(const Json& messages, const RenderOptions& options, const Json& extra) const {
  Value m, e;
  try {
    m = value_from_json(messages);
    if (extra.is_object() && !extra.empty()) e = value_from_json(extra);
  } catch (const EvalError& err) {
    throw TemplateError(name_ + ": " + err.what(), err.what());
  }
  std::string out;
  render_into(out, m, options, e.kind == Kind::Dict ? &e : nullptr);
  return out;
}

void ChatTemplate::render_into(std::string& out, const Value& messages, const RenderOptions& options,
                               const Value* extra) const {
  out.clear();
  if (out.capacity() < 512 + source_.size() / 2) out.reserve(512 + source_.size() / 2);
  Limits limits;
  limits.max_output_bytes = options.max_output_bytes;
  limits.max_loop_iterations = options.max_loop_iterations;
  limits.max_call_depth = options.max_call_depth;
  limits.max_render_ms = options.max_render_ms;
  Interpreter in(out, limits, options.date);
  // The context of transformers' render: messages, tools, documents, add_generation_prompt, the
  // special tokens, then the caller's extra variables.
  if (messages_id_) in.define(*messages_id_, messages);
  if (tools_id_) in.define(*tools_id_, Value::none());
  if (documents_id_) in.define(*documents_id_, Value::none());
  if (add_generation_prompt_id_) in.define(*add_generation_prompt_id_, Value::boolean(options.add_generation_prompt));
  for (const auto& [id, v] : special_token_ids_) in.define(id, Value::borrowed(v));
  if (additional_id_) {
    std::vector<Value> items;
    for (const auto& s : additional_special_tokens_) items.push_back(Value::borrowed(s));
    in.define(*additional_id_, make_list(std::move(items)));
  }
  if (extra && extra->kind == Kind::Dict)
    for (const auto& [k, v] : as_dict(*extra).items)
      if (k.kind == Kind::String)
        if (const auto id = symbols_->find(k.s)) in.define(*id, v);
  try {
    in.run(*root_);
  } catch (const LocatedError& e) {
    fail_at(e.offset, e.message);
  } catch (const EvalError& e) {
    fail_at(0, e.what());
  } catch (const std::bad_alloc&) {
    // Every size a template controls is bounded before allocating; this is the last line of defence, so the
    // caller still gets a per-input error naming the template instead of losing the whole run.
    out.clear();
    out.shrink_to_fit();
    fail_at(0, "out of memory while rendering");
  }
}

std::string ChatTemplate::render(const nlohmann::json& messages, const RenderOptions& options,
                                 const nlohmann::json& extra) const {
  return render_impl(messages, options, extra);
}
std::string ChatTemplate::render(const nlohmann::ordered_json& messages, const RenderOptions& options,
                                 const nlohmann::ordered_json& extra) const {
  return render_impl(messages, options, extra);
}

}  // namespace overhead::chat
