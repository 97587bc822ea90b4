// The compiled form of a template: a tree of nodes built once by the parser and only read while
// rendering, so one tree serves any number of threads. Filters and tests are resolved to function
// pointers at compile time (an unknown filter is a compile error, as in Jinja).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "chat/symbols.hpp"
#include "chat/value.hpp"

namespace overhead::chat {

class Interpreter;
using FilterFn = Value (*)(Interpreter&, const Value& operand, CallArgs& args);
using TestFn = bool (*)(Interpreter&, const Value& operand, CallArgs& args);

enum class NodeKind : std::uint8_t {
  // expressions
  Const, Name, GetAttr, GetItem, Slice, Call, Filter, Test, Neg, Pos, Not, Binary, Compare, And, Or,
  CondExpr, List, Tuple, Dict,
  // statements
  Data, Print, If, For, Set, SetAttr, SetBlock, Macro, CallBlock, FilterBlock, With, Break, Continue,
  Body,
};

enum class BinOp : std::uint8_t { Add, Sub, Mul, Div, FloorDiv, Mod, Pow, Concat };
enum class CmpOp : std::uint8_t { Eq, Ne, Lt, Le, Gt, Ge, In, NotIn };

struct Node;
using NodePtr = std::unique_ptr<Node>;

// One node type with a kind tag keeps the evaluator a single switch. Field use per kind:
//   Const: constant (strings borrow `text`)      Name: text
//   GetAttr: kids{obj}, text=attribute           GetItem: kids{obj, index}
//   Slice: kids{obj, start?, stop?, step?}
//   Call / Filter / Test: kids{callee or operand (null in filter blocks), positional...},
//        names = keyword names, kwargs = keyword values; Filter/Test: text = name, filter/test set;
//        Test: flag = negated
//   Neg/Pos/Not: kids{x}   Binary: op=BinOp, kids{a, b}   And/Or: kids{a, b}
//   Compare: kids{first, rest...}, ops = CmpOp per rest    CondExpr: kids{test, yes, no?}
//   List/Tuple: kids   Dict: kids{k0, v0, k1, v1, ...}
//   Data: text   Print: kids{expr}   If: kids{cond, body, else?}
//   For: names = targets, kids{iter, body, else?, filter?}, flag = target is a tuple
//   Set: names = targets, kids{value}, flag = target is a tuple
//   SetAttr: text = namespace variable, names{attribute}, kids{value}
//   SetBlock: names{target}, kids{body, filter chain?}
//   Macro: text = name, names = params, kwargs = defaults (null = required), kids{body}
//   CallBlock: kids{call, body}, names = caller params, kwargs = defaults
//   FilterBlock: kids{filter chain, body}   With: names, kwargs = values, kids{body}   Body: kids
struct Node {
  NodeKind kind;
  std::uint8_t op = 0;
  bool flag = false;
  std::uint32_t offset = 0;  // byte offset in the source, for error positions
  std::string text;
  Value constant;
  std::vector<NodePtr> kids;
  std::vector<std::string> names;
  std::vector<NodePtr> kwargs;
  std::vector<CmpOp> ops;
  NodePtr star_args;    // Call/Filter/Test: f(*xs)
  NodePtr star_kwargs;  // Call/Filter/Test: f(**d)
  FilterFn filter = nullptr;
  TestFn test = nullptr;
  SymbolId sym = 0;            // Name, SetAttr, Macro: the variable `text` names (resolve_symbols)
  std::vector<SymbolId> syms;  // For, Set, SetBlock, With, Macro, CallBlock: ids of `names`

  Node(NodeKind k, std::uint32_t off) : kind(k), offset(off) {}
};

}  // namespace overhead::chat
