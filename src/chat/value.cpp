// The out-of-line members of the value types (value.hpp) and namespace().
#include "chat/value.hpp"

#include "chat/builtins.hpp"
#include "chat/interpreter.hpp"
#include "chat/runtime_objects.hpp"

namespace overhead::chat {

void DictObject::set(Value key, Value value) {
  for (auto& [k, v] : items)
    if (equals(k, key)) {
      v = std::move(value);
      return;
    }
  items.emplace_back(std::move(key), std::move(value));
}

const Value* CallArgs::get(std::size_t index, std::string_view name) const {
  if (index < positional.size()) return &positional[index];
  for (const auto& [k, v] : keyword)
    if (k == name) return &v;
  return nullptr;
}

Value make_namespace(const CallArgs& args) {
  auto ns = std::make_shared<NamespaceObject>();
  for (const auto& p : args.positional) {
    if (p.kind != Kind::Dict) throw EvalError("namespace() takes mappings as positional arguments");
    for (const auto& [k, v] : as_dict(p).items) ns->attrs.set(k, v);
  }
  for (const auto& [k, v] : args.keyword) ns->attrs.set(Value::owned(std::string(k)), v);
  Value v;
  v.kind = Kind::Namespace;
  v.obj = std::move(ns);
  return v;
}

}  // namespace overhead::chat
