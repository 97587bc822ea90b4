#include "schema/response_format.hpp"

#include "schema/internal/json_kind.hpp"
#include "schema/tools.hpp"

namespace overhead::schema {

namespace {

using nlohmann::json;

}  // namespace

ResponseFormat check_response_format(const json* response_format, std::string_view field) {
  const std::string where(field);
  ResponseFormat out;
  if (response_format == nullptr || response_format->is_null()) return out;
  if (!response_format->is_object()) throw SchemaError(where, "must be an object, not " + internal::json_kind(*response_format));
  const auto type = response_format->find("type");
  if (type == response_format->end()) throw SchemaError(where + ".type", "is required");
  if (!type->is_string()) throw SchemaError(where + ".type", "must be a string, not " + internal::json_kind(*type));
  const auto& type_text = type->get_ref<const std::string&>();
  if (type_text == "text") return out;
  if (type_text == "json_object") {
    out.kind = ResponseFormat::Kind::kJsonObject;
    out.schema = json{{"type", "object"}};
    out.compiled = compile(out.schema);
    return out;
  }
  if (type_text != "json_schema") {
    throw SchemaError(where + ".type", "must be \"text\", \"json_object\" or \"json_schema\", not " + type->dump());
  }
  out.kind = ResponseFormat::Kind::kJsonSchema;
  const std::string js_at = where + ".json_schema";
  const auto js = response_format->find("json_schema");
  if (js == response_format->end()) throw SchemaError(js_at, "is required when type is \"json_schema\"");
  if (!js->is_object()) throw SchemaError(js_at, "must be an object, not " + internal::json_kind(*js));

  const auto name = js->find("name");
  if (name == js->end()) throw SchemaError(js_at + ".name", "is required");
  if (!name->is_string()) throw SchemaError(js_at + ".name", "must be a string, not " + internal::json_kind(*name));
  if (!is_valid_function_name(name->get_ref<const std::string&>())) {
    throw SchemaError(js_at + ".name", "must match ^[a-zA-Z0-9_-]{1,64}$, not " + name->dump());
  }
  out.name = name->get<std::string>();
  if (const auto d = js->find("description"); d != js->end() && !d->is_null()) {
    if (!d->is_string()) throw SchemaError(js_at + ".description", "must be a string, not " + internal::json_kind(*d));
    out.description = d->get<std::string>();
  }
  if (const auto s = js->find("strict"); s != js->end() && !s->is_null()) {
    if (!s->is_boolean()) throw SchemaError(js_at + ".strict", "must be a boolean, not " + internal::json_kind(*s));
    out.strict = s->get<bool>();
  }
  out.schema = json::object();
  if (const auto s = js->find("schema"); s != js->end() && !s->is_null()) {
    if (!s->is_object() && !s->is_boolean()) {
      throw SchemaError(js_at + ".schema", "must be a JSON Schema (an object), not " + internal::json_kind(*s));
    }
    out.schema = *s;
  }
  out.compiled = compile(out.schema, CompileOptions{.where = js_at + ".schema"});
  return out;
}

}  // namespace overhead::schema
