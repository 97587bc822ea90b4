// Expression evaluation of the tree walker: literals, operators, calls, filters and tests.
#include "chat/interpreter.hpp"

#include "chat/builtins.hpp"
#include "chat/pytext.hpp"
#include "chat/runtime_objects.hpp"

namespace overhead::chat {

// ---- expressions ------------------------------------------------------------------------------

Value Interpreter::eval(const Node& n) {
  try {
    return eval_inner(n);
  } catch (const EvalError& e) {
    throw LocatedError{e.what(), n.offset};
  }
}

void Interpreter::collect_args(const Node& n, CallArgs& args, std::size_t first_positional) {
  if (n.kids.size() > first_positional) {
    args.positional.reserve(n.kids.size() - first_positional);
    for (std::size_t i = first_positional; i < n.kids.size(); ++i) args.positional.push_back(eval(*n.kids[i]));
  }
  if (!n.kwargs.empty()) {
    args.keyword.reserve(n.kwargs.size());
    for (std::size_t i = 0; i < n.kwargs.size(); ++i) args.keyword.emplace_back(n.names[i], eval(*n.kwargs[i]));
  }
  if (n.star_args) {
    const Value xs = eval(*n.star_args);
    try {
      for (auto& x : iterate(xs)) args.positional.push_back(std::move(x));
    } catch (const EvalError& e) {
      throw LocatedError{e.what(), n.star_args->offset};
    }
  }
  if (n.star_kwargs) {
    const Value d = eval(*n.star_kwargs);
    if (d.kind != Kind::Dict) throw LocatedError{"argument after ** must be a mapping", n.star_kwargs->offset};
    args.keep.push_back(d);
    for (const auto& [k, v] : as_dict(d).items) {
      if (k.kind != Kind::String) throw LocatedError{"keywords must be strings", n.star_kwargs->offset};
      args.keyword.emplace_back(k.s, v);
    }
  }
}

Value Interpreter::eval_filter(const Node& n, const Value* operand) {
  Value base;
  if (n.kids[0]) base = eval(*n.kids[0]);
  else if (operand) base = *operand;
  CallArgs args;
  collect_args(n, args, 1);
  try {
    return n.filter(*this, base, args);
  } catch (const EvalError& e) {
    throw LocatedError{e.what(), n.offset};
  }
}

Value Interpreter::apply_filter(std::string_view name, const Value& v, CallArgs& args) {
  const FilterFn f = find_filter(name);
  if (!f) throw EvalError("No filter named '" + std::string(name) + "'.");
  return f(*this, v, args);
}

bool Interpreter::apply_test(std::string_view name, const Value& v, CallArgs& args) {
  const TestFn t = find_test(name);
  if (!t) throw EvalError("No test named '" + std::string(name) + "'.");
  return t(*this, v, args);
}

Value Interpreter::eval_inner(const Node& n) {
  switch (n.kind) {
    case NodeKind::Const: return n.constant;
    case NodeKind::Name: {
      if (const Value* v = lookup(n.sym)) return *v;
      Value g = find_global(n.text);
      if (g.kind != Kind::Undefined) return g;
      return Value::undefined(n.text);
    }
    case NodeKind::GetAttr: return getattr(eval(*n.kids[0]), n.text);
    case NodeKind::GetItem: {
      const Value obj = eval(*n.kids[0]);
      return getitem(obj, eval(*n.kids[1]));
    }
    case NodeKind::Slice: {
      const Value obj = eval(*n.kids[0]);
      Value parts[3];
      const Value* p[3] = {nullptr, nullptr, nullptr};
      for (int i = 0; i < 3; ++i)
        if (n.kids[static_cast<std::size_t>(i) + 1]) {
          parts[i] = eval(*n.kids[static_cast<std::size_t>(i) + 1]);
          p[i] = &parts[i];
        }
      return getslice(obj, p[0], p[1], p[2]);
    }
    case NodeKind::Call: return eval_call(n);
    case NodeKind::Filter: return eval_filter(n, nullptr);
    case NodeKind::Test: {
      const Value v = eval(*n.kids[0]);
      CallArgs args;
      collect_args(n, args, 1);
      return Value::boolean(n.test(*this, v, args) != n.flag);
    }
    case NodeKind::Not: return Value::boolean(!truthy(eval(*n.kids[0])));
    case NodeKind::Neg:
    case NodeKind::Pos: {
      const Value v = eval(*n.kids[0]);
      if (v.kind == Kind::Undefined) fail_undefined(v);
      const bool neg = n.kind == NodeKind::Neg;
      if (v.kind == Kind::Int) {
        if (neg && v.i == INT64_MIN) throw EvalError("integer overflow");
        return Value::integer(neg ? -v.i : v.i);
      }
      if (v.kind == Kind::Bool) return Value::integer(neg ? -static_cast<std::int64_t>(v.b) : v.b);
      if (v.kind == Kind::Float) return Value::floating(neg ? -v.f : v.f);
      throw EvalError(std::string("bad operand type for unary ") + (neg ? "-" : "+") + ": '" + py::type_name(v) + "'");
    }
    case NodeKind::Binary: {
      Value a = eval(*n.kids[0]);
      const Value b = eval(*n.kids[1]);
      const auto op = static_cast<BinOp>(n.op);
      // `a + b + c ...` on strings: when the left operand is a string this render built and nobody
      // else holds, append in place instead of copying the growing prefix at every step.
      if (a.kind == Kind::String && a.obj && a.obj.use_count() == 1 &&
          (op == BinOp::Concat || (op == BinOp::Add && b.kind == Kind::String && !a.markup && !b.markup))) {
        auto& text = static_cast<StringObject&>(*a.obj).text;
        if (a.s.data() == text.data() && a.s.size() == text.size()) {
          if (op == BinOp::Concat) py::append_str(text, b);
          else text.append(b.s);
          check_size(text.size());
          a.s = text;
          a.markup = false;  // `~` joins into a plain str; `+` got here only with no Markup side
          return a;
        }
      }
      return binary_op(op, a, b, *this);
    }
    case NodeKind::And: {
      Value a = eval(*n.kids[0]);
      if (!truthy(a)) return a;
      return eval(*n.kids[1]);
    }
    case NodeKind::Or: {
      Value a = eval(*n.kids[0]);
      if (truthy(a)) return a;
      return eval(*n.kids[1]);
    }
    case NodeKind::Compare: {
      Value left = eval(*n.kids[0]);
      for (std::size_t i = 0; i < n.ops.size(); ++i) {
        Value right = eval(*n.kids[i + 1]);
        bool r;
        switch (n.ops[i]) {
          case CmpOp::Eq: r = equals(left, right); break;
          case CmpOp::Ne: r = !equals(left, right); break;
          case CmpOp::Lt: r = less(left, right); break;
          case CmpOp::Le: r = less(left, right) || equals(left, right); break;
          case CmpOp::Gt: r = less(right, left); break;
          case CmpOp::Ge: r = less(right, left) || equals(left, right); break;
          case CmpOp::In: r = contains(right, left); break;
          case CmpOp::NotIn: r = !contains(right, left); break;
          default: r = false;
        }
        if (!r) return Value::boolean(false);
        left = std::move(right);
      }
      return Value::boolean(true);
    }
    case NodeKind::CondExpr: {
      if (truthy(eval(*n.kids[0]))) return eval(*n.kids[1]);
      if (n.kids[2]) return eval(*n.kids[2]);
      return Value::undefined("the inline if-expression evaluated to false and no else section was defined.",
                              UndefinedWhy::Hint);
    }
    case NodeKind::List:
    case NodeKind::Tuple: {
      std::vector<Value> items;
      items.reserve(n.kids.size());
      for (const auto& k : n.kids) items.push_back(eval(*k));
      return make_list(std::move(items), n.kind == NodeKind::Tuple);
    }
    case NodeKind::Dict: {
      auto d = std::make_shared<DictObject>();
      for (std::size_t i = 0; i + 1 < n.kids.size(); i += 2) {
        Value k = eval(*n.kids[i]);
        if (k.kind == Kind::List && !as_list(k).is_tuple) throw EvalError("unhashable type: 'list'");
        if (k.kind == Kind::Dict) throw EvalError("unhashable type: 'dict'");
        d->set(std::move(k), eval(*n.kids[i + 1]));
      }
      return make_dict(std::move(d));
    }
    default: throw EvalError("internal error: statement node in expression position");
  }
}

Value Interpreter::eval_call(const Node& n) {
  const Node& callee = *n.kids[0];
  // obj.method(...) on str/dict/list: dispatch directly, with no bound-method object.
  if (callee.kind == NodeKind::GetAttr) {
    const Value obj = eval(*callee.kids[0]);
    if (obj.kind == Kind::String || obj.kind == Kind::Dict || obj.kind == Kind::List) {
      bool unsafe = false;
      if (has_method(obj, callee.text, unsafe)) {
        if (unsafe)
          throw EvalError("access to attribute '" + callee.text + "' of '" + py::type_name(obj) +
                          "' object is unsafe.");
        CallArgs args;
        collect_args(n, args, 1);
        Value r;
        try {
          call_method(*this, obj, callee.text, args, r);
        } catch (const EvalError& e) {
          throw LocatedError{e.what(), n.offset};
        }
        return r;
      }
    }
    const Value f = getattr(obj, callee.text);
    CallArgs args;
    collect_args(n, args, 1);
    return call_value(f, args, callee.text);
  }
  const Value f = eval(callee);
  CallArgs args;
  collect_args(n, args, 1);
  return call_value(f, args, callee.kind == NodeKind::Name ? std::string_view(callee.text) : std::string_view());
}

Value Interpreter::call_value(const Value& f, CallArgs& args, std::string_view name) {
  if (f.kind == Kind::Undefined) {
    if (f.why == UndefinedWhy::Unsafe)
      throw EvalError("access to attribute '" + std::string(f.s) + "' of '" + f.owner_type + "' object is unsafe.");
    fail_undefined(f);
  }
  if (f.kind != Kind::Callable) throw EvalError(std::string("'") + py::type_name(f) + "' object is not callable");
  if (const auto* m = dynamic_cast<const MacroObject*>(f.obj.get())) {
    const Value* caller = nullptr;
    if (m->macro->kind == NodeKind::CallBlock) {
      // caller(): the call block's body, seeing the names of the call site.
      return call_macro(*m->macro, args, nullptr, m->parent_frame);
    }
    return call_macro(*m->macro, args, caller, m->parent_frame);
  }
  (void)name;
  return static_cast<const CallableObject&>(*f.obj).fn(*this, args);
}

}  // namespace overhead::chat
