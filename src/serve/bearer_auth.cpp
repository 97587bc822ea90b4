#include "serve/bearer_auth.hpp"

#include <cstdlib>
#include <fstream>
#include <stdexcept>

namespace overhead::serve {

std::string load_token(const std::string& file, const char* env_var) {
  std::string token;
  if (!file.empty()) {
    std::ifstream in(file);
    if (!in) throw std::runtime_error("--auth-token-file " + file + ": cannot be read");
    std::getline(in, token);
    while (!token.empty() && (token.back() == '\r' || token.back() == ' ' || token.back() == '\t')) token.pop_back();
    if (token.empty()) throw std::runtime_error("--auth-token-file " + file + ": the first line is empty");
    return token;
  }
  if (const char* v = std::getenv(env_var)) token = v;
  return token;
}

bool bearer_matches(std::string_view authorization, std::string_view token) {
  constexpr std::string_view kPrefix = "Bearer ";
  if (authorization.substr(0, kPrefix.size()) != kPrefix) return false;
  const std::string_view given = authorization.substr(kPrefix.size());
  // Walk the whole expected token whatever the given one holds, so timing shows neither the
  // matching prefix length nor (beyond the length check folded into the result) anything else.
  unsigned diff = given.size() == token.size() ? 0u : 1u;
  for (std::size_t i = 0; i < token.size(); ++i) {
    const unsigned char g = i < given.size() ? static_cast<unsigned char>(given[i]) : 0u;
    diff |= g ^ static_cast<unsigned char>(token[i]);
  }
  return diff == 0;
}

}  // namespace overhead::serve
