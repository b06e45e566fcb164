// XXH3-128 of short keys (4 to 16 bytes), four at a time in AVX2:
// Hasher::hash_bulk's groups of such keys on CPUs without AVX-512 (Zen 1-3,
// Intel's client cores), bit for bit the same as libxxhash
// (tests/core/hash_test.cpp).
//
// The routines are those of short_keys_avx512.hpp, at half the width and
// with what AVX2 lacks built from what it has: the 128-bit product from the
// four 32x32 -> 64 products (vpmuludq), as there; the low 64 bits of a 64-bit
// product, vpmullq in AVX-512DQ, from three of them (the high halves'
// product falls off the top); the byte swap as one vpshufb. Without it each
// key went through libxxhash's routine with its run-time length dispatch,
// 11-25 cycles per key in a burst on Zen 3 (docs/PERFORMANCE.md, "A machine
// without AVX-512").
//
// Not a header of its own: hash.hpp includes it before class Hasher, and it
// declares nothing unless AGEBLOOM_INTRINSICS_DISPATCH.
#pragma once

#include <cstddef>
#include <cstdint>

#include "agebloom/core/isa.hpp"
#include "agebloom/core/short_keys.hpp"

#if AGEBLOOM_INTRINSICS_DISPATCH

namespace agebloom::short_keys_avx2 {

using namespace short_keys;  // the routines' constants, Flips, groupable

// v in every lane.
AGEBLOOM_TARGET_AVX2 inline __m256i splat(uint64_t v) noexcept { return _mm256_set1_epi64x(static_cast<long long>(v)); }

// XXH_mult64to128(a, m) in four lanes, from the 32-bit halves a1:a0, m1:m0.
AGEBLOOM_TARGET_AVX2 inline void mul128(__m256i a, __m256i m, __m256i& lo, __m256i& hi) noexcept {
  const __m256i low32 = splat(0xFFFFFFFF);
  const __m256i a1 = _mm256_srli_epi64(a, 32), m1 = _mm256_srli_epi64(m, 32);
  const __m256i p00 = _mm256_mul_epu32(a, m), p01 = _mm256_mul_epu32(a, m1);
  const __m256i p10 = _mm256_mul_epu32(a1, m), p11 = _mm256_mul_epu32(a1, m1);
  // (p00 >> 32) + low(p10) + p01 < 2^64: the middle column with its carry.
  const __m256i cross = _mm256_add_epi64(_mm256_add_epi64(_mm256_srli_epi64(p00, 32), _mm256_and_si256(p10, low32)), p01);
  hi = _mm256_add_epi64(_mm256_add_epi64(p11, _mm256_srli_epi64(p10, 32)), _mm256_srli_epi64(cross, 32));
  lo = _mm256_or_si256(_mm256_slli_epi64(cross, 32), _mm256_and_si256(p00, low32));
}

// a * m mod 2^64 in four lanes: a0*m0 + ((a1*m0 + a0*m1) << 32).
AGEBLOOM_TARGET_AVX2 inline __m256i mullo(__m256i a, uint64_t m) noexcept {
  const __m256i mv = splat(m), m1 = splat(m >> 32);
  const __m256i cross = _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(a, 32), mv), _mm256_mul_epu32(a, m1));
  return _mm256_add_epi64(_mm256_mul_epu32(a, mv), _mm256_slli_epi64(cross, 32));
}

// x ^ (x >> shift)
template <int Shift>
AGEBLOOM_TARGET_AVX2 inline __m256i xorshift(__m256i x) noexcept {
  return _mm256_xor_si256(x, _mm256_srli_epi64(x, Shift));
}

// XXH3_avalanche in four lanes.
AGEBLOOM_TARGET_AVX2 inline __m256i avalanche(__m256i h) noexcept {
  return xorshift<32>(mullo(xorshift<37>(h), kPrimeMx1));
}

// Four {low, high} pairs to out[0..8): the pairs of keys 0 and 2, then of 1
// and 3, per 128-bit half, put in order across the halves.
AGEBLOOM_TARGET_AVX2 inline void store_pairs(__m256i lo, __m256i hi, uint64_t* out) noexcept {
  const __m256i even = _mm256_unpacklo_epi64(lo, hi), odd = _mm256_unpackhi_epi64(lo, hi);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm256_permute2x128_si256(even, odd, 0x20));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 4), _mm256_permute2x128_si256(even, odd, 0x31));
}

// Byte swap of each 64-bit lane.
AGEBLOOM_TARGET_AVX2 inline __m256i swap64(__m256i x) noexcept {
  const __m256i reverse = _mm256_setr_epi8(7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8,  //
                                           7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8);
  return _mm256_shuffle_epi8(x, reverse);
}

// XXH3_len_4to8_128b for four keys of `len` bytes: input = the first four
// bytes + (the last four << 32), flip = the seed's bitflip (Hasher).
AGEBLOOM_TARGET_AVX2 inline void len4to8(__m256i input, uint64_t len, uint64_t flip, uint64_t* out) noexcept {
  __m256i lo, hi;
  mul128(_mm256_xor_si256(input, splat(flip)), splat(kPrime64_1 + (len << 2)), lo, hi);
  hi = _mm256_add_epi64(hi, _mm256_slli_epi64(lo, 1));
  lo = _mm256_xor_si256(lo, _mm256_srli_epi64(hi, 3));
  lo = xorshift<28>(mullo(xorshift<35>(lo), kMix4to8));
  store_pairs(lo, avalanche(hi), out);
}

// XXH3_len_9to16_128b for four keys of `len` bytes: first = their first
// eight bytes, last = their last eight; flipl, fliph = the seed's bitflips.
AGEBLOOM_TARGET_AVX2 inline void len9to16(__m256i first, __m256i last, uint64_t len, uint64_t flipl, uint64_t fliph,
                                          uint64_t* out) noexcept {
  __m256i mlo, mhi;
  mul128(_mm256_xor_si256(_mm256_xor_si256(first, last), splat(flipl)), splat(kPrime64_1), mlo, mhi);
  mlo = _mm256_add_epi64(mlo, splat((len - 1) << 54));
  last = _mm256_xor_si256(last, splat(fliph));
  // The 64-bit form: m.high += last + (u32)last * (PRIME32_2 - 1).
  mhi = _mm256_add_epi64(mhi, _mm256_add_epi64(last, _mm256_mul_epu32(last, splat(kPrime32_2 - 1))));
  mlo = _mm256_xor_si256(mlo, swap64(mhi));
  __m256i hlo, hhi;
  mul128(mlo, splat(kPrime64_2), hlo, hhi);
  hhi = _mm256_add_epi64(hhi, mullo(mhi, kPrime64_2));
  store_pairs(avalanche(hlo), avalanche(hhi), out);
}

// hash_bulk's groups of four keys that all have one length from 4 to 16:
// each key's first and last four (or eight) bytes read through its pointer
// (no byte outside a key is read), the lanes built by inserts (a 32-byte load
// of four values just stored one by one could not be forwarded from the
// store buffer). Returns how many keys it hashed from the start, stopping at
// the first group that does not qualify.
AGEBLOOM_TARGET_AVX2 inline size_t pointers(const void* const* keys, const size_t* lengths, size_t n, const Flips& flips,
                                           uint64_t* out) noexcept {
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const size_t len = lengths[i];
    if (!groupable(len) || lengths[i + 1] != len || lengths[i + 2] != len || lengths[i + 3] != len) break;
    long long first[4], last[4];
    if (len <= 8) {
      for (size_t j = 0; j < 4; ++j) {
        const auto* p = static_cast<const uint8_t*>(keys[i + j]);
        uint32_t a, b;
        __builtin_memcpy(&a, p, 4);
        __builtin_memcpy(&b, p + len - 4, 4);
        first[j] = static_cast<long long>(a | uint64_t{b} << 32);
      }
      len4to8(_mm256_set_epi64x(first[3], first[2], first[1], first[0]), len, flips.len4to8, out + 2 * i);
    } else {
      for (size_t j = 0; j < 4; ++j) {
        const auto* p = static_cast<const uint8_t*>(keys[i + j]);
        __builtin_memcpy(&first[j], p, 8);
        __builtin_memcpy(&last[j], p + len - 8, 8);
      }
      len9to16(_mm256_set_epi64x(first[3], first[2], first[1], first[0]),
               _mm256_set_epi64x(last[3], last[2], last[1], last[0]), len, flips.len9to16_low, flips.len9to16_high,
               out + 2 * i);
    }
  }
  return i;
}

// Hasher::fixed_bulk's groups of four keys of N bytes held as little-endian
// words (key i's bytes [0, 8) in first[i], [8, 16) in second[i] where N > 8):
// the lanes are loads, with no pointer to follow and nothing to insert. A
// caller fills the words for a whole burst before hashing it, so most of
// these loads meet stores already written to the cache (a 32-byte load over
// four 8-byte stores still in the store buffer would wait for them). Returns
// how many keys it hashed (n rounded down to a multiple of four).
template <size_t N>
AGEBLOOM_TARGET_AVX2 inline size_t words(const uint64_t* first, const uint64_t* second, size_t n, const Flips& flips,
                                         uint64_t* out) noexcept {
  static_assert(N >= 4 && N <= 16, "XXH3's short routines");
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const __m256i f = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(first + i));
    if constexpr (N <= 8) {
      // The first four bytes, and the last four (bytes N - 4 .. N) above them.
      const __m256i input = _mm256_or_si256(_mm256_and_si256(f, splat(0xFFFFFFFF)),
                                            _mm256_slli_epi64(_mm256_srli_epi64(f, 8 * (N - 4)), 32));
      len4to8(input, N, flips.len4to8, out + 2 * i);
    } else {
      // The last eight bytes (N - 8 .. N) straddle the two words unless N = 16.
      const __m256i s = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(second + i));
      __m256i last = s;
      if constexpr (N < 16) last = _mm256_or_si256(_mm256_srli_epi64(f, 8 * (N - 8)), _mm256_slli_epi64(s, 64 - 8 * (N - 8)));
      len9to16(f, last, N, flips.len9to16_low, flips.len9to16_high, out + 2 * i);
    }
  }
  return i;
}

}  // namespace agebloom::short_keys_avx2

#endif  // AGEBLOOM_INTRINSICS_DISPATCH
