// An API key's secret and the one form of it a store holds.
//
// The secret is "sk-ovh-" followed by 32 bytes from the kernel's CSPRNG (getrandom(2)) in
// base64url without padding (43 characters): 256 bits nobody can guess, shown to its owner once.
// A store keeps only key_secret_hash(secret): the lowercase hex SHA-256 of the whole string.
//
// Why SHA-256 and not a slow password hash (bcrypt, scrypt, argon2): those exist to protect
// secrets people choose, whose few bits a stolen hash lets an attacker try one guess at a time;
// making each guess cost ~100 ms is what saves them. A 256-bit random secret has no guess worth
// trying: at 10^12 SHA-256 per second, 2^255 guesses take ~10^57 years, whatever the hash costs.
// A slow hash would buy nothing here and cost every request: the gateway hashes the bearer token
// on each call to find its key, which must take microseconds (SHA-256 of 50 bytes: < 1 µs), not
// the tens of milliseconds of bcrypt or argon2. GitHub's and Stripe's API tokens are checked the
// same way (random tokens, a fast hash, a lookup by the hash).
//
// Why no constant-time compare: the gateway does not compare the token with a stored secret
// byte by byte; it hashes the token and looks the hash up (a hash map). How long a lookup takes
// can tell at most how much of a *hash* matched, and learning a prefix of SHA-256(x) does not
// help find an x whose hash has it (that is SHA-256's preimage resistance), so timing leaks
// nothing an attacker can build on.
#pragma once

#include <string>
#include <string_view>

namespace overhead::ports {

// What every secret starts with, so a leaked one is recognised (secret scanners, logs).
inline constexpr std::string_view kKeySecretPrefix = "sk-ovh-";

// A new secret: kKeySecretPrefix + base64url(32 random bytes), no padding. Throws
// std::system_error when the kernel cannot supply random bytes (never a weaker source).
[[nodiscard]] std::string new_key_secret();

// The lowercase hex SHA-256 of `secret` (64 characters): what a key store holds and looks up.
[[nodiscard]] std::string key_secret_hash(std::string_view secret);

}  // namespace overhead::ports
