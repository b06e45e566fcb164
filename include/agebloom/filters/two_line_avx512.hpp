// The two-line guarded epoch filter's bulk probe in AVX-512: a whole line is
// one register, so a key's probe is the line pair's two loads, a handful of
// register operations and two stores, where the baseline body works lane by
// lane through 16-byte words and builds the pattern from table loads
// (~105 instructions per key; docs/PERFORMANCE.md, "The two-line layout").
//
// For half = 4 (the only half the planner picks at r = 3, 1%) the eight
// 7-bit fields of h2 are the positions straddled_pattern draws when none
// repeats within its half:
//   - one register holds all eight positions (a variable right shift of h2
//     broadcast); each becomes a 128-bit one-hot as two 64-bit words by two
//     variable left shifts (AVX-512 shifts by 64 or more give 0, so a
//     position selects exactly one of the words);
//   - a repeat within a half is found by comparing each half with itself
//     rotated (two permutes, two compares); such keys (~9%) are
//     redone after the burst's others, with one field rejected in registers
//     (positions_with_repeat), and only the ~0.4% that reject more take
//     straddled_pattern's loop, out of line;
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

#if AGEBLOOM_AVX512_DISPATCH

// Eight 7-bit fields of h2, one per 64-bit element: fields 0-7, and with
// skip4 = 1 fields 0-3 and 5-8.
AGEBLOOM_TARGET_AVX512 inline __m512i fields_of(uint64_t h2, unsigned skip4 = 0) noexcept {
  const __m512i shifts = _mm512_add_epi64(_mm512_setr_epi64(0, 7, 14, 21, 28, 35, 42, 49),
                                          _mm512_maskz_set1_epi64(static_cast<__mmask8>(0xf0 * skip4), 7));
  return _mm512_and_si512(_mm512_srlv_epi64(_mm512_set1_epi64(static_cast<long long>(h2)), shifts),
                          _mm512_set1_epi64(127));
}

// Positions among 0-3 and among 4-7 equal to another of their half (each
// compared with its half rotated by one and by two: every pair once or
// twice). vpconflictq (AVX-512CD) says the same in one instruction and
// measured no faster in the bulk loop (12.8-13.0 cycles per key at W = 1M
// against 12.6-12.7 for this); this needs AVX-512F alone.
AGEBLOOM_TARGET_AVX512 inline __mmask8 repeats_of(__m512i pos) noexcept {
  return _mm512_cmpeq_epi64_mask(pos, _mm512_permutex_epi64(pos, _MM_SHUFFLE(0, 3, 2, 1))) |
         _mm512_cmpeq_epi64_mask(pos, _mm512_permutex_epi64(pos, _MM_SHUFFLE(1, 0, 3, 2)));
}

// The draw of a key whose fields 0-7 repeat within a half, when it rejects
// one field in all (all but ~0.4% of keys; false for the rest): a repeat in
// the first half makes field 4 its fourth bit and fields 5-8 the second
// half; a repeat in the second only makes field 8 its fourth bit. Either way
// the stand-in takes the place of one of the two equal positions (either
// leaves the same set), and the result must repeat nothing.
AGEBLOOM_TARGET_AVX512 inline bool positions_with_repeat(uint64_t h2, __mmask8 repeated, __m512i& pos) noexcept {
  // Without branches: which half repeats is a coin toss, so a branch on it mispredicts half the time.
  const unsigned in_first = (repeated & 0x0f) != 0;
  const uint64_t stand_in = (h2 >> (56 - 28 * in_first)) & 127;  // field 8, or field 4
  const unsigned half = repeated & (0xffu >> (4 * in_first));      // the repeating half's equal positions
  pos = _mm512_mask_mov_epi64(fields_of(h2, in_first), static_cast<__mmask8>(half & (0u - half)),
                              _mm512_set1_epi64(static_cast<long long>(stand_in)));
  return repeats_of(pos) == 0;
}

// The pattern of positions 0-3 (first half) and 4-7 (second): each position
// a 128-bit one-hot as two 64-bit words by two variable left shifts (AVX-512
// shifts by 64 or more give 0, so a position selects exactly one word); the
// halves ORed, as {first, second}.
AGEBLOOM_TARGET_AVX512 inline __m256i pattern_of(__m512i pos) noexcept {
  const __m512i one = _mm512_set1_epi64(1);
  const __m512i low = _mm512_sllv_epi64(one, pos);                                          // word 0 of each one-hot
  const __m512i high = _mm512_sllv_epi64(one, _mm512_sub_epi64(pos, _mm512_set1_epi64(64)));  // word 1 (p - 64 wraps: 0)
  // 128-bit lane j: the one-hot of positions 2j and 2j + 1; then lanes 0|1 and 2|3.
  const __m512i pairs = _mm512_or_si512(_mm512_unpacklo_epi64(low, high), _mm512_unpackhi_epi64(low, high));
  return _mm512_castsi512_si256(_mm512_or_si512(_mm512_shuffle_i64x2(pairs, pairs, _MM_SHUFFLE(3, 1, 2, 0)),
                                                _mm512_shuffle_i64x2(pairs, pairs, _MM_SHUFFLE(2, 0, 3, 1))));
}

constexpr size_t kMaxBurst = 32;  // patterns() at a time

// straddled_pattern(h[i].h1, h[i].h2, 4) for i < n (n <= kMaxBurst), into out[i]:
// every key from its fields without a branch, the mask of those with a
// repeat within a half kept, and those keys redone after.
//
// A branch per key on the repeat (~9% of keys, at random) cost more than the
// repeats themselves: mispredicted, it threw away the work of the keys in
// flight (16.4 cycles per key against 9.6 with repeats ignored; W = 1M).
AGEBLOOM_TARGET_AVX512 inline void patterns(const KeyHash* h, size_t n, StraddledPattern* out) noexcept {
  uint32_t repeats = 0;
  __mmask8 repeated[kMaxBurst];
  for (size_t i = 0; i < n; ++i) {
    const __m512i pos = fields_of(h[i].h2);
    repeated[i] = repeats_of(pos);
    repeats |= static_cast<uint32_t>(repeated[i] != 0) << i;
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(&out[i]), pattern_of(pos));
  }
  for (; repeats; repeats &= repeats - 1) {
    const size_t i = static_cast<size_t>(__builtin_ctz(repeats));
    __m512i pos;
    if (__builtin_expect(positions_with_repeat(h[i].h2, repeated[i], pos), 1))
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(&out[i]), pattern_of(pos));
    else
      out[i] = straddled_pattern_cold(h[i].h1, h[i].h2, 4);
  }
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
  // Ternary-logic truth tables of a, b, c are these constants: a | (b & ~c).
  constexpr int kA = 0xf0, kB = 0xcc, kC = 0xaa;
  constexpr int kMissOrLacks = kA | (kB & ~kC);
  for (size_t i = 0; i < n; ++i) {
    const __m512i first = _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p[i].first)));
    const __m512i second = _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p[i].second)));
    const __m512i lx = _mm512_load_si512(pair[i].first);
    const __m512i ly = _mm512_load_si512(pair[i].second);
    const __m512i miss = _mm512_ternarylogic_epi64(_mm512_andnot_si512(lx, first), second, ly, kMissOrLacks);
    const unsigned whole = _mm512_testn_epi64_mask(miss, miss);  // words with nothing missing
    out[i] = (whole & (whole >> 1) & 0x55u) != 0;                // a lane with both words whole
    _mm512_store_si512(pair[i].first, _mm512_mask_or_epi64(lx, lane, lx, first));
    _mm512_store_si512(pair[i].second, _mm512_mask_or_epi64(ly, lane, ly, second));
  }
}

#endif

}  // namespace agebloom::two_line_avx512
