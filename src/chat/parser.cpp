#include "chat/parser.hpp"

#include <initializer_list>
#include <utility>

#include "chat/builtins.hpp"

namespace overhead::chat {

namespace {

std::string describe(const Token& t) {
  switch (t.type) {
    case Tok::Data: return "template data / text";
    case Tok::VarBegin: return "begin of print statement";
    case Tok::VarEnd: return "end of print statement";
    case Tok::BlockBegin: return "begin of statement block";
    case Tok::BlockEnd: return "end of statement block";
    case Tok::Eof: return "end of template";
    case Tok::String: return "string";
    case Tok::Int: return "integer";
    case Tok::Float: return "float";
    default: return t.value;
  }
}

class Parser {
 public:
  explicit Parser(const std::vector<Token>& tokens) : toks_(tokens) {}

  NodePtr parse_all() {
    auto body = parse_body({});
    if (cur().type != Tok::Eof) fail("unexpected '" + describe(cur()) + "'");
    return body;
  }

 private:
  const std::vector<Token>& toks_;
  std::size_t i_ = 0;
  // Names of the blocks we are inside, to word "unexpected end of template" errors.
  std::vector<std::string> stack_;

  const Token& cur() const { return toks_[i_]; }
  const Token& peek(std::size_t k = 1) const { return toks_[std::min(i_ + k, toks_.size() - 1)]; }
  void advance() {
    if (toks_[i_].type != Tok::Eof) ++i_;
  }
  [[noreturn]] void fail(std::string msg) const { throw LexError{std::move(msg), cur().offset}; }
  [[noreturn]] void fail_at(std::string msg, std::uint32_t off) const { throw LexError{std::move(msg), off}; }

  bool is_op(std::string_view op) const { return cur().type == Tok::Op && cur().value == op; }
  bool is_name(std::string_view n) const { return cur().type == Tok::Name && cur().value == n; }
  bool skip_op(std::string_view op) {
    if (!is_op(op)) return false;
    advance();
    return true;
  }
  bool skip_name(std::string_view n) {
    if (!is_name(n)) return false;
    advance();
    return true;
  }
  void expect_op(std::string_view op) {
    if (!skip_op(op)) fail("expected token '" + std::string(op) + "', got '" + describe(cur()) + "'");
  }
  void expect_block_end() {
    if (cur().type != Tok::BlockEnd) fail("expected token 'end of statement block', got '" + describe(cur()) + "'");
    advance();
  }
  std::string expect_identifier() {
    if (cur().type != Tok::Name) fail("expected token 'name', got '" + describe(cur()) + "'");
    std::string n = cur().value;
    advance();
    return n;
  }

  NodePtr node(NodeKind k) const { return std::make_unique<Node>(k, cur().offset); }
  static NodePtr node_at(NodeKind k, std::uint32_t off) { return std::make_unique<Node>(k, off); }

  // ---- statements -------------------------------------------------------------------------

  // Parses until a block tag whose name is in `end_tags` (left unconsumed: the caller reads it).
  NodePtr parse_body(std::initializer_list<std::string_view> end_tags) {
    DepthGuard guard(*this);
    auto body = node(NodeKind::Body);
    for (;;) {
      const Token& t = cur();
      if (t.type == Tok::Eof) {
        if (end_tags.size() == 0) return body;
        std::string expected;
        for (auto e : end_tags) expected += (expected.empty() ? "'" : " or '") + std::string(e) + "'";
        fail("Unexpected end of template. Jinja was looking for the following tags: " + expected +
             ". The innermost block that needs to be closed is '" + stack_.back() + "'.");
      }
      if (t.type == Tok::Data) {
        auto d = node(NodeKind::Data);
        d->text = t.value;
        body->kids.push_back(std::move(d));
        advance();
      } else if (t.type == Tok::VarBegin) {
        advance();
        auto p = node(NodeKind::Print);
        p->kids.push_back(parse_tuple(true));
        if (cur().type != Tok::VarEnd) fail("expected token 'end of print statement', got '" + describe(cur()) + "'");
        advance();
        body->kids.push_back(std::move(p));
      } else if (t.type == Tok::BlockBegin) {
        const Token& tag = peek();
        if (tag.type == Tok::Name) {
          for (auto e : end_tags)
            if (tag.value == e) {
              advance();  // the caller sees the tag name as the current token
              return body;
            }
        }
        advance();
        body->kids.push_back(parse_statement());
      } else {
        fail("unexpected '" + describe(t) + "'");
      }
    }
  }

  NodePtr parse_statement() {
    if (cur().type != Tok::Name) fail("tag name expected");
    const std::string tag = cur().value;
    if (tag == "if") return parse_if();
    if (tag == "for") return parse_for();
    if (tag == "set") return parse_set();
    if (tag == "macro") return parse_macro();
    if (tag == "call") return parse_call_block();
    if (tag == "filter") return parse_filter_block();
    if (tag == "with") return parse_with();
    if (tag == "generation") return parse_generation();
    if (tag == "break" || tag == "continue") {
      // Jinja2 compiles these to Python's break/continue, so outside a loop body they fail to compile.
      if (loop_bodies_ == 0) fail(tag == "break" ? "'break' outside loop" : "'continue' not properly in loop");
      auto n = node(tag == "break" ? NodeKind::Break : NodeKind::Continue);
      advance();
      expect_block_end();
      return n;
    }
    static constexpr std::string_view known_end[] = {"endif", "endfor", "endset", "endmacro", "endcall",
                                                      "endfilter", "endwith", "elif", "else", "endgeneration"};
    for (auto e : known_end)
      if (tag == e) {
        if (stack_.empty())
          fail("Encountered unknown tag '" + tag + "'.");
        fail("Encountered unknown tag '" + tag + "'. Jinja was looking for the following tags: the end of '" +
             stack_.back() + "'. The innermost block that needs to be closed is '" + stack_.back() + "'.");
      }
    fail("Encountered unknown tag '" + tag + "'.");
  }

  NodePtr parse_if() {
    auto n = node(NodeKind::If);
    advance();
    n->kids.push_back(parse_tuple(true, false));
    expect_block_end();
    stack_.push_back("if");
    n->kids.push_back(parse_body({"elif", "else", "endif"}));
    Node* tail = n.get();
    for (;;) {
      if (is_name("elif")) {
        auto e = node(NodeKind::If);
        advance();
        e->kids.push_back(parse_tuple(true, false));
        expect_block_end();
        e->kids.push_back(parse_body({"elif", "else", "endif"}));
        Node* next = e.get();
        tail->kids.push_back(std::move(e));
        tail = next;
        continue;
      }
      if (skip_name("else")) {
        expect_block_end();
        tail->kids.push_back(parse_body({"endif"}));
      }
      break;
    }
    if (!skip_name("endif")) fail("expected 'endif'");
    expect_block_end();
    stack_.pop_back();
    return n;
  }

  // `a` or `a, b` or `(a, b)`; returns the names and whether it was a tuple.
  bool parse_targets(std::vector<std::string>& names) {
    bool paren = skip_op("(");
    names.push_back(expect_identifier());
    bool tuple = paren;
    while (skip_op(",")) {
      tuple = true;
      if (cur().type != Tok::Name) break;
      names.push_back(expect_identifier());
    }
    if (paren) expect_op(")");
    return tuple;
  }

  NodePtr parse_for() {
    auto n = node(NodeKind::For);
    advance();
    n->flag = parse_targets(n->names);
    if (!skip_name("in")) fail("expected token 'in', got '" + describe(cur()) + "'");
    n->kids.push_back(parse_tuple(false, false, true));
    NodePtr filter;
    if (skip_name("if")) filter = parse_expression(true);
    if (skip_name("recursive")) fail("recursive loops are not supported");
    expect_block_end();
    stack_.push_back("for");
    ++loop_bodies_;
    n->kids.push_back(parse_body({"endfor", "else"}));
    --loop_bodies_;
    NodePtr else_body;
    if (skip_name("else")) {
      expect_block_end();
      else_body = parse_body({"endfor"});
    }
    if (!skip_name("endfor")) fail("expected 'endfor'");
    expect_block_end();
    stack_.pop_back();
    n->kids.push_back(std::move(else_body));
    n->kids.push_back(std::move(filter));
    return n;
  }

  NodePtr parse_set() {
    const std::uint32_t off = cur().offset;
    advance();
    // namespace attribute: set ns.attr = value
    if (cur().type == Tok::Name && peek().type == Tok::Op && peek().value == ".") {
      auto n = node_at(NodeKind::SetAttr, off);
      n->text = expect_identifier();
      advance();
      n->names.push_back(expect_identifier());
      expect_op("=");
      n->kids.push_back(parse_tuple(true));
      expect_block_end();
      return n;
    }
    std::vector<std::string> names;
    const bool tuple = parse_targets(names);
    if (skip_op("=")) {
      auto n = node_at(NodeKind::Set, off);
      n->names = std::move(names);
      n->flag = tuple;
      n->kids.push_back(parse_tuple(true));
      expect_block_end();
      return n;
    }
    auto n = node_at(NodeKind::SetBlock, off);
    if (tuple) fail("expected token '=', got '" + describe(cur()) + "'");
    n->names = std::move(names);
    NodePtr filters;
    while (is_op("|")) filters = parse_filter(std::move(filters), true);
    expect_block_end();
    stack_.push_back("set");
    n->kids.push_back(parse_body({"endset"}));
    advance();
    expect_block_end();
    stack_.pop_back();
    n->kids.push_back(std::move(filters));
    return n;
  }

  void parse_signature(Node& n) {
    expect_op("(");
    while (!is_op(")")) {
      if (!n.names.empty()) expect_op(",");
      n.names.push_back(expect_identifier());
      if (skip_op("=")) n.kwargs.push_back(parse_expression(true));
      else n.kwargs.push_back(nullptr);
    }
    advance();
  }

  NodePtr parse_macro() {
    auto n = node(NodeKind::Macro);
    advance();
    n->text = expect_identifier();
    parse_signature(*n);
    expect_block_end();
    stack_.push_back("macro");
    const int outer_loops = std::exchange(loop_bodies_, 0);  // a macro body is a function of its own
    n->kids.push_back(parse_body({"endmacro"}));
    loop_bodies_ = outer_loops;
    advance();
    expect_block_end();
    stack_.pop_back();
    return n;
  }

  NodePtr parse_call_block() {
    auto n = node(NodeKind::CallBlock);
    advance();
    if (is_op("(")) parse_signature(*n);
    auto call = parse_expression(true);
    if (call->kind != NodeKind::Call) fail_at("expected call", call->offset);
    n->kids.push_back(std::move(call));
    expect_block_end();
    stack_.push_back("call");
    const int outer_loops = std::exchange(loop_bodies_, 0);  // so is the body of a call block
    n->kids.push_back(parse_body({"endcall"}));
    loop_bodies_ = outer_loops;
    advance();
    expect_block_end();
    stack_.pop_back();
    return n;
  }

  NodePtr parse_filter_block() {
    auto n = node(NodeKind::FilterBlock);
    advance();
    NodePtr filters = parse_filter(nullptr, false);
    while (is_op("|")) filters = parse_filter(std::move(filters), true);
    expect_block_end();
    n->kids.push_back(std::move(filters));
    stack_.push_back("filter");
    n->kids.push_back(parse_body({"endfilter"}));
    advance();
    expect_block_end();
    stack_.pop_back();
    return n;
  }

  NodePtr parse_with() {
    auto n = node(NodeKind::With);
    advance();
    while (cur().type != Tok::BlockEnd) {
      if (!n->names.empty()) expect_op(",");
      n->names.push_back(expect_identifier());
      expect_op("=");
      n->kwargs.push_back(parse_expression(true));
    }
    expect_block_end();
    stack_.push_back("with");
    n->kids.push_back(parse_body({"endwith"}));
    advance();
    expect_block_end();
    stack_.pop_back();
    return n;
  }

  // transformers' AssistantTracker extension: {% generation %}...{% endgeneration %} renders its body.
  NodePtr parse_generation() {
    advance();
    expect_block_end();
    stack_.push_back("generation");
    auto body = parse_body({"endgeneration"});
    advance();
    expect_block_end();
    stack_.pop_back();
    return body;
  }

  // ---- expressions ------------------------------------------------------------------------

  // Comma-separated expressions; more than one (or a trailing comma) makes a tuple.
  NodePtr parse_tuple(bool with_condexpr, bool allow_tuple = true, bool for_iter = false) {
    const std::uint32_t off = cur().offset;
    auto first = parse_expression(with_condexpr);
    if (!allow_tuple || !is_op(",")) return first;
    auto t = node_at(NodeKind::Tuple, off);
    t->kids.push_back(std::move(first));
    while (skip_op(",")) {
      if (tuple_ends() || (for_iter && (is_name("if") || is_name("recursive")))) break;
      t->kids.push_back(parse_expression(with_condexpr));
    }
    return t;
  }
  bool tuple_ends() const {
    const Tok t = cur().type;
    return t == Tok::VarEnd || t == Tok::BlockEnd || t == Tok::Eof || is_op(")") || is_op("]") || is_op("}");
  }

  // Bounds the recursion of both the parser and the evaluator (which walks the same tree).
  struct DepthGuard {
    Parser& p;
    explicit DepthGuard(Parser& parser) : p(parser) {
      if (++p.depth_ > kMaxDepth) p.fail("template nesting too deep (more than " + std::to_string(kMaxDepth) + " levels)");
    }
    ~DepthGuard() { --p.depth_; }
  };
  static constexpr int kMaxDepth = 200;
  int depth_ = 0;
  int loop_bodies_ = 0;  // for-loop bodies around the current position, inside the innermost macro

  NodePtr parse_expression(bool with_condexpr) {
    DepthGuard guard(*this);
    if (!with_condexpr) return parse_or();
    auto expr = parse_or();
    while (is_name("if")) {
      auto c = node(NodeKind::CondExpr);
      advance();
      c->kids.push_back(parse_or());  // test
      c->kids.push_back(std::move(expr));
      if (skip_name("else")) c->kids.push_back(parse_expression(true));
      else c->kids.push_back(nullptr);
      expr = std::move(c);
    }
    return expr;
  }

  NodePtr binary(NodeKind k, NodePtr a, NodePtr b, std::uint32_t off, std::uint8_t op = 0) {
    auto n = node_at(k, off);
    n->op = op;
    n->kids.push_back(std::move(a));
    n->kids.push_back(std::move(b));
    return n;
  }

  NodePtr parse_or() {
    auto l = parse_and();
    while (is_name("or")) {
      const auto off = cur().offset;
      advance();
      l = binary(NodeKind::Or, std::move(l), parse_and(), off);
    }
    return l;
  }
  NodePtr parse_and() {
    auto l = parse_not();
    while (is_name("and")) {
      const auto off = cur().offset;
      advance();
      l = binary(NodeKind::And, std::move(l), parse_not(), off);
    }
    return l;
  }
  NodePtr parse_not() {
    if (is_name("not")) {
      auto n = node(NodeKind::Not);
      advance();
      n->kids.push_back(parse_not());
      return n;
    }
    return parse_compare();
  }
  NodePtr parse_compare() {
    const auto off = cur().offset;
    auto first = parse_math1();
    NodePtr cmp;
    for (;;) {
      CmpOp op;
      if (is_op("==")) op = CmpOp::Eq;
      else if (is_op("!=")) op = CmpOp::Ne;
      else if (is_op("<")) op = CmpOp::Lt;
      else if (is_op("<=")) op = CmpOp::Le;
      else if (is_op(">")) op = CmpOp::Gt;
      else if (is_op(">=")) op = CmpOp::Ge;
      else if (is_name("in")) op = CmpOp::In;
      else if (is_name("not") && peek().type == Tok::Name && peek().value == "in") {
        advance();
        op = CmpOp::NotIn;
      } else {
        break;
      }
      advance();
      if (!cmp) {
        cmp = node_at(NodeKind::Compare, off);
        cmp->kids.push_back(std::move(first));
      }
      cmp->ops.push_back(op);
      cmp->kids.push_back(parse_math1());
    }
    return cmp ? std::move(cmp) : std::move(first);
  }
  NodePtr parse_math1() {
    auto l = parse_concat();
    while (is_op("+") || is_op("-")) {
      const auto op = cur().value == "+" ? BinOp::Add : BinOp::Sub;
      const auto off = cur().offset;
      advance();
      l = binary(NodeKind::Binary, std::move(l), parse_concat(), off, static_cast<std::uint8_t>(op));
    }
    return l;
  }
  NodePtr parse_concat() {
    auto l = parse_math2();
    while (is_op("~")) {
      const auto off = cur().offset;
      advance();
      l = binary(NodeKind::Binary, std::move(l), parse_math2(), off, static_cast<std::uint8_t>(BinOp::Concat));
    }
    return l;
  }
  NodePtr parse_math2() {
    auto l = parse_pow();
    for (;;) {
      BinOp op;
      if (is_op("*")) op = BinOp::Mul;
      else if (is_op("/")) op = BinOp::Div;
      else if (is_op("//")) op = BinOp::FloorDiv;
      else if (is_op("%")) op = BinOp::Mod;
      else break;
      const auto off = cur().offset;
      advance();
      l = binary(NodeKind::Binary, std::move(l), parse_pow(), off, static_cast<std::uint8_t>(op));
    }
    return l;
  }
  NodePtr parse_pow() {
    auto l = parse_unary(true);
    while (is_op("**")) {
      const auto off = cur().offset;
      advance();
      l = binary(NodeKind::Binary, std::move(l), parse_unary(true), off, static_cast<std::uint8_t>(BinOp::Pow));
    }
    return l;
  }
  NodePtr parse_unary(bool with_filter) {
    DepthGuard guard(*this);
    NodePtr n;
    if (is_op("-") || is_op("+")) {
      n = node(is_op("-") ? NodeKind::Neg : NodeKind::Pos);
      advance();
      n->kids.push_back(parse_unary(false));
    } else {
      n = parse_postfix(parse_primary());
    }
    if (with_filter) n = parse_filter_expr(std::move(n));
    return n;
  }

  NodePtr parse_primary() {
    const Token& t = cur();
    auto n = node(NodeKind::Const);
    switch (t.type) {
      case Tok::Name:
        if (t.value == "true" || t.value == "True") n->constant = Value::boolean(true);
        else if (t.value == "false" || t.value == "False") n->constant = Value::boolean(false);
        else if (t.value == "none" || t.value == "None") n->constant = Value::none();
        else {
          n->kind = NodeKind::Name;
          n->text = t.value;
        }
        advance();
        return n;
      case Tok::String: {
        std::string s;
        while (cur().type == Tok::String) {  // adjacent literals concatenate
          s += cur().value;
          advance();
        }
        n->text = std::move(s);
        n->constant = Value::borrowed(n->text);
        return n;
      }
      case Tok::Int:
        n->constant = Value::integer(t.int_value);
        advance();
        return n;
      case Tok::Float:
        n->constant = Value::floating(t.float_value);
        advance();
        return n;
      case Tok::Op:
        if (t.value == "(") {
          advance();
          if (skip_op(")")) {
            n->kind = NodeKind::Tuple;
            return n;
          }
          auto inner = parse_tuple(true);
          // "(a,)" is a tuple; "(a)" is just a.
          expect_op(")");
          return inner;
        }
        if (t.value == "[") {
          n->kind = NodeKind::List;
          advance();
          while (!is_op("]")) {
            if (!n->kids.empty()) {
              expect_op(",");
              if (is_op("]")) break;
            }
            n->kids.push_back(parse_expression(true));
          }
          advance();
          return n;
        }
        if (t.value == "{") {
          n->kind = NodeKind::Dict;
          advance();
          while (!is_op("}")) {
            if (!n->kids.empty()) {
              expect_op(",");
              if (is_op("}")) break;
            }
            n->kids.push_back(parse_expression(true));
            expect_op(":");
            n->kids.push_back(parse_expression(true));
          }
          advance();
          return n;
        }
        break;
      default:
        break;
    }
    fail("unexpected '" + describe(t) + "'");
  }

  NodePtr parse_postfix(NodePtr n) {
    for (;;) {
      if (is_op(".")) {
        const auto off = cur().offset;
        advance();
        if (cur().type == Tok::Name) {
          auto g = node_at(NodeKind::GetAttr, off);
          g->text = cur().value;
          advance();
          g->kids.push_back(std::move(n));
          n = std::move(g);
        } else if (cur().type == Tok::Int) {
          auto g = node_at(NodeKind::GetItem, off);
          auto idx = node(NodeKind::Const);
          idx->constant = Value::integer(cur().int_value);
          advance();
          g->kids.push_back(std::move(n));
          g->kids.push_back(std::move(idx));
          n = std::move(g);
        } else {
          fail("expected name or number");
        }
      } else if (is_op("[")) {
        n = parse_subscript(std::move(n));
      } else if (is_op("(")) {
        n = parse_call(std::move(n));
      } else {
        return n;
      }
    }
  }

  NodePtr parse_subscript(NodePtr obj) {
    const auto off = cur().offset;
    advance();
    NodePtr parts[3];
    int colons = 0;
    bool any = false;
    while (!is_op("]")) {
      if (skip_op(":")) {
        if (++colons > 2) fail("unexpected ':'");
        continue;
      }
      if (parts[colons]) fail("expected token ']', got '" + describe(cur()) + "'");
      parts[colons] = parse_expression(true);
      any = true;
      if (colons == 0 && is_op(",")) fail("tuple subscripts are not supported");
    }
    advance();
    if (colons == 0) {
      if (!any) fail("expected an expression in subscript");
      auto g = node_at(NodeKind::GetItem, off);
      g->kids.push_back(std::move(obj));
      g->kids.push_back(std::move(parts[0]));
      return g;
    }
    auto s = node_at(NodeKind::Slice, off);
    s->kids.push_back(std::move(obj));
    for (auto& p : parts) s->kids.push_back(std::move(p));
    return s;
  }

  void parse_args(Node& n) {
    expect_op("(");
    bool first = true;
    while (!is_op(")")) {
      if (!first) {
        expect_op(",");
        if (is_op(")")) break;
      }
      first = false;
      if (skip_op("*")) {
        n.star_args = parse_expression(true);
        continue;
      }
      if (skip_op("**")) {
        n.star_kwargs = parse_expression(true);
        continue;
      }
      if (cur().type == Tok::Name && peek().type == Tok::Op && peek().value == "=") {
        n.names.push_back(cur().value);
        advance();
        advance();
        n.kwargs.push_back(parse_expression(true));
      } else {
        if (!n.names.empty()) fail("positional argument follows keyword argument");
        n.kids.push_back(parse_expression(true));
      }
    }
    advance();
  }

  NodePtr parse_call(NodePtr callee) {
    auto c = node(NodeKind::Call);
    c->offset = callee->offset;  // errors point at the start of the call
    c->kids.push_back(std::move(callee));
    parse_args(*c);
    return c;
  }

  NodePtr parse_filter(NodePtr operand, bool expect_pipe) {
    if (expect_pipe) expect_op("|");
    auto f = node(NodeKind::Filter);
    std::string name = expect_identifier();
    while (is_op(".")) {
      advance();
      name += "." + expect_identifier();
    }
    f->filter = find_filter(name);
    if (!f->filter) fail_at("No filter named '" + name + "'.", f->offset);
    f->text = std::move(name);
    f->kids.push_back(std::move(operand));
    if (is_op("(")) parse_args(*f);
    return f;
  }

  NodePtr parse_test(NodePtr operand) {
    auto t = node(NodeKind::Test);
    advance();  // 'is'
    if (skip_name("not")) t->flag = true;
    std::string name = expect_identifier();
    t->test = find_test(name);
    if (!t->test) fail_at("No test named '" + name + "'.", t->offset);
    t->text = std::move(name);
    t->kids.push_back(std::move(operand));
    if (is_op("(")) {
      parse_args(*t);
    } else if ((cur().type == Tok::Name || cur().type == Tok::String || cur().type == Tok::Int ||
                cur().type == Tok::Float || is_op("(") || is_op("[") || is_op("{")) &&
               !is_name("else") && !is_name("or") && !is_name("and")) {
      if (is_name("is")) fail("You cannot chain multiple tests with is");
      t->kids.push_back(parse_postfix(parse_primary()));
    }
    return t;
  }

  NodePtr parse_filter_expr(NodePtr n) {
    for (;;) {
      if (is_op("|")) n = parse_filter(std::move(n), true);
      else if (is_name("is")) n = parse_test(std::move(n));
      else if (is_op("(")) n = parse_call(std::move(n));
      else return n;
    }
  }
};

}  // namespace

NodePtr parse_template(const std::vector<Token>& tokens) { return Parser(tokens).parse_all(); }

}  // namespace overhead::chat
