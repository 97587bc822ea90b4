// Builds the node tree from tokens with Jinja2's grammar and operator precedence.
#pragma once

#include <string_view>
#include <vector>

#include "chat/ast.hpp"
#include "chat/lexer.hpp"

namespace overhead::chat {

// Throws LexError (message + byte offset) on a syntax error, an unknown tag, filter or test.
NodePtr parse_template(const std::vector<Token>& tokens);

}  // namespace overhead::chat
