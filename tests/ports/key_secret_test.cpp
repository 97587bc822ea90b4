// API keys' secrets (ports/key_secret.hpp): their form, their randomness, and the hash a store
// holds, against SHA-256's published test vectors (FIPS 180-2, appendix B).
#include <gtest/gtest.h>

#include <cctype>
#include <set>
#include <string>

#include "ports/key_secret.hpp"

namespace overhead::ports {
namespace {

TEST(KeySecret, IsThePrefixThen43Base64UrlCharacters) {
  const std::string s = new_key_secret();
  ASSERT_EQ(s.size(), kKeySecretPrefix.size() + 43) << s;  // 32 bytes, no padding
  EXPECT_TRUE(s.starts_with(kKeySecretPrefix)) << s;
  for (const char c : s.substr(kKeySecretPrefix.size()))
    EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') << s;
}

TEST(KeySecret, NeverRepeats) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) EXPECT_TRUE(seen.insert(new_key_secret()).second);
}

TEST(KeySecret, HashIsLowercaseHexSha256) {
  EXPECT_EQ(key_secret_hash("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(key_secret_hash(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  const std::string s = new_key_secret();
  EXPECT_EQ(key_secret_hash(s), key_secret_hash(s));
  EXPECT_NE(key_secret_hash(s), key_secret_hash(s + "x"));
}

}  // namespace
}  // namespace overhead::ports
