// The one-line guarded epoch filter's bulk probe in AVX2, for its 64-bit
// lanes with k = 8 (what the planner picks at FPR 1%): a line is two 256-bit
// registers, so "does some lane hold the whole pattern" is two ANDs, two
// compares and one test where the baseline body works through four 16-byte
// words and folds their verdicts in general registers (dedup_fwd's filter
// stage: 41.9 instructions per packet against 53.8, docs/PERFORMANCE.md,
// "A machine without AVX-512"). The pattern is the baseline's byte shuffle
// (bits::word_pattern<8>), broadcast to every lane.
// The 128-bit lanes ("interleaved-128", k = 8) have their own probe below:
// the same two registers, each holding two lanes.
// Same verdicts and state as the baseline body (interleaved_epoch_test).
#pragma once

#include <cstddef>
#include <cstdint>

#include "agebloom/core/hash.hpp"
#include "agebloom/core/isa.hpp"
#include "agebloom/filters/lane_lines.hpp"

namespace agebloom::interleaved_avx2 {

// Built where bodies written with intrinsics are (isa.hpp).
#if AGEBLOOM_INTRINSICS_DISPATCH

using Line = LaneLines<uint64_t>::Line;  // a line of eight 64-bit lanes (lane_lines.hpp)

// test_and_insert of keys h[0..n) whose lines are line[i] (prefetched by the
// caller), all in the epoch of segment `current`: the verdicts to out[i],
// each key's pattern ORed into its line's lane `current`. The insert stores
// the whole register that holds the lane: a later key of the burst on the
// same line loads those 32 bytes, which the store buffer forwards only from
// a store of the same width (after an 8-byte store that load would wait for
// the store to leave the buffer; bursts repeat sources, so this is common).
// kSwept ("interleaved-swept"): lane `spare` is not read (its compare is
// masked off); the store still writes back the value loaded for it.
template <bool kSwept = false>
AGEBLOOM_TARGET_AVX2 inline void test_and_insert_run8(const KeyHash* h, Line* const* line, size_t n,
                                                      uint32_t current, uint32_t spare, bool* out) noexcept {
  // Byte j of the pattern is 1 << (bits 8j..8j+2 of h2): one shuffle of this table.
  const __m128i ones = _mm_setr_epi8(1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16, 32, 64, -128);
  const __m128i offsets = _mm_set1_epi8(7);
  // Lane `current`: register current / 4 of the line, 64-bit word current % 4 of it.
  const unsigned reg = current >> 2;
  const __m256i lane = _mm256_cmpeq_epi64(_mm256_setr_epi64x(0, 1, 2, 3), _mm256_set1_epi64x(current & 3));
  // The lanes a query reads: all but `spare` (all when spare >= 8).
  const __m256i all = _mm256_set1_epi64x(-1);
  [[maybe_unused]] const __m256i live03 =
      _mm256_xor_si256(_mm256_cmpeq_epi64(_mm256_setr_epi64x(0, 1, 2, 3), _mm256_set1_epi64x(spare)), all);
  [[maybe_unused]] const __m256i live47 =
      _mm256_xor_si256(_mm256_cmpeq_epi64(_mm256_setr_epi64x(4, 5, 6, 7), _mm256_set1_epi64x(spare)), all);
  for (size_t i = 0; i < n; ++i) {
    auto* const x = reinterpret_cast<__m256i*>(line[i]);
    const __m128i pattern = _mm_shuffle_epi8(ones, _mm_and_si128(_mm_cvtsi64_si128(static_cast<long long>(h[i].h2)), offsets));
    const __m256i mask = _mm256_broadcastq_epi64(pattern);
    const __m256i lanes03 = _mm256_load_si256(x), lanes47 = _mm256_load_si256(x + 1);
    // A lane holds the pattern when lane & mask == mask.
    __m256i held03 = _mm256_cmpeq_epi64(_mm256_and_si256(lanes03, mask), mask);
    __m256i held47 = _mm256_cmpeq_epi64(_mm256_and_si256(lanes47, mask), mask);
    if constexpr (kSwept) {
      held03 = _mm256_and_si256(held03, live03);
      held47 = _mm256_and_si256(held47, live47);
    }
    const __m256i held = _mm256_or_si256(held03, held47);
    out[i] = !_mm256_testz_si256(held, held);
    // The same branch for the whole run (one segment): predicted.
    _mm256_store_si256(x + reg, _mm256_or_si256(reg ? lanes47 : lanes03, _mm256_and_si256(mask, lane)));
  }
}

using Line128 = LaneLines<bits::Word128>::Line;  // a line of four 128-bit lanes

// test_and_insert_run8 for 128-bit lanes with k = 8: the pattern is
// bits::word128_pattern<8>'s shuffles (one bit per 16-bit part), both halves
// of a register compare it to one lane each, and a lane holds the key when
// both of its 64-bit words do (each word's verdict ANDed with its
// neighbour's). The store is the whole register, for the reason above.
AGEBLOOM_TARGET_AVX2 inline void test_and_insert_run128(const KeyHash* h, Line128* const* line, size_t n,
                                                        uint32_t current, bool* out) noexcept {
  const __m128i ones = _mm_setr_epi8(1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16, 32, 64, -128);
  const __m128i spread = _mm_setr_epi8(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7);
  const __m128i high = _mm_setr_epi8(0, 8, 0, 8, 0, 8, 0, 8, 0, 8, 0, 8, 0, 8, 0, 8);
  const __m128i seven = _mm_set1_epi8(7), eight = _mm_set1_epi8(8);
  // Lane `current`: register current / 2 of the line, 128-bit half current % 2 of it.
  const unsigned reg = current >> 1;
  const __m256i lane = (current & 1) ? _mm256_setr_epi64x(0, 0, -1, -1) : _mm256_setr_epi64x(-1, -1, 0, 0);
  for (size_t i = 0; i < n; ++i) {
    auto* const x = reinterpret_cast<__m256i*>(line[i]);
    const __m128i bytes = _mm_shuffle_epi8(_mm_cvtsi64_si128(static_cast<long long>(h[i].h2)), spread);
    const __m128i bit = _mm_shuffle_epi8(ones, _mm_and_si128(bytes, seven));
    const __m128i pattern = _mm_and_si128(bit, _mm_cmpeq_epi8(_mm_and_si128(bytes, eight), high));
    const __m256i mask = _mm256_broadcastsi128_si256(pattern);
    const __m256i lanes01 = _mm256_load_si256(x), lanes23 = _mm256_load_si256(x + 1);
    const __m256i w01 = _mm256_cmpeq_epi64(_mm256_and_si256(lanes01, mask), mask);
    const __m256i w23 = _mm256_cmpeq_epi64(_mm256_and_si256(lanes23, mask), mask);
    const __m256i held = _mm256_or_si256(_mm256_and_si256(w01, _mm256_shuffle_epi32(w01, 0x4E)),
                                         _mm256_and_si256(w23, _mm256_shuffle_epi32(w23, 0x4E)));
    out[i] = !_mm256_testz_si256(held, held);
    _mm256_store_si256(x + reg, _mm256_or_si256(reg ? lanes23 : lanes01, _mm256_and_si256(mask, lane)));
  }
}

#endif

}  // namespace agebloom::interleaved_avx2
