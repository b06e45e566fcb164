// XXH3-128 of short keys (4 to 16 bytes), eight at a time in AVX-512:
// Hasher::hash_bulk's groups of such keys, bit for bit the same as libxxhash
// (tests/core/hash_test.cpp).
//
// XXH3's short routines (XXH3 specification, "len 4-8" and "len 9-16",
// 128-bit variants) are one or two 64x64 -> 128 multiplies with shifts, XORs,
// a byte swap and 64-bit multiplies around them. AVX-512 has no 128-bit
// product, so it is assembled from the four 32x32 -> 64 products (vpmuludq);
// the 64-bit multiplies are AVX-512DQ's vpmullq. Measured on AMD Zen 5 over
// bursts of 64 keys (agebloom-bench `hash/bulk/...`, docs/PERFORMANCE.md,
// "Short keys hashed eight at a time"): 1.8-2.5 against 5.4-8.1 cycles per
// 8-byte key.
//
// Not a header of its own: hash.hpp includes it before class Hasher, and it
// declares nothing unless AGEBLOOM_INTRINSICS_DISPATCH.
#pragma once

#include <cstddef>
#include <cstdint>

#include "agebloom/core/isa.hpp"
#include "agebloom/core/short_keys.hpp"

#if AGEBLOOM_INTRINSICS_DISPATCH
// GCC bug 105593 (isa.hpp) surfaces again wherever the shifts and vpmuludq
// below are inlined, so the warning is off for this file's functions too.
AGEBLOOM_INTRINSICS_WARNINGS_OFF  // GCC bug 105593, as above

namespace agebloom::short_keys_avx512 {

using namespace short_keys;  // the routines' constants, Flips, groupable

// XXH_mult64to128(a, m) in eight lanes, from the 32-bit halves a1:a0, m1:m0.
AGEBLOOM_TARGET_AVX512DQ inline void mul128(__m512i a, __m512i m, __m512i& lo, __m512i& hi) noexcept {
  const __m512i low32 = _mm512_set1_epi64(0xFFFFFFFF);
  const __m512i a1 = _mm512_srli_epi64(a, 32), m1 = _mm512_srli_epi64(m, 32);
  const __m512i p00 = _mm512_mul_epu32(a, m), p01 = _mm512_mul_epu32(a, m1);
  const __m512i p10 = _mm512_mul_epu32(a1, m), p11 = _mm512_mul_epu32(a1, m1);
  // (p00 >> 32) + low(p10) + p01 < 2^64: the middle column with its carry.
  const __m512i cross = _mm512_add_epi64(_mm512_add_epi64(_mm512_srli_epi64(p00, 32), _mm512_and_si512(p10, low32)), p01);
  hi = _mm512_add_epi64(_mm512_add_epi64(p11, _mm512_srli_epi64(p10, 32)), _mm512_srli_epi64(cross, 32));
  lo = _mm512_or_si512(_mm512_slli_epi64(cross, 32), _mm512_and_si512(p00, low32));
}

// x ^ (x >> shift)
template <int Shift>
AGEBLOOM_TARGET_AVX512DQ inline __m512i xorshift(__m512i x) noexcept {
  return _mm512_xor_si512(x, _mm512_srli_epi64(x, Shift));
}

// XXH3_avalanche in eight lanes.
AGEBLOOM_TARGET_AVX512DQ inline __m512i avalanche(__m512i h) noexcept {
  return xorshift<32>(_mm512_mullo_epi64(xorshift<37>(h), _mm512_set1_epi64(static_cast<long long>(kPrimeMx1))));
}

// Eight {low, high} pairs, keys 0-3 then 4-7, to out[0..16).
AGEBLOOM_TARGET_AVX512DQ inline void store_pairs(__m512i lo, __m512i hi, uint64_t* out) noexcept {
  _mm512_storeu_si512(out, _mm512_permutex2var_epi64(lo, _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11), hi));
  _mm512_storeu_si512(out + 8, _mm512_permutex2var_epi64(lo, _mm512_setr_epi64(4, 12, 5, 13, 6, 14, 7, 15), hi));
}

// Byte swap of each 64-bit lane in AVX-512F alone (vpshufb on zmm needs BW):
// bytes within 16-bit words, then 16-bit halves, then 32-bit halves.
AGEBLOOM_TARGET_AVX512DQ inline __m512i swap64(__m512i x) noexcept {
  const __m512i even = _mm512_set1_epi64(0x00FF00FF00FF00FFLL);
  const __m512i bytes = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi64(x, 8), even),
                                        _mm512_andnot_si512(even, _mm512_slli_epi64(x, 8)));
  return _mm512_rol_epi64(_mm512_rol_epi32(bytes, 16), 32);
}

// XXH3_len_4to8_128b for eight keys of `len` bytes: input = the first four
// bytes + (the last four << 32), flip = the seed's bitflip (Hasher).
AGEBLOOM_TARGET_AVX512DQ inline void len4to8(__m512i input, uint64_t len, uint64_t flip, uint64_t* out) noexcept {
  __m512i lo, hi;
  mul128(_mm512_xor_si512(input, _mm512_set1_epi64(static_cast<long long>(flip))),
         _mm512_set1_epi64(static_cast<long long>(kPrime64_1 + (len << 2))), lo, hi);
  hi = _mm512_add_epi64(hi, _mm512_slli_epi64(lo, 1));
  lo = _mm512_xor_si512(lo, _mm512_srli_epi64(hi, 3));
  lo = xorshift<28>(_mm512_mullo_epi64(xorshift<35>(lo), _mm512_set1_epi64(static_cast<long long>(kMix4to8))));
  store_pairs(lo, avalanche(hi), out);
}

// XXH3_len_9to16_128b for eight keys of `len` bytes: first = their first
// eight bytes, last = their last eight; flipl, fliph = the seed's bitflips.
AGEBLOOM_TARGET_AVX512DQ inline void len9to16(__m512i first, __m512i last, uint64_t len, uint64_t flipl, uint64_t fliph,
                                              uint64_t* out) noexcept {
  __m512i mlo, mhi;
  mul128(_mm512_xor_si512(_mm512_xor_si512(first, last), _mm512_set1_epi64(static_cast<long long>(flipl))),
         _mm512_set1_epi64(static_cast<long long>(kPrime64_1)), mlo, mhi);
  mlo = _mm512_add_epi64(mlo, _mm512_set1_epi64(static_cast<long long>((len - 1) << 54)));
  last = _mm512_xor_si512(last, _mm512_set1_epi64(static_cast<long long>(fliph)));
  // The 64-bit form: m.high += last + (u32)last * (PRIME32_2 - 1).
  mhi = _mm512_add_epi64(mhi, _mm512_add_epi64(last, _mm512_mul_epu32(last, _mm512_set1_epi64(kPrime32_2 - 1))));
  mlo = _mm512_xor_si512(mlo, swap64(mhi));
  __m512i hlo, hhi;
  mul128(mlo, _mm512_set1_epi64(static_cast<long long>(kPrime64_2)), hlo, hhi);
  hhi = _mm512_add_epi64(hhi, _mm512_mullo_epi64(mhi, _mm512_set1_epi64(static_cast<long long>(kPrime64_2))));
  store_pairs(avalanche(hlo), avalanche(hhi), out);
}

// Eight lanes from v[0..8), element i = v[i]. Built by inserts, not a load:
// the values were just stored one by one, and a 64-byte load spanning eight
// narrower stores cannot be forwarded from the store buffer.
AGEBLOOM_TARGET_AVX512DQ inline __m512i lanes(const long long (&v)[8]) noexcept {
  return _mm512_set_epi64(v[7], v[6], v[5], v[4], v[3], v[2], v[1], v[0]);
}

// hash_bulk's groups of eight keys that all have one length from 4 to 16:
// each key's first and last four (or eight) bytes read through its pointer
// (no byte outside a key is read). Eight scalar loads and inserts take ~2.5
// cycles per key less than vpgatherqd (measured on AMD Zen 5). Returns how
// many keys it hashed from the start, stopping at the first group that does
// not qualify.
AGEBLOOM_TARGET_AVX512DQ inline size_t pointers(const void* const* keys, const size_t* lengths, size_t n, const Flips& flips,
                                               uint64_t* out) noexcept {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const size_t len = lengths[i];
    if (!groupable(len) ||
        _mm512_cmpneq_epi64_mask(_mm512_loadu_si512(lengths + i), _mm512_set1_epi64(static_cast<long long>(len))) != 0)
      break;
    long long first[8], last[8];
    if (len <= 8) {
      for (size_t j = 0; j < 8; ++j) {
        const auto* p = static_cast<const uint8_t*>(keys[i + j]);
        uint32_t a, b;
        __builtin_memcpy(&a, p, 4);
        __builtin_memcpy(&b, p + len - 4, 4);
        first[j] = static_cast<long long>(a | uint64_t{b} << 32);
      }
      len4to8(lanes(first), len, flips.len4to8, out + 2 * i);
    } else {
      for (size_t j = 0; j < 8; ++j) {
        const auto* p = static_cast<const uint8_t*>(keys[i + j]);
        __builtin_memcpy(&first[j], p, 8);
        __builtin_memcpy(&last[j], p + len - 8, 8);
      }
      len9to16(lanes(first), lanes(last), len, flips.len9to16_low, flips.len9to16_high, out + 2 * i);
    }
  }
  return i;
}

// Hasher::fixed_bulk's keys of a constant N bytes, eight at a time, from
// words (key i's bytes [0, 8) in first[i], [8, 16) in second[i] where N > 8),
// as short_keys_avx2::words does four at a time: every operand a plain load,
// and the 64-bit products one vpmullq each where AVX2 takes three vpmuludq.
// Returns how many keys it hashed (n rounded down to a multiple of eight).
template <size_t N>
AGEBLOOM_TARGET_AVX512DQ inline size_t words(const uint64_t* first, const uint64_t* second, size_t n, const Flips& flips,
                                            uint64_t* out) noexcept {
  static_assert(N >= 4 && N <= 16, "XXH3's short routines");
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m512i f = _mm512_loadu_si512(first + i);
    if constexpr (N <= 8) {
      // The first four bytes, and the last four (bytes N - 4 .. N) above them.
      const __m512i input = _mm512_or_si512(_mm512_and_si512(f, _mm512_set1_epi64(0xFFFFFFFF)),
                                            _mm512_slli_epi64(_mm512_srli_epi64(f, 8 * (N - 4)), 32));
      len4to8(input, N, flips.len4to8, out + 2 * i);
    } else {
      // The last eight bytes (N - 8 .. N) straddle the two words unless N = 16.
      const __m512i s = _mm512_loadu_si512(second + i);
      __m512i last = s;
      if constexpr (N < 16)
        last = _mm512_or_si512(_mm512_srli_epi64(f, 8 * (N - 8)), _mm512_slli_epi64(s, 64 - 8 * (N - 8)));
      len9to16(f, last, N, flips.len9to16_low, flips.len9to16_high, out + 2 * i);
    }
  }
  return i;
}

}  // namespace agebloom::short_keys_avx512

AGEBLOOM_INTRINSICS_WARNINGS_ON  // the warnings back as they were

#endif  // AGEBLOOM_INTRINSICS_DISPATCH
