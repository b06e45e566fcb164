// What the vector bodies of XXH3-128 over short keys share, whatever their
// width (short_keys_avx2.hpp, four keys at a time; short_keys_avx512.hpp,
// eight): XXH3's constants, the seed's precomputed flips, and which lengths
// they take.
//
// Not a header of its own: the bodies include it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace agebloom::short_keys {

// The routines' constants, as xxhash.h 0.8.1 names or writes them.
inline constexpr uint64_t kPrime64_1 = 0x9E3779B185EBCA87ULL;  // XXH_PRIME64_1
inline constexpr uint64_t kPrime64_2 = 0xC2B2AE3D27D4EB4FULL;  // XXH_PRIME64_2
inline constexpr uint64_t kPrime32_2 = 0x85EBCA77ULL;          // XXH_PRIME32_2
inline constexpr uint64_t kPrimeMx1 = 0x165667919E3779F9ULL;   // XXH_PRIME_MX1, XXH3_avalanche's multiplier
inline constexpr uint64_t kMix4to8 = 0x9FB21C651E98DF25ULL;    // a literal in XXH3_len_4to8_128b

// The key lengths the vector bodies hash in groups: XXH3's two short
// routines, 4-8 and 9-16 bytes.
constexpr bool groupable(size_t len) noexcept { return len - 4 <= 16 - 4; }

// The seed's constants the routines XOR in (Hasher computes them once).
struct Flips {
  uint64_t len4to8;        // XXH3_len_4to8_128b's bitflip, with the seed's byte swap
  uint64_t len9to16_low;   // XXH3_len_9to16_128b's bitflipl
  uint64_t len9to16_high;  // and its bitfliph
};

}  // namespace agebloom::short_keys
