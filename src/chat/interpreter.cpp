#include "chat/interpreter.hpp"

#include "chat/builtins.hpp"
#include "chat/pytext.hpp"

namespace overhead::chat {

namespace {

// The `loop` variable. One object per for statement, updated in place each iteration.
struct LoopObject final : Object {
  const std::vector<Value>* items = nullptr;
  std::size_t index0 = 0;
  int depth0 = 0;
};

struct NamespaceObject final : Object {
  DictObject attrs;
};

struct MacroObject final : Object {
  const Node* macro = nullptr;
  std::int32_t parent_frame = 0;  // where the body looks up names
  Value caller;                   // for the body of a call block: none
};

}  // namespace

namespace {
// The variable and frame stacks of the last render on this thread, kept with their capacity so
// that a render allocates no stack once the thread has rendered one conversation.
struct SpareStacks {
  std::vector<std::pair<SymbolId, Value>> vars;
  std::vector<Interpreter::Frame> frames;
  bool in_use = false;
};
thread_local SpareStacks spare;
}  // namespace

Interpreter::Interpreter(std::string& out, const Limits& limits, std::optional<std::string> pinned_date)
    : out_(out), limits_(limits), pinned_date_(std::move(pinned_date)) {
  if (!spare.in_use) {
    spare.in_use = true;
    scratch_borrowed_ = true;
    vars_.swap(spare.vars);
    frames_.swap(spare.frames);
  }
}

Interpreter::~Interpreter() {
  if (scratch_borrowed_) {
    vars_.clear();  // drops the render's values now, keeps the capacity
    frames_.clear();
    vars_.swap(spare.vars);
    frames_.swap(spare.frames);
    spare.in_use = false;
  }
}

void Interpreter::define(SymbolId name, Value v) {
  if (frames_.empty()) frames_.push_back({0, -1});
  assign(name, std::move(v));
}

void Interpreter::push_frame(std::int32_t parent) {
  frames_.push_back({static_cast<std::uint32_t>(vars_.size()), parent});
}

void Interpreter::pop_frame() {
  vars_.resize(frames_.back().start);
  frames_.pop_back();
}

const Value* Interpreter::lookup(SymbolId name) const {
  std::int32_t f = static_cast<std::int32_t>(frames_.size()) - 1;
  while (f >= 0) {
    const std::size_t start = frames_[static_cast<std::size_t>(f)].start;
    const std::size_t end = static_cast<std::size_t>(f) + 1 < frames_.size()
                                ? frames_[static_cast<std::size_t>(f) + 1].start
                                : vars_.size();
    for (std::size_t i = end; i > start; --i)
      if (vars_[i - 1].first == name) return &vars_[i - 1].second;
    f = frames_[static_cast<std::size_t>(f)].parent;
  }
  return nullptr;
}

void Interpreter::assign(SymbolId name, Value v) {
  const std::size_t start = frames_.back().start;
  for (std::size_t i = start; i < vars_.size(); ++i)
    if (vars_[i].first == name) {
      vars_[i].second = std::move(v);
      return;
    }
  vars_.emplace_back(name, std::move(v));
}

void Interpreter::count_iterations(std::uint64_t n) {
  iterations_ += n;
  if (iterations_ > limits_.max_loop_iterations)
    throw EvalError("loop iteration limit exceeded (" + std::to_string(limits_.max_loop_iterations) + ")");
}

void Interpreter::check_size(std::size_t bytes) const {
  if (bytes > limits_.max_output_bytes)
    throw EvalError("output size limit exceeded (" + std::to_string(limits_.max_output_bytes) + " bytes)");
}

void Interpreter::run(const Node& root) {
  if (frames_.empty()) frames_.push_back({0, -1});
  exec_body(root);
}

// ---- statements -------------------------------------------------------------------------------

Interpreter::Flow Interpreter::exec_body(const Node& body) {
  for (const auto& k : body.kids) {
    const Flow f = exec(*k);
    if (f != Flow::Normal) return f;
  }
  return Flow::Normal;
}

Interpreter::Flow Interpreter::exec(const Node& n) {
  switch (n.kind) {
    case NodeKind::Data:
      out_ += n.text;
      if (out_.size() > limits_.max_output_bytes) throw LocatedError{"output size limit exceeded", n.offset};
      return Flow::Normal;
    case NodeKind::Print: {
      const Node& e = *n.kids[0];
      if (e.kind == NodeKind::Binary && (static_cast<BinOp>(e.op) == BinOp::Add || static_cast<BinOp>(e.op) == BinOp::Concat)) {
        print_sum(e);
      } else {
        const Value v = eval(e);
        py::append_str(out_, v);
      }
      if (out_.size() > limits_.max_output_bytes) throw LocatedError{"output size limit exceeded", n.offset};
      return Flow::Normal;
    }
    case NodeKind::If: {
      const Node* cur = &n;
      for (;;) {
        if (truthy(eval(*cur->kids[0]))) return exec_body(*cur->kids[1]);
        if (cur->kids.size() < 3) return Flow::Normal;
        const Node* e = cur->kids[2].get();
        if (e->kind == NodeKind::If) {
          cur = e;
          continue;
        }
        return exec_body(*e);
      }
    }
    case NodeKind::For: return exec_for(n);
    case NodeKind::Set:
    case NodeKind::SetAttr:
    case NodeKind::SetBlock: exec_set(n); return Flow::Normal;
    case NodeKind::Macro: assign(n.sym, make_macro(n, 0)); return Flow::Normal;
    case NodeKind::CallBlock: {
      const Node& call = *n.kids[0];
      CallArgs args;
      collect_args(call, args, 1);
      const Value callee = eval(*call.kids[0]);
      const Value caller = make_macro(n, static_cast<std::int32_t>(frames_.size()) - 1);
      try {
        if (callee.kind == Kind::Callable && dynamic_cast<MacroObject*>(callee.obj.get())) {
          const auto& m = static_cast<const MacroObject&>(*callee.obj);
          const Value r = call_macro(*m.macro, args, &caller, m.parent_frame);
          out_.append(r.s);
        } else {
          throw EvalError("call blocks need a macro");
        }
      } catch (const EvalError& e) {
        throw LocatedError{e.what(), n.offset};
      }
      return Flow::Normal;
    }
    case NodeKind::FilterBlock: {
      const Value body = Value::owned(capture(*n.kids[1]));
      const Value r = eval_filter(*n.kids[0], &body);
      py::append_str(out_, r);
      return Flow::Normal;
    }
    case NodeKind::With: {
      std::vector<Value> values;
      for (const auto& k : n.kwargs) values.push_back(eval(*k));
      push_frame(static_cast<std::int32_t>(frames_.size()) - 1);
      for (std::size_t i = 0; i < n.syms.size(); ++i) assign(n.syms[i], std::move(values[i]));
      const Flow f = exec_body(*n.kids[0]);
      pop_frame();
      return f;
    }
    case NodeKind::Break: return Flow::Break;
    case NodeKind::Continue: return Flow::Continue;
    case NodeKind::Body: return exec_body(n);
    default: {
      // An expression in statement position cannot happen: the parser only produces statements here.
      throw LocatedError{"internal error: expression node in statement position", n.offset};
    }
  }
}

// `{{ a + b + c }}` (and `~`), the shape of nearly every chat template line: while each `+` joins
// two strings, the operands go straight to the output instead of building the sum in a temporary
// string first. Operands are evaluated left to right as Jinja does; at the first `+` that is not
// str + str the sum so far becomes a value and the rest is computed the ordinary way, so results
// and errors (with their positions) are those of evaluating the expression and then printing it.
void Interpreter::print_sum(const Node& sum) {
  constexpr std::size_t kMaxChain = 32;
  const Node* chain[kMaxChain];  // the + / ~ nodes, outermost first
  std::size_t k = 0;
  const Node* leaf = &sum;
  while (k < kMaxChain && leaf->kind == NodeKind::Binary &&
         (static_cast<BinOp>(leaf->op) == BinOp::Add || static_cast<BinOp>(leaf->op) == BinOp::Concat)) {
    chain[k++] = leaf;
    leaf = leaf->kids[0].get();
  }
  const std::size_t mark = out_.size();
  Value first = eval(*leaf);
  bool direct = true;  // the sum so far is out_[mark..] (or still `first`, before the first operator)
  Value acc;
  for (std::size_t i = k; i-- > 0;) {
    const Node& b = *chain[i];
    const auto op = static_cast<BinOp>(b.op);
    const Value rhs = eval(*b.kids[1]);
    const bool at_first = i + 1 == k;
    if (direct) {
      const bool left_is_str = !at_first || first.kind == Kind::String;
      if (op == BinOp::Concat || (left_is_str && rhs.kind == Kind::String)) {
        if (at_first) py::append_str(out_, first);
        py::append_str(out_, rhs);
        if (out_.size() > limits_.max_output_bytes) throw LocatedError{"output size limit exceeded", b.offset};
        continue;
      }
      if (at_first) {
        acc = std::move(first);
      } else {
        acc = Value::owned(out_.substr(mark));
        out_.resize(mark);
      }
      direct = false;
    }
    try {
      acc = binary_op(op, acc, rhs, *this);
    } catch (const EvalError& e) {
      throw LocatedError{e.what(), b.offset};
    }
  }
  if (!direct) py::append_str(out_, acc);
}

std::string Interpreter::capture(const Node& body) {
  const std::size_t mark = out_.size();
  exec_body(body);
  std::string s = out_.substr(mark);
  out_.resize(mark);
  return s;
}

void Interpreter::exec_set(const Node& n) {
  if (n.kind == NodeKind::SetAttr) {
    Value v = eval(*n.kids[0]);
    const Value* target = lookup(n.sym);
    if (!target || target->kind != Kind::Namespace)
      throw LocatedError{"can only set attributes on a namespace object", n.offset};
    static_cast<NamespaceObject&>(*target->obj).attrs.set(Value::borrowed(n.names[0]), std::move(v));
    return;
  }
  if (n.kind == NodeKind::SetBlock) {
    Value v = Value::owned(capture(*n.kids[0]));
    if (n.kids[1]) v = eval_filter(*n.kids[1], &v);
    assign(n.syms[0], std::move(v));
    return;
  }
  Value v = eval(*n.kids[0]);
  if (!n.flag) {
    assign(n.syms[0], std::move(v));
    return;
  }
  std::vector<Value> parts = iterate(v);
  if (parts.size() != n.names.size())
    throw LocatedError{parts.size() < n.names.size()
                           ? "not enough values to unpack (expected " + std::to_string(n.names.size()) + ", got " +
                                 std::to_string(parts.size()) + ")"
                           : "too many values to unpack (expected " + std::to_string(n.names.size()) + ")",
                       n.offset};
  for (std::size_t i = 0; i < parts.size(); ++i) assign(n.syms[i], std::move(parts[i]));
}

Interpreter::Flow Interpreter::exec_for(const Node& n) {
  const Value seq = eval(*n.kids[0]);
  std::vector<Value> owned_items;
  const std::vector<Value>* items;
  if (seq.kind == Kind::List) {
    items = &as_list(seq).items;
  } else {
    try {
      owned_items = iterate(seq);
    } catch (const EvalError& e) {
      throw LocatedError{e.what(), n.kids[0]->offset};
    }
    items = &owned_items;
  }
  const Node* filter = n.kids.size() > 3 ? n.kids[3].get() : nullptr;
  std::vector<Value> filtered;
  push_frame(static_cast<std::int32_t>(frames_.size()) - 1);
  const std::uint32_t frame_start = frames_.back().start;
  auto bind_targets = [&](const Value& item) {
    if (!n.flag) {
      vars_.emplace_back(n.syms[0], item);
      return;
    }
    std::vector<Value> parts;
    try {
      parts = iterate(item);
    } catch (const EvalError& e) {
      throw LocatedError{e.what(), n.offset};
    }
    if (parts.size() != n.names.size())
      throw LocatedError{parts.size() < n.names.size()
                             ? "not enough values to unpack (expected " + std::to_string(n.names.size()) +
                                   ", got " + std::to_string(parts.size()) + ")"
                             : "too many values to unpack (expected " + std::to_string(n.names.size()) + ")",
                         n.offset};
    for (std::size_t i = 0; i < parts.size(); ++i) vars_.emplace_back(n.syms[i], std::move(parts[i]));
  };
  if (filter) {
    // `for x in xs if cond`: loop.* counts only the items that pass.
    for (const auto& item : *items) {
      vars_.resize(frame_start);
      bind_targets(item);
      if (truthy(eval(*filter))) filtered.push_back(item);
    }
    items = &filtered;
  }
  try {
    count_iterations(items->size());
  } catch (const EvalError& e) {
    throw LocatedError{e.what(), n.offset};
  }
  Value loop;
  loop.kind = Kind::Loop;
  auto lo = std::make_shared<LoopObject>();
  lo->items = items;
  LoopObject* lp = lo.get();
  loop.obj = std::move(lo);
  for (std::size_t i = 0; i < items->size(); ++i) {
    vars_.resize(frame_start);
    bind_targets((*items)[i]);
    lp->index0 = i;
    vars_.emplace_back(Symbols::kLoop, loop);
    const Flow f = exec_body(*n.kids[1]);
    if (f == Flow::Break) break;
  }
  pop_frame();
  if (items->empty() && n.kids[2]) return exec_body(*n.kids[2]);
  return Flow::Normal;
}

// ---- macros -----------------------------------------------------------------------------------

Value Interpreter::make_macro(const Node& n, std::int32_t parent_frame) {
  auto m = std::make_shared<MacroObject>();
  m->macro = &n;
  m->parent_frame = parent_frame;
  m->caller = Value::none();
  Value v;
  v.kind = Kind::Callable;
  v.obj = std::move(m);
  return v;
}

Value Interpreter::call_macro(const Node& macro, CallArgs& args, const Value* caller, std::int32_t parent_frame) {
  if (++depth_ > limits_.max_call_depth) {
    --depth_;
    throw EvalError("maximum recursion depth exceeded");
  }
  const std::string macro_name = macro.kind == NodeKind::Macro ? macro.text : "caller";
  if (args.positional.size() > macro.names.size())
    throw EvalError("macro '" + macro_name + "' takes not more than " + std::to_string(macro.names.size()) +
                    " argument(s)");
  std::vector<Value> bound(macro.names.size());
  std::vector<bool> have(macro.names.size(), false);
  for (std::size_t i = 0; i < args.positional.size(); ++i) {
    bound[i] = args.positional[i];
    have[i] = true;
  }
  for (auto& [k, v] : args.keyword) {
    bool found = false;
    for (std::size_t i = 0; i < macro.names.size(); ++i)
      if (macro.names[i] == k) {
        bound[i] = v;
        have[i] = true;
        found = true;
      }
    if (!found) throw EvalError("macro '" + macro_name + "' takes no keyword argument '" + std::string(k) + "'");
  }
  const std::size_t mark = out_.size();
  push_frame(parent_frame);
  for (std::size_t i = 0; i < macro.names.size(); ++i) {
    if (!have[i]) {
      if (macro.kwargs[i]) bound[i] = eval(*macro.kwargs[i]);
      else bound[i] = Value::undefined(macro.names[i]);
    }
    assign(macro.syms[i], std::move(bound[i]));
  }
  if (caller) assign(Symbols::kCaller, *caller);
  const Node& body = macro.kind == NodeKind::Macro ? *macro.kids[0] : *macro.kids[1];
  exec_body(body);
  pop_frame();
  --depth_;
  std::string s = out_.substr(mark);
  out_.resize(mark);
  return Value::owned(std::move(s));
}

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
          (op == BinOp::Concat || (op == BinOp::Add && b.kind == Kind::String))) {
        auto& text = static_cast<StringObject&>(*a.obj).text;
        if (a.s.data() == text.data() && a.s.size() == text.size()) {
          if (op == BinOp::Concat) py::append_str(text, b);
          else text.append(b.s);
          check_size(text.size());
          a.s = text;
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
