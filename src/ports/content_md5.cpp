// ContentMd5 over libcrypto's EVP digest (loaded at its first use, src/lazy).
#include "ports/content_md5.hpp"

#include <openssl/evp.h>

#include <array>
#include <stdexcept>

#include "util/hex.hpp"

namespace overhead::ports {

struct ContentMd5::State {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  ~State() { EVP_MD_CTX_free(ctx); }
};

ContentMd5::ContentMd5() : state_(std::make_unique<State>()) {
  if (!state_->ctx || EVP_DigestInit_ex(state_->ctx, EVP_md5(), nullptr) != 1) throw std::runtime_error("MD5 is not available in libcrypto");
}

ContentMd5::~ContentMd5() = default;

void ContentMd5::update(std::string_view bytes) { EVP_DigestUpdate(state_->ctx, bytes.data(), bytes.size()); }

std::string ContentMd5::hex() {
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned int n = 0;
  EVP_DigestFinal_ex(state_->ctx, md.data(), &n);
  return util::to_hex(md.data(), n);
}

}  // namespace overhead::ports
