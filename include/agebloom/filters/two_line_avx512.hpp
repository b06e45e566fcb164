// The two-line guarded epoch filter's bulk probe in AVX-512: a whole line is
// one register, so a key's probe is the line pair's two loads, a handful of
// register operations and two stores, where the baseline body works lane by
// lane through 16-byte words and builds the pattern from table loads
// (~105 instructions per key; docs/PERFORMANCE.md, "The two-line layout").
//
// For half = 4 (the only half the planner picks at r = 3, 1%) the eight
// 7-bit fields of h2 are the positions straddled_pattern draws when none
// repeats within its half:
//   - patterns are built eight keys at a time, keys across the lanes of a
//     register and one register per field (a shift of the keys' h2); each
//     field becomes a 128-bit one-hot as two 64-bit words by two variable
//     left shifts (AVX-512 shifts by 64 or more give 0, so a position
//     selects exactly one of the words), and each half's four one-hots are
//     ORed by ternary logic, which also yields the bits set twice: a repeat;
//   - keys with a repeat within a half (~9%) are redrawn after the burst's
//     others with one field rejected (straddled_redraw4), and only the ~0.5%
//     that reject more take straddled_pattern's loop, out of line;
//   - the key is present when some 128-bit lane has both halves: the
//     pattern's bits a line lacks, per 64-bit word, then a lane whose two
//     words are both zero;
//   - the insert ORs the halves into the current segment's lane under a
//     write mask and stores both lines whole.
// Same verdicts and state as the baseline body (two_line_epoch_test).
#pragma once

#include <cstddef>
#include <cstdint>

#include "agebloom/core/hash.hpp"
#include "agebloom/core/isa.hpp"
#include "agebloom/filters/lane_lines.hpp"
#include "agebloom/filters/straddled_pattern.hpp"

namespace agebloom::two_line_avx512 {

#if AGEBLOOM_INTRINSICS_DISPATCH
// GCC bug 105593 (isa.hpp) surfaces again where patterns8's shuffles and
// shifts are inlined, so the warning is off for this file's functions too.
AGEBLOOM_INTRINSICS_WARNINGS_OFF  // GCC bug 105593, as above

constexpr size_t kMaxBurst = 64;  // patterns() at a time

// Ternary-logic truth tables of a, b, c are these constants.
constexpr int kA = 0xf0, kB = 0xcc, kC = 0xaa;

// Four one-hot words (a key's draws in one half, as low or high words) ORed,
// and the bits set in two or more of them: any such bit is a repeated draw.
AGEBLOOM_TARGET_AVX512 inline __m512i or4_with_repeats(__m512i a, __m512i b, __m512i c, __m512i d,
                                                        __m512i& repeats) noexcept {
  const __m512i any3 = _mm512_ternarylogic_epi64(a, b, c, kA | kB | kC);
  const __m512i two_of3 = _mm512_ternarylogic_epi64(a, b, c, (kA & kB) | (kA & kC) | (kB & kC));
  repeats = _mm512_ternarylogic_epi64(two_of3, d, any3, kA | (kB & kC));  // two of a, b, c, or d and one of them
  return _mm512_or_si512(any3, d);
}

// straddled_pattern(h[i].h1, h[i].h2, 4) for up to eight keys, keys across
// the lanes of each register (one register per 7-bit field), so that each
// instruction serves eight keys; out[0..8) are written. Returns the keys
// whose fields 0-7 repeat a position within a half (~9% of keys), whose
// out[] the caller must redo: for them the eight fields are not the draw.
[[gnu::always_inline]] AGEBLOOM_TARGET_AVX512 inline __mmask8 patterns8(const KeyHash* h, StraddledPattern* out) noexcept {
  static_assert(sizeof(KeyHash) == 16 && sizeof(StraddledPattern) == 32);
  const __m512i keys0 = _mm512_loadu_si512(h), keys4 = _mm512_loadu_si512(h + 4);  // {h1, h2} of keys 0-3, 4-7
  const __m512i h2 = _mm512_permutex2var_epi64(keys0, _mm512_setr_epi64(1, 3, 5, 7, 9, 11, 13, 15), keys4);
  const __m512i one = _mm512_set1_epi64(1), field = _mm512_set1_epi64(127), high = _mm512_set1_epi64(64);
  // Field f's one-hot in the lane's low word (positions 0-63) and high word
  // (64-127): AVX-512 shifts by 64 or more give 0, and position ^ 64 is the
  // high word's shift for positions 64-127 and 64 or more for the others.
  __m512i low[8], hi[8];
#pragma GCC unroll 8
  for (int f = 0; f < 8; ++f) {
    const __m512i bits = _mm512_srli_epi64(h2, static_cast<unsigned>(7 * f));
    low[f] = _mm512_sllv_epi64(one, _mm512_and_si512(bits, field));
    hi[f] = _mm512_sllv_epi64(one, _mm512_ternarylogic_epi64(bits, field, high, (kA & kB) ^ kC));
  }
  __m512i r0, r1, r2, r3;
  const __m512i first_low = or4_with_repeats(low[0], low[1], low[2], low[3], r0);
  const __m512i first_high = or4_with_repeats(hi[0], hi[1], hi[2], hi[3], r1);
  const __m512i second_low = or4_with_repeats(low[4], low[5], low[6], low[7], r2);
  const __m512i second_high = or4_with_repeats(hi[4], hi[5], hi[6], hi[7], r3);
  const __m512i repeats = _mm512_or_si512(_mm512_ternarylogic_epi64(r0, r1, r2, kA | kB | kC), r3);
  // Transposed to one pattern per key {first low, first high, second low, second high}:
  // t0 = keys 0, 2, 4, 6's first halves, t1 keys 1, 3, 5, 7's, t2 and t3 their second halves.
  const __m512i t0 = _mm512_unpacklo_epi64(first_low, first_high), t1 = _mm512_unpackhi_epi64(first_low, first_high);
  const __m512i t2 = _mm512_unpacklo_epi64(second_low, second_high), t3 = _mm512_unpackhi_epi64(second_low, second_high);
  const __m512i u0 = _mm512_shuffle_i64x2(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));  // keys 0, 2 first; 0, 2 second
  const __m512i u1 = _mm512_shuffle_i64x2(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));  // keys 1, 3 likewise
  const __m512i w0 = _mm512_shuffle_i64x2(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));  // keys 4, 6
  const __m512i w1 = _mm512_shuffle_i64x2(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));  // keys 5, 7
  _mm512_storeu_si512(out + 0, _mm512_shuffle_i64x2(u0, u1, _MM_SHUFFLE(2, 0, 2, 0)));
  _mm512_storeu_si512(out + 2, _mm512_shuffle_i64x2(u0, u1, _MM_SHUFFLE(3, 1, 3, 1)));
  _mm512_storeu_si512(out + 4, _mm512_shuffle_i64x2(w0, w1, _MM_SHUFFLE(2, 0, 2, 0)));
  _mm512_storeu_si512(out + 6, _mm512_shuffle_i64x2(w0, w1, _MM_SHUFFLE(3, 1, 3, 1)));
  return _mm512_test_epi64_mask(repeats, repeats);
}

// straddled_pattern(h[i].h1, h[i].h2, 4) for i < n (n <= kMaxBurst), into
// out[i]: eight keys at a time by patterns8 (a tail through a padded copy),
// then the keys with a repeat within a half redone (straddled_redraw4).
//
// Key by key (a register holding one key's eight fields) the same work took
// ~3.8 cycles per key of the ~13 the bulk test_and_insert took at W = 1M;
// eight at a time, the whole call takes ~1 cycle per key less. A branch per
// key on the repeat cost more than the repeats themselves
// (docs/PERFORMANCE.md, "Two-line patterns eight keys at a time").
[[gnu::flatten]] AGEBLOOM_TARGET_AVX512 inline void patterns(const KeyHash* h, size_t n, StraddledPattern* out) noexcept {
  patterns_by_group<8>(h, n, out, [](const KeyHash* k, StraddledPattern* o) AGEBLOOM_TARGET_AVX512 {
    return static_cast<unsigned>(patterns8(k, o));
  });
}

using LinePair = LaneLines<uint64_t>::Pair;  // a key's two lines (lane_lines.hpp)

// test_and_insert of keys with patterns p[0..n) (patterns()) whose lines are
// pair[i] (prefetched by the caller), all in the epoch of `segment`: the
// verdicts to out[i], the patterns ORed into the segment's lane. A key is
// present when some 128-bit lane holds both halves: the pattern's bits each
// line lacks, per 64-bit word, then a lane whose two words lack none.
AGEBLOOM_TARGET_AVX512 inline void test_and_insert_run(const StraddledPattern* p, const LinePair* pair, size_t n,
                                                       uint32_t segment, bool* out) noexcept {
  const __mmask8 lane = static_cast<__mmask8>(3u << (2 * segment));  // the segment's two words
  // a | (b & ~c) as a ternary-logic truth table.
  constexpr int kMissOrLacks = kA | (kB & ~kC);
  for (size_t i = 0; i < n; ++i) {
    auto* const x = pair[i].first;  // read before the stores, which the compiler cannot tell from pair[]
    auto* const y = pair[i].second;
    const __m512i first = _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p[i].first)));
    const __m512i second = _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p[i].second)));
    const __m512i lx = _mm512_load_si512(x);
    const __m512i ly = _mm512_load_si512(y);
    const __m512i miss = _mm512_ternarylogic_epi64(_mm512_andnot_si512(lx, first), second, ly, kMissOrLacks);
    const unsigned whole = _mm512_testn_epi64_mask(miss, miss);  // words with nothing missing
    out[i] = (whole & (whole >> 1) & 0x55u) != 0;                // a lane with both words whole
    _mm512_store_si512(x, _mm512_mask_or_epi64(lx, lane, lx, first));
    _mm512_store_si512(y, _mm512_mask_or_epi64(ly, lane, ly, second));
  }
}

AGEBLOOM_INTRINSICS_WARNINGS_ON  // the warnings back as they were
#endif

}  // namespace agebloom::two_line_avx512
