#include "ports/key_secret.hpp"

#include <openssl/sha.h>

#include <array>

#include "util/hex.hpp"
#include "util/random_id.hpp"

namespace overhead::ports {

namespace {

// RFC 4648 section 5: URL- and filename-safe, so a secret needs no quoting in a header, a shell
// or an environment file.
constexpr char kBase64Url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string base64url(const unsigned char* bytes, std::size_t n) {
  std::string out;
  out.reserve((n * 4 + 2) / 3);
  std::size_t i = 0;
  for (; i + 3 <= n; i += 3) {
    const unsigned v = (unsigned{bytes[i]} << 16) | (unsigned{bytes[i + 1]} << 8) | bytes[i + 2];
    for (int shift = 18; shift >= 0; shift -= 6) out += kBase64Url[(v >> shift) & 63];
  }
  if (n - i == 1) {
    const unsigned v = unsigned{bytes[i]} << 16;
    out += kBase64Url[(v >> 18) & 63];
    out += kBase64Url[(v >> 12) & 63];
  } else if (n - i == 2) {
    const unsigned v = (unsigned{bytes[i]} << 16) | (unsigned{bytes[i + 1]} << 8);
    out += kBase64Url[(v >> 18) & 63];
    out += kBase64Url[(v >> 12) & 63];
    out += kBase64Url[(v >> 6) & 63];
  }
  return out;
}

}  // namespace

std::string new_key_secret() {
  std::array<unsigned char, 32> bytes{};
  util::secure_random_bytes(bytes.data(), bytes.size());
  return std::string(kKeySecretPrefix) + base64url(bytes.data(), bytes.size());
}

std::string key_secret_hash(std::string_view secret) {
  std::array<unsigned char, SHA256_DIGEST_LENGTH> digest{};
  SHA256(reinterpret_cast<const unsigned char*>(secret.data()), secret.size(), digest.data());
  return util::to_hex(digest.data(), digest.size());
}

}  // namespace overhead::ports
