// The filters, tests, globals and methods (str/dict/list) a sandboxed Jinja environment offers,
// with transformers' additions (tojson without HTML escaping, raise_exception, strftime_now).
#pragma once

#include <string>
#include <string_view>

#include "chat/ast.hpp"
#include "chat/value.hpp"

namespace overhead::chat {

FilterFn find_filter(std::string_view name);
TestFn find_test(std::string_view name);
// A global function (range, namespace, dict, raise_exception, strftime_now, joiner, cycler), or an
// Undefined value.
Value find_global(std::string_view name);

// Python truthiness, ==, < and the arithmetic operators with Python's semantics and messages.
bool truthy(const Value& v);
bool equals(const Value& a, const Value& b);
bool less(const Value& a, const Value& b);  // throws EvalError for unorderable types
Value binary_op(BinOp op, const Value& a, const Value& b, Interpreter& in);
bool contains(const Value& container, const Value& item);  // `item in container`
std::size_t length_of(const Value& v);                      // len(); throws for no length

// markupsafe.escape's replacements (& < > " ') appended to out.
void append_html_escaped(std::string& out, std::string_view s);

// Throws the UndefinedError Jinja raises when an Undefined is used.
[[noreturn]] void fail_undefined(const Value& u);

// Calls method `name` of a str, dict or list (the sandbox refuses mutating ones). Returns false if
// the object has no such method.
bool call_method(Interpreter& in, const Value& obj, std::string_view name, CallArgs& args, Value& result);
bool has_method(const Value& obj, std::string_view name, bool& unsafe);

// Iterates a value as `for` does: list items, dict keys, string characters.
std::vector<Value> iterate(const Value& v);

}  // namespace overhead::chat
