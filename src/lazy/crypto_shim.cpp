// Stand-ins for the few libcrypto (OpenSSL) functions the modules call (SHA-256 for the tokenizer
// cache key, HMAC-SHA256 for AWS signatures, MD5 of uploads), linked in place of libcrypto (see
// src/lazy/CMakeLists.txt): each one calls the real function, looked up in libcrypto.so.3 on its
// first call, so a command that never signs a request nor builds a tokenizer cache never loads
// libcrypto (its relocations were a third of the page faults of every start). A libcrypto
// function missing here is a link error: add its stand-in below.
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include "lazy/lazy_library.hpp"

namespace {
constexpr const char* kSoname = "libcrypto.so.3";
constexpr const char* kPackage = "libssl3 (OpenSSL's libcrypto)";
}  // namespace

// The real function of this name, resolved once.
#define OVERHEAD_REAL(name) \
  static const auto real = overhead::lazy::function<decltype(&::name)>(kSoname, kPackage, #name)

extern "C" {

const EVP_MD* EVP_sha256(void) { OVERHEAD_REAL(EVP_sha256); return real(); }
const EVP_MD* EVP_md5(void) { OVERHEAD_REAL(EVP_md5); return real(); }
int EVP_Digest(const void* data, size_t count, unsigned char* md, unsigned int* size, const EVP_MD* type, ENGINE* impl) {
  OVERHEAD_REAL(EVP_Digest);
  return real(data, count, md, size, type, impl);
}
EVP_MD_CTX* EVP_MD_CTX_new(void) { OVERHEAD_REAL(EVP_MD_CTX_new); return real(); }
void EVP_MD_CTX_free(EVP_MD_CTX* ctx) {
  OVERHEAD_REAL(EVP_MD_CTX_free);
  real(ctx);
}
int EVP_DigestInit_ex(EVP_MD_CTX* ctx, const EVP_MD* type, ENGINE* impl) {
  OVERHEAD_REAL(EVP_DigestInit_ex);
  return real(ctx, type, impl);
}
int EVP_DigestUpdate(EVP_MD_CTX* ctx, const void* data, size_t count) {
  OVERHEAD_REAL(EVP_DigestUpdate);
  return real(ctx, data, count);
}
int EVP_DigestFinal_ex(EVP_MD_CTX* ctx, unsigned char* md, unsigned int* size) {
  OVERHEAD_REAL(EVP_DigestFinal_ex);
  return real(ctx, md, size);
}
unsigned char* SHA256(const unsigned char* data, size_t n, unsigned char* md) {
  OVERHEAD_REAL(SHA256);
  return real(data, n, md);
}
unsigned char* HMAC(const EVP_MD* evp_md, const void* key, int key_len, const unsigned char* data, size_t data_len,
                    unsigned char* md, unsigned int* md_len) {
  OVERHEAD_REAL(HMAC);
  return real(evp_md, key, key_len, data, data_len, md, md_len);
}

}  // extern "C"
