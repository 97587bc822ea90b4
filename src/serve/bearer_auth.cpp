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
  // RFC 7235 2.1: the scheme is case-insensitive ("bearer", "BEARER"), and one or more spaces part
  // it from the credentials.
  constexpr std::string_view kScheme = "bearer";
  if (authorization.size() <= kScheme.size()) return false;
  for (std::size_t i = 0; i < kScheme.size(); ++i) {
    const char c = authorization[i];
    if ((c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c) != kScheme[i]) return false;
  }
  std::size_t at = kScheme.size();
  if (authorization[at] != ' ') return false;
  while (at < authorization.size() && authorization[at] == ' ') ++at;
  const std::string_view given = authorization.substr(at);
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
