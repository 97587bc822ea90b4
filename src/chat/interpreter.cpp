// The tree walker: per-render state (variables, frames, counters), the statements and macros.
// Expressions are in eval.cpp, Python's attribute/index/slice rules in py_access.cpp.
#include "chat/interpreter.hpp"

#include "chat/builtins.hpp"
#include "chat/pytext.hpp"
#include "chat/runtime_objects.hpp"

namespace overhead::chat {

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

void Interpreter::check_clock() {
  next_clock_check_ = steps_ + kClockStride;
  if (limits_.max_render_ms == 0) return;
  const auto now = std::chrono::steady_clock::now();
  if (clock_start_ == std::chrono::steady_clock::time_point{}) {
    clock_start_ = now;
    return;
  }
  if (now - clock_start_ > std::chrono::milliseconds(limits_.max_render_ms))
    throw EvalError("render time limit exceeded (" + std::to_string(limits_.max_render_ms) + " ms)");
}

void Interpreter::check_size(std::size_t bytes) {
  if (bytes > limits_.max_output_bytes)
    throw EvalError("output size limit exceeded (" + std::to_string(limits_.max_output_bytes) + " bytes)");
  steps_ += bytes >> 12;
  if (steps_ >= next_clock_check_) check_clock();
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
      // Markup + str escapes the str (binary_op): that sum leaves the direct path.
      const bool markup_sum = op == BinOp::Add && (rhs.markup || (at_first && first.markup));
      if (op == BinOp::Concat || (left_is_str && rhs.kind == Kind::String && !markup_sum)) {
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
      try {
        step();
      } catch (const EvalError& e) {
        throw LocatedError{e.what(), n.offset};
      }
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
    try {
      step();
    } catch (const EvalError& e) {
      throw LocatedError{e.what(), n.offset};
    }
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
  step();
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

}  // namespace overhead::chat
