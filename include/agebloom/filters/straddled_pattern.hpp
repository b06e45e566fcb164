// A two-line key's bits: `half` distinct positions in a 128-bit lane of each
// of its two lines (two_line_epoch.hpp), drawn from h2. The reference draw,
// its out-of-line form for the data plane's rare path, the table form the
// baseline probe uses for half = 4, and what the vector builders share
// (two_line_avx2.hpp and two_line_avx512.hpp build it 4 or 8 keys at a time).
#pragma once

#include <cstddef>
#include <cstdint>

#include "agebloom/core/bits.hpp"
#include "agebloom/core/hash.hpp"
#include "agebloom/filters/lane_lines.hpp"

namespace agebloom {

// A key's bits in its two lines: `half` distinct bits of a 128-bit lane in
// each, as two 64-bit words per line (word 0: bits 0-63 of the lane).
// 16-byte aligned: the AVX2 builder stores, and its probe loads, each half
// with an aligned 16-byte access.
struct alignas(16) StraddledPattern {
  uint64_t first[2];   // in line x
  uint64_t second[2];  // in line x + 1
};

// The pattern of a key with h2 (and h1 for the rare extra draws): `half`
// distinct positions in each 128-bit half, each drawn from 7 bits of h2 in
// turn, a position already taken drawn again (rejection keeps every set of
// `half` positions equally likely, which straddled_fpr assumes). h2's 63 bits
// give 9 draws, enough for half = 4 with no repeat (the common case); past
// them each refill of 9 draws is mix64 of h1, h2 and the refill's number.
constexpr StraddledPattern straddled_pattern(uint64_t h1, uint64_t h2, uint32_t half) noexcept {
  StraddledPattern p{};
  uint64_t x = h2, round = 0;
  uint32_t left = 9;
  uint64_t* halves[2] = {p.first, p.second};
  for (uint64_t* w : halves) {
    // The half's two words in registers: through w[pos >> 6] each draw's
    // test waited on the previous draw's store.
    uint64_t low = 0, high = 0;
    for (uint32_t got = 0; got < half;) {
      if (left == 0) x = mix64(h1 ^ (h2 + ++round * 0x9e3779b97f4a7c15ULL)), left = 9;
      const uint32_t pos = static_cast<uint32_t>(x & 127);
      x >>= 7, --left;
      const uint64_t bit = uint64_t{1} << (pos & 63);
      const uint64_t to_low = pos < 64 ? bit : 0, to_high = bit ^ to_low;
      got += ((low & to_low) | (high & to_high)) == 0;
      low |= to_low, high |= to_high;
    }
    w[0] = low, w[1] = high;
  }
  return p;
}

// straddled_pattern out of line: the data plane's rare path (a repeated draw).
[[gnu::noinline, gnu::cold]] inline StraddledPattern straddled_pattern_cold(uint64_t h1, uint64_t h2,
                                                                           uint32_t half) noexcept {
  return straddled_pattern(h1, h2, half);
}

// The 128-bit one-hot mask of every position, for straddled_pattern4.
struct BitMasks128 {
  uint64_t word[128][2];  // position p's mask: bit p of word[p][0] (p < 64) or of word[p][1]
  // Fills the table at compile time.
  constexpr BitMasks128() : word() {
    for (uint32_t p = 0; p < 128; ++p) word[p][p >> 6] = uint64_t{1} << (p & 63);
  }
};
alignas(64) inline constexpr BitMasks128 kBitMasks128{};  // every position's mask (2 KiB)

// straddled_pattern(h1, h2, 4) for the data plane: the first eight 7-bit
// fields of h2 looked up as one-hot masks and ORed, which is the loop's result
// whenever no half repeats a position (about 91% of keys); otherwise the
// loop's. A repeat leaves its half fewer than 4 bits, so the eight bits are
// all there exactly when there is none: one population count per word
// (x86-64-v2 has popcnt) instead of testing every pair of masks. Eight loads
// from a 2 KiB table instead of a loop with a variable-indexed store per draw.
inline StraddledPattern straddled_pattern4(uint64_t h1, uint64_t h2) noexcept {
#if defined(__GNUC__) && !defined(__CUDACC__)
  using Vec = detail::U64x2;
  auto mask = [h2](uint32_t shift) {
    Vec v;
    __builtin_memcpy(&v, kBitMasks128.word[(h2 >> shift) & 127], sizeof v);
    return v;
  };
  const Vec a = (mask(0) | mask(7)) | (mask(14) | mask(21));
  const Vec b = (mask(28) | mask(35)) | (mask(42) | mask(49));
  const StraddledPattern p{{a[0], a[1]}, {b[0], b[1]}};
  if (__builtin_expect(bits::popcount(p.first, 2) + bits::popcount(p.second, 2) == 8, 1)) return p;
#endif
  return straddled_pattern_cold(h1, h2, 4);
}

#if defined(__GNUC__) && !defined(__CUDACC__)
// The draw of a key whose fields 0-7 repeat a position within a half, from
// p, its fields 0-3 and 4-7 ORed (the vector pattern builders:
// two_line_avx2.hpp, two_line_avx512.hpp). When the first half repeats,
// field 4 completes it and fields 5-8 are the second half; when only the
// second does, field 8 completes it. That is straddled_pattern's draw when
// each half then has 4 bits: for all but ~5% of these keys (~0.5% of all
// keys, which take the loop, out of line). Without branches: which half
// repeats is a coin toss, and a branch on it mispredicts half the time.
inline StraddledPattern straddled_redraw4(uint64_t h1, uint64_t h2, const StraddledPattern& p) noexcept {
  using Vec = detail::U64x2;
  auto mask = [h2](unsigned field) {
    Vec v;
    __builtin_memcpy(&v, kBitMasks128.word[(h2 >> (7 * field)) & 127], sizeof v);
    return v;
  };
  auto bits = [](Vec v) { return __builtin_popcountll(v[0]) + __builtin_popcountll(v[1]); };
  Vec first, second;
  __builtin_memcpy(&first, p.first, sizeof first);
  __builtin_memcpy(&second, p.second, sizeof second);
  const uint64_t in_first = uint64_t{0} - (bits(first) < 4);  // all ones when the first half repeats
  const Vec pick = {in_first, in_first};
  first |= mask(4) & pick;
  second = (((mask(5) | mask(6)) | (mask(7) | mask(8))) & pick) | ((second | mask(8)) & ~pick);
  if (__builtin_expect(bits(first) + bits(second) != 8, 0)) return straddled_pattern_cold(h1, h2, 4);
  return {{first[0], first[1]}, {second[0], second[1]}};
}

// straddled_pattern(h[i].h1, h[i].h2, 4) for i < n (n <= 64), into out[i],
// by a vector builder of G keys at a time: group(keys, out) writes out[0..G)
// from keys[0..G) and returns a bit per key whose fields 0-7 repeat a
// position within a half (for those the fields are not the draw). A tail
// shorter than G goes through a padded copy; the repeating keys are then
// redrawn (straddled_redraw4). Callers are [[gnu::flatten]] functions of
// group's ISA: inlined there, group inlines too (into a function compiled
// for the baseline it could not).
template <size_t G, class Group>
inline void patterns_by_group(const KeyHash* h, size_t n, StraddledPattern* out, Group group) noexcept {
  uint64_t redo = 0;  // bit i: out[i] is redone
  size_t i = 0;
  for (; i + G <= n; i += G) redo |= static_cast<uint64_t>(group(h + i, out + i)) << i;
  if (i < n) {
    KeyHash keys[G] = {};
    alignas(64) StraddledPattern tail[G];
    for (size_t j = i; j < n; ++j) keys[j - i] = h[j];
    redo |= static_cast<uint64_t>(group(keys, tail) & ((1u << (n - i)) - 1)) << i;
    for (size_t j = i; j < n; ++j) out[j] = tail[j - i];
  }
  for (; redo; redo &= redo - 1) {
    const size_t k = static_cast<size_t>(__builtin_ctzll(redo));
    out[k] = straddled_redraw4(h[k].h1, h[k].h2, out[k]);
  }
}
#endif

}  // namespace agebloom
