// Python's semantics of `obj.name`, `obj[key]` and `obj[a:b:c]` as Jinja's sandbox applies them:
// attribute-or-item lookup, negative indices, code-point indexing of str, slice bounds.
#include "chat/interpreter.hpp"

#include "chat/builtins.hpp"
#include "chat/pytext.hpp"
#include "chat/runtime_objects.hpp"

namespace overhead::chat {

Value Interpreter::getattr(const Value& obj, std::string_view name) {
  switch (obj.kind) {
    case Kind::Undefined: fail_undefined(obj);
    case Kind::Dict: {
      bool unsafe = false;
      if (has_method(obj, name, unsafe)) {
        if (unsafe)
          return Value::undefined(name, UndefinedWhy::Unsafe, "dict", obj.obj);
        break;  // bound method below
      }
      if (const Value* v = as_dict(obj).find(name)) return *v;
      return Value::undefined(name, UndefinedWhy::MissingAttribute, "dict object");
    }
    case Kind::Namespace: {
      if (const Value* v = static_cast<const NamespaceObject&>(*obj.obj).attrs.find(name)) return *v;
      return Value::undefined(name, UndefinedWhy::MissingAttribute, "Namespace");
    }
    case Kind::Loop: {
      const auto& l = static_cast<const LoopObject&>(*obj.obj);
      const std::size_t n = l.items->size();
      if (name == "index") return Value::integer(static_cast<std::int64_t>(l.index0 + 1));
      if (name == "index0") return Value::integer(static_cast<std::int64_t>(l.index0));
      if (name == "first") return Value::boolean(l.index0 == 0);
      if (name == "last") return Value::boolean(l.index0 + 1 == n);
      if (name == "length") return Value::integer(static_cast<std::int64_t>(n));
      if (name == "revindex") return Value::integer(static_cast<std::int64_t>(n - l.index0));
      if (name == "revindex0") return Value::integer(static_cast<std::int64_t>(n - l.index0 - 1));
      if (name == "depth") return Value::integer(l.depth0 + 1);
      if (name == "depth0") return Value::integer(l.depth0);
      if (name == "previtem")
        return l.index0 > 0 ? (*l.items)[l.index0 - 1] : Value::undefined("there is no previous item", UndefinedWhy::Hint);
      if (name == "nextitem")
        return l.index0 + 1 < n ? (*l.items)[l.index0 + 1] : Value::undefined("there is no next item", UndefinedWhy::Hint);
      if (name == "cycle") {
        auto c = std::make_shared<CallableObject>();
        c->name = "cycle";
        const std::size_t index0 = l.index0;
        c->fn = [index0](Interpreter&, CallArgs& a) -> Value {
          if (a.positional.empty()) throw EvalError("no items for cycling given");
          return a.positional[index0 % a.positional.size()];
        };
        Value v;
        v.kind = Kind::Callable;
        v.obj = std::move(c);
        return v;
      }
      return Value::undefined(name, UndefinedWhy::MissingAttribute, "LoopContext");
    }
    case Kind::None: return Value::undefined(name, UndefinedWhy::MissingAttribute, "None");
    default: break;
  }
  bool unsafe = false;
  if (has_method(obj, name, unsafe)) {
    if (unsafe) return Value::undefined(name, UndefinedWhy::Unsafe, py::type_name(obj), obj.obj);
    // A bound method value, for templates that pass `x.strip` around before calling it.
    auto c = std::make_shared<CallableObject>();
    c->name = std::string(name);
    Value self = obj;
    c->fn = [self, name](Interpreter& in, CallArgs& a) -> Value {
      Value r;
      call_method(in, self, name, a, r);
      return r;
    };
    Value v;
    v.kind = Kind::Callable;
    v.obj = std::move(c);
    return v;
  }
  if (obj.kind == Kind::String) return Value::undefined(name, UndefinedWhy::MissingAttribute, "str object");
  if (obj.kind == Kind::List)
    return Value::undefined(name, UndefinedWhy::MissingAttribute,
                            as_list(obj).is_tuple ? "tuple object" : "list object");
  if (obj.kind == Kind::Int) return Value::undefined(name, UndefinedWhy::MissingAttribute, "int object");
  if (obj.kind == Kind::Float) return Value::undefined(name, UndefinedWhy::MissingAttribute, "float object");
  if (obj.kind == Kind::Bool) return Value::undefined(name, UndefinedWhy::MissingAttribute, "bool object");
  return Value::undefined(name, UndefinedWhy::MissingAttribute, "object");
}

namespace {
// Python's index normalisation: negative counts from the end; returns false when out of range.
bool normalize_index(std::int64_t& i, std::size_t size) {
  if (i < 0) i += static_cast<std::int64_t>(size);
  return i >= 0 && static_cast<std::size_t>(i) < size;
}

Value missing_element(const Value& obj, const Value& key, const char* type) {
  std::string r;
  py::append_repr(r, key);
  auto keep = std::make_shared<StringObject>(std::move(r));
  Value u = Value::undefined(keep->text, UndefinedWhy::MissingElement, type, keep);
  (void)obj;
  return u;
}
}  // namespace

Value Interpreter::getitem(const Value& obj, const Value& key) {
  switch (obj.kind) {
    case Kind::Undefined: fail_undefined(obj);
    case Kind::Dict: {
      const auto& d = as_dict(obj);
      if (key.kind == Kind::String) {
        if (const Value* v = d.find(key.s)) return *v;
      } else {
        for (const auto& [k, v] : d.items)
          if (equals(k, key)) return v;
      }
      break;
    }
    case Kind::List: {
      const auto& l = as_list(obj);
      if (key.kind == Kind::Int || key.kind == Kind::Bool) {
        std::int64_t i = key.kind == Kind::Int ? key.i : key.b;
        if (normalize_index(i, l.items.size())) return l.items[static_cast<std::size_t>(i)];
        return missing_element(obj, key, l.is_tuple ? "tuple object" : "list object");
      }
      break;
    }
    case Kind::String: {
      if (key.kind == Kind::Int || key.kind == Kind::Bool) {
        std::int64_t i = key.kind == Kind::Int ? key.i : key.b;
        const std::size_t n = py::code_point_count(obj.s);
        if (!normalize_index(i, n)) return missing_element(obj, key, "str object");
        std::size_t pos = 0;
        for (std::int64_t k = 0; k < i; ++k) py::next_code_point(obj.s, pos);
        std::size_t end = pos;
        py::next_code_point(obj.s, end);
        Value v = obj;
        v.s = obj.s.substr(pos, end - pos);
        return v;
      }
      break;
    }
    case Kind::Namespace:
    case Kind::Loop:
      if (key.kind == Kind::String) return getattr(obj, key.s);
      break;
    default: break;
  }
  if (key.kind == Kind::String) {
    // Jinja falls back to attribute lookup for string keys (so d['items'] finds the method).
    Value v = getattr(obj, key.s);
    if (v.kind == Kind::Undefined && v.why == UndefinedWhy::MissingAttribute) {
      auto keep = std::make_shared<StringObject>(std::string(key.s));
      return Value::undefined(keep->text, UndefinedWhy::MissingAttribute, v.owner_type, keep);
    }
    return v;
  }
  if (obj.kind == Kind::None) return missing_element(obj, key, "None");
  if (obj.kind == Kind::Dict) return missing_element(obj, key, "dict object");
  return missing_element(obj, key, obj.kind == Kind::Int ? "int object" : "object");
}

namespace {
// Python slice bounds (slice.indices) over `size` elements.
void slice_indices(const Value* start, const Value* stop, const Value* step, std::size_t size, std::int64_t& b,
                   std::int64_t& e, std::int64_t& s) {
  auto as_int = [](const Value* v, std::int64_t dflt) -> std::int64_t {
    if (!v || v->kind == Kind::None) return dflt;
    if (v->kind == Kind::Int) return v->i;
    if (v->kind == Kind::Bool) return v->b;
    throw EvalError("slice indices must be integers or None or have an __index__ method");
  };
  const auto n = static_cast<std::int64_t>(size);
  s = as_int(step, 1);
  if (s == 0) throw EvalError("slice step cannot be zero");
  auto clamp = [&](std::int64_t x, bool is_start) {
    if (x < 0) {
      x += n;
      if (x < 0) x = s < 0 ? -1 : 0;
    } else if (x >= n) {
      x = s < 0 ? n - 1 : n;
    }
    (void)is_start;
    return x;
  };
  b = (!start || start->kind == Kind::None) ? (s < 0 ? n - 1 : 0) : clamp(as_int(start, 0), true);
  e = (!stop || stop->kind == Kind::None) ? (s < 0 ? -1 : n) : clamp(as_int(stop, 0), false);
}
}  // namespace

Value Interpreter::getslice(const Value& obj, const Value* start, const Value* stop, const Value* step) {
  const Value* p[3] = {start, stop, step};
  if (obj.kind == Kind::Undefined) fail_undefined(obj);
  std::int64_t b, e, s;
  if (obj.kind == Kind::List) {
    const auto& l = as_list(obj);
    slice_indices(p[0], p[1], p[2], l.items.size(), b, e, s);
    std::vector<Value> out;
    for (std::int64_t i = b; s > 0 ? i < e : i > e; i += s) out.push_back(l.items[static_cast<std::size_t>(i)]);
    return make_list(std::move(out), l.is_tuple);
  }
  if (obj.kind == Kind::String) {
    // Index code points; slices of ASCII-only strings are byte ranges.
    std::vector<std::size_t> starts;
    for (std::size_t i = 0; i < obj.s.size();) {
      starts.push_back(i);
      py::next_code_point(obj.s, i);
    }
    starts.push_back(obj.s.size());
    slice_indices(p[0], p[1], p[2], starts.size() - 1, b, e, s);
    if (s == 1) {
      Value v = obj;
      if (e <= b) v.s = {};
      else v.s = obj.s.substr(starts[static_cast<std::size_t>(b)],
                              starts[static_cast<std::size_t>(e)] - starts[static_cast<std::size_t>(b)]);
      return v;
    }
    std::string out;
    for (std::int64_t i = b; s > 0 ? i < e : i > e; i += s)
      out.append(obj.s.substr(starts[static_cast<std::size_t>(i)],
                              starts[static_cast<std::size_t>(i) + 1] - starts[static_cast<std::size_t>(i)]));
    return Value::owned(std::move(out));
  }
  throw EvalError(std::string("'") + py::type_name(obj) + "' object is not subscriptable");
}

}  // namespace overhead::chat
