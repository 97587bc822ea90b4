#include "tok/cache_format.hpp"

namespace overhead::tok {

namespace {
constexpr std::uint64_t kPrime1 = 0x9E3779B185EBCA87ULL;
constexpr std::uint64_t kPrime2 = 0xC2B2AE3D27D4EB4FULL;

std::uint64_t rotl(std::uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
std::uint64_t load64(const unsigned char* p) {
  std::uint64_t w;
  std::memcpy(&w, p, 8);
  return w;
}
std::uint64_t mix_round(std::uint64_t acc, std::uint64_t w) { return rotl(acc + w * kPrime2, 31) * kPrime1; }
}  // namespace

std::uint64_t cache_checksum(const unsigned char* data, std::size_t size) {
  // Four lanes keep four multiplies in flight; the tail and the length are folded in at the end.
  std::uint64_t lane[4] = {kPrime1 + kPrime2, kPrime2, 0, 0 - kPrime1};
  std::size_t i = 0;
  for (; i + 32 <= size; i += 32)
    for (int k = 0; k < 4; ++k) lane[k] = mix_round(lane[k], load64(data + i + 8 * k));
  std::uint64_t h = rotl(lane[0], 1) + rotl(lane[1], 7) + rotl(lane[2], 12) + rotl(lane[3], 18);
  for (; i + 8 <= size; i += 8) h = rotl(h ^ mix_round(0, load64(data + i)), 27) * kPrime1 + kPrime2;
  for (; i < size; ++i) h = rotl(h ^ (data[i] * kPrime1), 11) * kPrime2;
  h ^= size;
  h ^= h >> 33;
  h *= kPrime2;
  h ^= h >> 29;
  return h;
}

}  // namespace overhead::tok
