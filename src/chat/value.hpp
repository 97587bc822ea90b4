// The value model of the template engine: Python's data model as far as Jinja templates see it.
//
// A Value is small and cheap to copy. Strings are a string_view plus an optional owner, so strings
// that come from the caller's messages or from template literals are never copied; only strings
// built during a render (concatenation, filters) own their bytes. Containers are shared objects.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace overhead::chat {

// Raised while evaluating; the interpreter adds the template name and line:column of the node.
// The message is Python's/Jinja's own wording, so error goldens compare byte for byte.
struct EvalError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class Kind : std::uint8_t {
  Undefined,  // Jinja's default Undefined: prints as "", iterates as empty, fails on attribute access
  None,
  Bool,
  Int,
  Float,
  String,
  List,       // also tuples (ListObject::is_tuple)
  Dict,
  Callable,   // builtin function, bound method or macro
  Namespace,  // namespace(): the one mutable object a sandboxed template may change
  Loop,       // the `loop` variable of a for loop
};

// Why a value is undefined; picks the message of the error raised when it is used.
// Hint: `s` is the whole message (Jinja's Undefined(hint=...)).
enum class UndefinedWhy : std::uint8_t { MissingName, MissingAttribute, MissingElement, Unsafe, Hint };

struct Object {
  virtual ~Object() = default;
};

struct Value {
  Kind kind = Kind::Undefined;
  UndefinedWhy why = UndefinedWhy::MissingName;
  // String: a markupsafe.Markup (from `safe` or `escape`). It prints as is, but Markup + str
  // escapes the str (binary_op), as Jinja2 does even with autoescaping off.
  bool markup = false;
  union {
    bool b;
    std::int64_t i;
    double f;
    const char* owner_type;  // Undefined: Python type description of the object that lacked the name
  };
  std::string_view s;              // String: the bytes; Undefined: the missing name
  std::shared_ptr<Object> obj;     // owner of s, or the container / callable

  Value() : i(0) {}
  static Value none() { Value v; v.kind = Kind::None; return v; }
  static Value boolean(bool x) { Value v; v.kind = Kind::Bool; v.b = x; return v; }
  static Value integer(std::int64_t x) { Value v; v.kind = Kind::Int; v.i = x; return v; }
  static Value floating(double x) { Value v; v.kind = Kind::Float; v.f = x; return v; }
  // A string whose bytes outlive the render (template literal or caller input): no copy.
  static Value borrowed(std::string_view x) { Value v; v.kind = Kind::String; v.s = x; return v; }
  static Value owned(std::string x);
  static Value undefined(std::string_view name, UndefinedWhy why = UndefinedWhy::MissingName,
                         const char* owner_type = nullptr, std::shared_ptr<Object> keep = nullptr) {
    Value v;
    v.kind = Kind::Undefined;
    v.why = why;
    v.owner_type = owner_type;
    v.s = name;
    v.obj = std::move(keep);
    return v;
  }

  bool is_string() const { return kind == Kind::String; }
  bool is_number() const { return kind == Kind::Int || kind == Kind::Float || kind == Kind::Bool; }
};

struct StringObject final : Object {
  std::string text;
  explicit StringObject(std::string t) : text(std::move(t)) {}
};

inline Value Value::owned(std::string x) {
  auto o = std::make_shared<StringObject>(std::move(x));
  Value v;
  v.kind = Kind::String;
  v.s = o->text;
  v.obj = std::move(o);
  return v;
}

struct ListObject final : Object {
  std::vector<Value> items;
  bool is_tuple = false;
  // Converted from the caller's JSON: one conversion may be shared by several renders (and threads), so
  // the one mutating method the sandbox allows (list.pop) refuses it instead of changing another render's input.
  bool from_input = false;
  // The result of map/select/reject(attr): a generator in Jinja2. It iterates like a list, but json.dumps
  // refuses it, so tojson must too.
  bool lazy = false;
};

// Insertion-ordered like a Python dict; chat dicts are small, so a linear scan beats hashing.
struct DictObject final : Object {
  std::vector<std::pair<Value, Value>> items;
  const Value* find(std::string_view key) const {
    for (const auto& [k, v] : items)
      if (k.kind == Kind::String && k.s == key) return &v;
    return nullptr;
  }
  void set(Value key, Value value);
};

class Interpreter;
struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string_view, Value>> keyword;
  std::vector<Value> keep;  // owners of keyword names that came from a **mapping
  const Value* get(std::size_t index, std::string_view name) const;
};

struct CallableObject final : Object {
  std::string name;
  std::function<Value(Interpreter&, CallArgs&)> fn;
};

inline Value make_list(std::vector<Value> items, bool tuple = false) {
  auto o = std::make_shared<ListObject>();
  o->items = std::move(items);
  o->is_tuple = tuple;
  Value v;
  v.kind = Kind::List;
  v.obj = std::move(o);
  return v;
}
inline Value make_dict(std::shared_ptr<DictObject> o) {
  Value v;
  v.kind = Kind::Dict;
  v.obj = std::move(o);
  return v;
}
inline const ListObject& as_list(const Value& v) { return static_cast<const ListObject&>(*v.obj); }
inline const DictObject& as_dict(const Value& v) { return static_cast<const DictObject&>(*v.obj); }

}  // namespace overhead::chat
