// A burst's lines located eight keys at a time in AVX-512, for the one-line
// layouts (lane_lines.hpp): LaneLines::locate_burst's body where the CPU has
// it. Each key's line is placement::Lanes's, (h1 · lines) >> 64 (core/hash.hpp,
// reduce), its address kept for the probe and requested at once.
//
// The addresses go out two ways: one 64-byte store for the caller, and, for
// the requests, moves from the register (vmovq, vpextrq), made in the loop
// itself through always-inlined helpers: g++ 12 deletes a call it did not
// inline to a function whose only effect is a prefetch (a helper that took
// all eight lost them all that way; bits.hpp), and
// tests/core/line_requests_kept.py checks the machine code for them. Reading them back
// from the store instead (eight 8-byte loads of one 64-byte store, which the
// store buffer does not forward here) made dedup_fwd slower than the scalar
// loop; from the register it is ~0.6 cycles per packet faster (AMD Zen 5,
// docs/PERFORMANCE.md, "The hash and the lines of a burst in AVX-512").
//
// Not a header of its own: lane_lines.hpp includes it; it declares nothing
// unless AGEBLOOM_INTRINSICS_DISPATCH.
#pragma once

#include <cstddef>
#include <cstdint>

#include "agebloom/core/bits.hpp"
#include "agebloom/core/isa.hpp"

#if AGEBLOOM_INTRINSICS_DISPATCH
AGEBLOOM_INTRINSICS_WARNINGS_OFF  // GCC bug 105593 (isa.hpp), where the intrinsics below are inlined

namespace agebloom::lane_lines_avx512 {

// Requests the two lines whose addresses are in `two` (bits::prefetch_write_later).
// Always inlined, as those are, so the loop's own code holds the requests.
AGEBLOOM_TARGET_AVX512 AGEBLOOM_PREFETCH_INLINE void request_later(__m128i two) noexcept {
  bits::prefetch_write_later(reinterpret_cast<const void*>(_mm_cvtsi128_si64(two)));
  bits::prefetch_write_later(reinterpret_cast<const void*>(_mm_extract_epi64(two, 1)));
}

// For keys whose {h1, h2} pairs are pairs[2i], pairs[2i + 1]: the address of
// line (h1 · count) >> 64 of the 64-byte lines at `base` to at[i], and a
// request for it. Needs count < 2^32: then, with h1 = H · 2^32 + L,
//   (h1 · count) >> 64 = (H · count + ((L · count) >> 32)) >> 32,
// two 32 x 32 -> 64 products whose sum stays below 2^64. Eight keys at a
// time; returns how many it located (n rounded down to a multiple of eight).
// Reads no line: base may be any address (the requests cannot fault).
AGEBLOOM_TARGET_AVX512 inline size_t locate_and_request(const uint64_t* pairs, size_t n, uint64_t count,
                                                        const void* base, void** at) noexcept {
  const __m512i c = _mm512_set1_epi64(static_cast<long long>(count));
  const __m512i b = _mm512_set1_epi64(static_cast<long long>(reinterpret_cast<uintptr_t>(base)));
  const __m512i firsts = _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14);  // the h1 of eight pairs
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m512i h1 = _mm512_permutex2var_epi64(_mm512_loadu_si512(pairs + 2 * i), firsts,
                                                 _mm512_loadu_si512(pairs + 2 * i + 8));
    const __m512i high = _mm512_mul_epu32(_mm512_srli_epi64(h1, 32), c);
    const __m512i low = _mm512_mul_epu32(h1, c);
    const __m512i line = _mm512_srli_epi64(_mm512_add_epi64(high, _mm512_srli_epi64(low, 32)), 32);
    const __m512i address = _mm512_add_epi64(b, _mm512_slli_epi64(line, 6));
    _mm512_storeu_si512(at + i, address);
    const __m256i a03 = _mm512_castsi512_si256(address), a47 = _mm512_extracti64x4_epi64(address, 1);
    request_later(_mm256_castsi256_si128(a03));
    request_later(_mm256_extracti128_si256(a03, 1));
    request_later(_mm256_castsi256_si128(a47));
    request_later(_mm256_extracti128_si256(a47, 1));
  }
  return i;
}

}  // namespace agebloom::lane_lines_avx512

AGEBLOOM_INTRINSICS_WARNINGS_ON  // the warnings back as they were
#endif  // AGEBLOOM_INTRINSICS_DISPATCH
