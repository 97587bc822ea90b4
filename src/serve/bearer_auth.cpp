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

}  // namespace overhead::serve
