#include "chat/symbols.hpp"

#include "chat/ast.hpp"

namespace overhead::chat {

Symbols::Symbols() {
  intern("loop");
  intern("caller");
}

SymbolId Symbols::intern(std::string_view name) {
  if (const auto it = ids_.find(name); it != ids_.end()) return it->second;
  const auto id = static_cast<SymbolId>(ids_.size());
  ids_.emplace(std::string(name), id);
  return id;
}

std::optional<SymbolId> Symbols::find(std::string_view name) const {
  const auto it = ids_.find(name);
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

void resolve_symbols(Node& n, Symbols& symbols) {
  switch (n.kind) {
    case NodeKind::Name:
    case NodeKind::SetAttr:  // text = the namespace variable (names = the attribute, not a variable)
    case NodeKind::Macro:    // text = the macro's name
      n.sym = symbols.intern(n.text);
      break;
    default: break;
  }
  switch (n.kind) {
    case NodeKind::For:
    case NodeKind::Set:
    case NodeKind::SetBlock:
    case NodeKind::With:
    case NodeKind::Macro:
    case NodeKind::CallBlock:
      n.syms.clear();
      for (const auto& name : n.names) n.syms.push_back(symbols.intern(name));
      break;
    default: break;
  }
  for (auto& k : n.kids)
    if (k) resolve_symbols(*k, symbols);
  for (auto& k : n.kwargs)
    if (k) resolve_symbols(*k, symbols);
  if (n.star_args) resolve_symbols(*n.star_args, symbols);
  if (n.star_kwargs) resolve_symbols(*n.star_kwargs, symbols);
}

}  // namespace overhead::chat
