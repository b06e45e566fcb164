// The two-line guarded epoch filter's bulk probe in AVX2, for the CPUs
// without AVX-512 (AMD Zen 2 and 3, Intel's client cores): the same work as
// two_line_avx512.hpp with a line as two 256-bit registers and four keys
// per register where that file has eight.
//
// For half = 4 (the only half the planner picks at r = 3, 1%):
//   - patterns are built four keys at a time, one register per 7-bit field
//     of h2; each field's 128-bit one-hot is two variable left shifts of 1
//     (AVX2's vpsllvq, like AVX-512's, gives 0 for a count of 64 or more, so
//     a position selects exactly one of the two words), and each half's four
//     one-hots are ORed; a repeated draw is two equal positions, where the
//     AVX-512 builder finds the bits set twice by ternary logic; the ~9% of
//     keys with a repeat are redrawn after (straddled_redraw4), the ~0.5%
//     past h2's fields by the loop;
//   - the key is present when some 128-bit lane of its two lines has both
//     halves: per 64-bit word the pattern's bits the line lacks, a compare
//     with zero and a movemask, then a lane whose two words lack nothing;
//   - the insert ORs each half into the current segment's 16-byte lane.
// Same verdicts and state as the baseline body (two_line_epoch_test).
#pragma once

#include <cstddef>
#include <cstdint>

#include "agebloom/core/hash.hpp"
#include "agebloom/core/isa.hpp"
#include "agebloom/filters/lane_lines.hpp"
#include "agebloom/filters/straddled_pattern.hpp"

namespace agebloom::two_line_avx2 {

// Built where bodies written with intrinsics are (isa.hpp).
#if AGEBLOOM_INTRINSICS_DISPATCH

constexpr size_t kMaxBurst = 64;  // patterns() at a time

// straddled_pattern(h[i].h1, h[i].h2, 4) for four keys, keys across the
// lanes of each register; out[0..4) are written. Returns the keys (bit i for
// h[i]) whose fields 0-7 repeat a position within a half, whose out[] the
// caller must redo.
[[gnu::always_inline]] AGEBLOOM_TARGET_AVX2 inline unsigned patterns4(const KeyHash* h, StraddledPattern* out) noexcept {
  static_assert(sizeof(KeyHash) == 16 && sizeof(StraddledPattern) == 32);
  const __m256i keys01 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(h));      // h1, h2 of keys 0, 1
  const __m256i keys23 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(h + 2));  // of keys 2, 3
  // h2 of keys 0, 2, 1, 3 (the unpack works within 128-bit halves): the
  // transpose below puts each pattern back in its key's place.
  const __m256i h2 = _mm256_unpackhi_epi64(keys01, keys23);
  const __m256i one = _mm256_set1_epi64x(1), field = _mm256_set1_epi64x(127), high = _mm256_set1_epi64x(64);
  // Field f's one-hot in the lane's low word (positions 0-63) and high word
  // (64-127): position ^ 64 is the high word's shift for positions 64-127
  // and 64 or more (a zero word) for the others. A repeat is two equal
  // positions (six compares a half): with the one-hots' bits set twice, as
  // the AVX-512 builder finds them by ternary logic, the compiler kept all
  // sixteen one-hots alive and spilled them. A half at a time, stored as
  // soon as it is built.
  __m256i repeats = _mm256_setzero_si256();
#pragma GCC unroll 2
  for (int half = 0; half < 2; ++half) {
    __m256i pos[4];
#pragma GCC unroll 4
    for (int f = 0; f < 4; ++f) pos[f] = _mm256_and_si256(_mm256_srli_epi64(h2, 7 * (4 * half + f)), field);
    for (int a = 0; a < 4; ++a)
      for (int b = a + 1; b < 4; ++b) repeats = _mm256_or_si256(repeats, _mm256_cmpeq_epi64(pos[a], pos[b]));
    auto one_hot = [&](__m256i p) __attribute__((always_inline)) AGEBLOOM_TARGET_AVX2 { return _mm256_sllv_epi64(one, p); };
    auto high_one_hot = [&](__m256i p) __attribute__((always_inline)) AGEBLOOM_TARGET_AVX2 { return one_hot(_mm256_xor_si256(p, high)); };
    const __m256i lows = _mm256_or_si256(_mm256_or_si256(one_hot(pos[0]), one_hot(pos[1])),
                                         _mm256_or_si256(one_hot(pos[2]), one_hot(pos[3])));
    const __m256i highs = _mm256_or_si256(_mm256_or_si256(high_one_hot(pos[0]), high_one_hot(pos[1])),
                                          _mm256_or_si256(high_one_hot(pos[2]), high_one_hot(pos[3])));
    // {low, high} of keys 0 and 1 (t0), of keys 2 and 3 (t1): each key's
    // 16 bytes of this half stored to its pattern.
    const __m256i t0 = _mm256_unpacklo_epi64(lows, highs), t1 = _mm256_unpackhi_epi64(lows, highs);
    auto at = [&](int key) { return reinterpret_cast<__m128i*>(half == 0 ? out[key].first : out[key].second); };
    _mm_store_si128(at(0), _mm256_castsi256_si128(t0));
    _mm_store_si128(at(1), _mm256_extracti128_si256(t0, 1));
    _mm_store_si128(at(2), _mm256_castsi256_si128(t1));
    _mm_store_si128(at(3), _mm256_extracti128_si256(t1, 1));
  }
  // Lanes with a repeat (all ones), in the register's order (keys 0, 2, 1,
  // 3), then bits 1 and 2 swapped into key order.
  const unsigned lanes = static_cast<unsigned>(_mm256_movemask_pd(_mm256_castsi256_pd(repeats)));
  return (lanes & 9u) | ((lanes & 2u) << 1) | ((lanes & 4u) >> 1);
}

// straddled_pattern(h[i].h1, h[i].h2, 4) for i < n (n <= kMaxBurst), into
// out[i]: four keys at a time by patterns4, then the keys with a repeat
// within a half redone.
[[gnu::flatten]] AGEBLOOM_TARGET_AVX2 inline void patterns(const KeyHash* h, size_t n, StraddledPattern* out) noexcept {
  patterns_by_group<4>(h, n, out,
                       [](const KeyHash* k, StraddledPattern* o) AGEBLOOM_TARGET_AVX2 { return patterns4(k, o); });
}

using LinePair = LaneLines<uint64_t>::Pair;  // a key's two lines (lane_lines.hpp)

// test_and_insert of keys with patterns p[0..n) (patterns()) whose lines are
// pair[i] (prefetched by the caller), all in the epoch of `segment`: the
// verdicts to out[i], the patterns ORed into the segment's lane. A line is
// two registers, lanes 0-1 and lanes 2-3; each half of the pattern is
// broadcast to both of its 128-bit halves. The insert stores the whole
// register that holds the lane: a later key of the burst on the same line
// loads those 32 bytes, which the store buffer forwards only from a store
// of the same width (a 16-byte store would stall that load until it left
// the buffer; bursts repeat sources, so this is common).
AGEBLOOM_TARGET_AVX2 inline void test_and_insert_run(const StraddledPattern* p, const LinePair* pair, size_t n,
                                                     uint32_t segment, bool* out) noexcept {
  const __m256i zero = _mm256_setzero_si256();
  // The segment's lane: register segment / 2 of the line, its low or high 128 bits.
  const unsigned reg = segment >> 1;
  const __m256i lane = (segment & 1) ? _mm256_setr_epi64x(0, 0, -1, -1) : _mm256_setr_epi64x(-1, -1, 0, 0);
  for (size_t i = 0; i < n; ++i) {
    auto* const x = reinterpret_cast<__m256i*>(pair[i].first);  // read before the stores, which may alias pair[]
    auto* const y = reinterpret_cast<__m256i*>(pair[i].second);
    const __m256i a = _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i*>(p[i].first)));
    const __m256i b = _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i*>(p[i].second)));
    const __m256i x01 = _mm256_load_si256(x), x23 = _mm256_load_si256(x + 1);
    const __m256i y01 = _mm256_load_si256(y), y23 = _mm256_load_si256(y + 1);
    // Per word, the pattern's bits the lines lack (lanes 0-1, then 2-3).
    const __m256i miss01 = _mm256_or_si256(_mm256_andnot_si256(x01, a), _mm256_andnot_si256(y01, b));
    const __m256i miss23 = _mm256_or_si256(_mm256_andnot_si256(x23, a), _mm256_andnot_si256(y23, b));
    const unsigned whole =  // bit w: word w lacks nothing
        static_cast<unsigned>(_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(miss01, zero)))) |
        static_cast<unsigned>(_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(miss23, zero)))) << 4;
    out[i] = (whole & (whole >> 1) & 0x55u) != 0;  // a lane with both words whole
    // The same branch for the whole run (one segment): predicted.
    _mm256_store_si256(x + reg, _mm256_or_si256(reg ? x23 : x01, _mm256_and_si256(a, lane)));
    _mm256_store_si256(y + reg, _mm256_or_si256(reg ? y23 : y01, _mm256_and_si256(b, lane)));
  }
}

#endif

}  // namespace agebloom::two_line_avx2
