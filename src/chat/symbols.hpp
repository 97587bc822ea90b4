// Variable names resolved to small integers once, at compile time. The interpreter then finds a
// variable by comparing integers instead of strings: name lookup was a quarter of a render's
// instructions. Every name a template can read or bind appears in its tree, so a context variable
// whose name the template never mentions has no id and need not be defined at all.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace overhead::chat {

struct Node;
using SymbolId = std::uint32_t;

class Symbols {
 public:
  static constexpr SymbolId kLoop = 0;    // the `loop` variable of a for statement
  static constexpr SymbolId kCaller = 1;  // `caller` inside a macro called from a call block

  Symbols();
  SymbolId intern(std::string_view name);
  std::optional<SymbolId> find(std::string_view name) const;

 private:
  // Transparent, so find() takes a string_view without building a string.
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, SymbolId, Hash, std::equal_to<>> ids_;
};

// Fills Node::sym / Node::syms for every node that reads or binds a variable.
void resolve_symbols(Node& root, Symbols& symbols);

}  // namespace overhead::chat
