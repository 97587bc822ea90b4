// The engine's own runtime objects that templates see but cannot build from data: the `loop`
// variable, namespace() objects and macros. Shared by the tree walker, the attribute lookup and
// the call path; private to src/chat.
#pragma once

#include <cstdint>
#include <vector>

#include "chat/ast.hpp"
#include "chat/value.hpp"

namespace overhead::chat {

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

}  // namespace overhead::chat
