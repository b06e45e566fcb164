// Bit, word and block primitives over plain uint64_t arrays. Structures keep
// their state as such arrays (plus a small header) so it can be snapshotted,
// copied to a GPU or placed in shared memory.
#pragma once

#include <cstddef>
#include <cstdint>

namespace agebloom::bits {

inline constexpr unsigned kWordBits = 64;  // bits per storage word

// Words that hold nbits bits.
constexpr uint64_t words_for(uint64_t nbits) noexcept { return (nbits + kWordBits - 1) / kWordBits; }

// Whether bit `bit` of the array is set.
constexpr bool test(const uint64_t* words, uint64_t bit) noexcept {
  return (words[bit / kWordBits] >> (bit % kWordBits)) & 1u;
}
// Sets bit `bit` of the array.
constexpr void set(uint64_t* words, uint64_t bit) noexcept {
  words[bit / kWordBits] |= uint64_t{1} << (bit % kWordBits);
}
// Zeroes nwords words.
constexpr void clear(uint64_t* words, uint64_t nwords) noexcept {
  for (uint64_t i = 0; i < nwords; ++i) words[i] = 0;
}
// Set bits in nwords words.
constexpr uint64_t popcount(const uint64_t* words, uint64_t nwords) noexcept {
  uint64_t n = 0;
  for (uint64_t i = 0; i < nwords; ++i) n += static_cast<uint64_t>(__builtin_popcountll(words[i]));
  return n;
}

// A key's in-block pattern: one mask word per 64 bits of block. Testing a key
// against a block is then "no mask bit missing from its word", setting it an OR.
template <unsigned BlockWords>
struct Pattern {
  uint64_t mask[BlockWords] = {};  // word i covers block bits [64i, 64i + 64)
};

// A block partitioned into b parts of 2^w bits with one bit set per part
// (Age-Partitioned Bloom Filters, §6): part i's bit is the i-th w-bit field of y. Needs b·w <= 64
// and b·2^w <= 64·BlockWords. Bits in different parts never collide, so the
// FP of such blocks is exactly Σ_j Pois(j) (1 - (1 - b/B)^j)^b.
template <unsigned BlockWords>
constexpr void partitioned_pattern(uint64_t y, uint32_t b, uint32_t w, Pattern<BlockWords>& p) noexcept {
  const uint64_t field = (uint64_t{1} << w) - 1;
  for (uint32_t part = 0; part < b; ++part, y >>= w) {
    const uint32_t bit = (part << w) | static_cast<uint32_t>(y & field);
    p.mask[bit / 64] |= uint64_t{1} << (bit % 64);
  }
}

// The pattern of the one-line filters: b parts of 64/b bits in one word, one
// bit per part, part j's bit offset read from y's own bits at that part's
// position (bits [j·64/b, j·64/b + log2(64/b)) of y). Like partitioned_pattern
// it uses b·log2(64/b) independent bits of y, so the FP model is the same;
// placing each field inside its part lets b = 8 (the planner's choice at 1%)
// build the whole word with one byte shuffle: part j is byte j, its offset the
// low 3 bits of y's byte j, and a 16-entry table lookup turns each offset into
// 1 << offset (4 instructions instead of ~40 for eight shifts and ORs).
template <uint32_t B>
constexpr uint64_t word_pattern_scalar(uint64_t y) noexcept {
  constexpr uint32_t span = 64 / B;
  constexpr uint64_t field = span - 1;
  uint64_t m = 0;
  for (uint32_t part = 0; part < B; ++part)
    m |= uint64_t{1} << (part * span + static_cast<uint32_t>((y >> (part * span)) & field));
  return m;
}

// word_pattern_scalar's word, built with the SSSE3 byte shuffle for B = 8
// where the target has one (the same word), else the loop.
template <uint32_t B>
constexpr uint64_t word_pattern(uint64_t y) noexcept {
#if defined(__SSSE3__) && !defined(__CUDACC__)
  if constexpr (B == 8) {
    if (!__builtin_is_constant_evaluated()) {
      using v16qi = char __attribute__((vector_size(16)));
      using v2di = long long __attribute__((vector_size(16)));
      const v16qi ones = {1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16, 32, 64, -128};
      const v2di offsets = {static_cast<long long>(y & 0x0707070707070707ULL), 0};
      const v2di m = reinterpret_cast<v2di>(__builtin_ia32_pshufb128(ones, reinterpret_cast<v16qi>(offsets)));
      return static_cast<uint64_t>(m[0]);
    }
  }
#endif
  return word_pattern_scalar<B>(y);
}

// word_pattern for a b chosen at run time (a power of two up to 32).
constexpr uint64_t word_pattern(uint64_t y, uint32_t b) noexcept {
  switch (b) {
    case 1: return word_pattern<1>(y);
    case 2: return word_pattern<2>(y);
    case 4: return word_pattern<4>(y);
    case 8: return word_pattern<8>(y);
    case 16: return word_pattern<16>(y);
    default: return word_pattern<32>(y);
  }
}

// A 128-bit word, low half first: a lane of the wide one-line layout
// (interleaved_epoch.hpp with 128-bit lanes), four of them to a line.
struct Word128 {
  uint64_t lo = 0;  // bits 0..63
  uint64_t hi = 0;  // bits 64..127

  friend constexpr Word128 operator&(Word128 a, Word128 b) noexcept { return {a.lo & b.lo, a.hi & b.hi}; }
  friend constexpr Word128 operator|(Word128 a, Word128 b) noexcept { return {a.lo | b.lo, a.hi | b.hi}; }
  constexpr Word128& operator|=(Word128 b) noexcept { return *this = *this | b; }  // sets b's bits
  friend constexpr bool operator==(Word128, Word128) noexcept = default;
};
// Set bits of a 128-bit word.
constexpr int popcount(Word128 w) noexcept { return __builtin_popcountll(w.lo) + __builtin_popcountll(w.hi); }

// The pattern of a 128-bit lane: b parts of 128/b bits, one bit per part,
// part j's offset the log2(128/b) bits of y at bit j·64/b. For every b from
// 1 to 64, log2(128/b) <= 64/b: each field fits its stride, so the fields are
// disjoint and b·log2(128/b) <= 64 bits of y are used, as
// partitioned_pattern (the same FP model). For b = 8
// (the planner's choice at 1%) part j is the 16-bit half-word j and its
// offset the low 4 bits of y's byte j.
template <uint32_t B>
constexpr Word128 word128_pattern_scalar(uint64_t y) noexcept {
  static_assert(B >= 1 && B <= 64 && (B & (B - 1)) == 0, "b: a power of two from 1 to 64");
  constexpr uint32_t span = 128 / B, stride = 64 / B;
  uint64_t m[2] = {0, 0};
  for (uint32_t part = 0; part < B; ++part) {
    const uint32_t bit = part * span + static_cast<uint32_t>((y >> (part * stride)) & (span - 1));
    m[bit / 64] |= uint64_t{1} << (bit % 64);
  }
  return {m[0], m[1]};
}

// word128_pattern_scalar's word; for b = 8 with SSSE3, byte shuffles (the
// same word): y's byte j goes to bytes 2j and 2j + 1, a table turns its low 3
// bits into 1 << offset in both, and bit 3 keeps the low or the high one
// (offset 0..15 of the 16-bit part = 8·bit3 + low 3 bits).
template <uint32_t B>
constexpr Word128 word128_pattern(uint64_t y) noexcept {
#if defined(__SSSE3__) && !defined(__CUDACC__)
  if constexpr (B == 8) {
    if (!__builtin_is_constant_evaluated()) {
      using v16qi = char __attribute__((vector_size(16)));
      using v2di = long long __attribute__((vector_size(16)));
      const v16qi ones = {1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16, 32, 64, -128};
      const v16qi spread = {0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7};
      const v16qi high = {0, 8, 0, 8, 0, 8, 0, 8, 0, 8, 0, 8, 0, 8, 0, 8};
      const v2di word = {static_cast<long long>(y), 0};
      const v16qi bytes = __builtin_ia32_pshufb128(reinterpret_cast<v16qi>(word), spread);
      const v16qi bit = __builtin_ia32_pshufb128(ones, bytes & 7);
      const v2di m = reinterpret_cast<v2di>(bit & (v16qi)((bytes & 8) == high));
      return {static_cast<uint64_t>(m[0]), static_cast<uint64_t>(m[1])};
    }
  }
#endif
  return word128_pattern_scalar<B>(y);
}

// word128_pattern for a b chosen at run time (a power of two from 1 to 64).
constexpr Word128 word128_pattern(uint64_t y, uint32_t b) noexcept {
  switch (b) {
    case 1: return word128_pattern<1>(y);
    case 2: return word128_pattern<2>(y);
    case 4: return word128_pattern<4>(y);
    case 8: return word128_pattern<8>(y);
    case 16: return word128_pattern<16>(y);
    case 32: return word128_pattern<32>(y);
    default: return word128_pattern<64>(y);
  }
}

// A request must survive the optimiser. g++ 12 takes __builtin_prefetch for
// an operation without effect, so a function whose only effect is a request
// counts as one without effect, and a call to it that is not inlined is
// deleted, requests and all. That silently took every prefetch out of the
// bulk forms of the guarded epoch filters, APBF and the time-limited filter
// (each filter's prefetch() loops over segments or slices, and was not
// inlined), and out of a helper of the AVX-512 locate. So each request also
// passes its address to an empty volatile asm, an effect g++ keeps: a
// function that requests lines is no longer "without effect", and the asm
// itself emits nothing. The requests are always inlined too.
// tests/core/line_requests_kept.py reads the machine code for them.
#if defined(__GNUC__) && !defined(__CUDA_ARCH__)
#define AGEBLOOM_PREFETCH_INLINE __attribute__((always_inline)) inline  // (above)
#define AGEBLOOM_REQUEST_KEPT(p) __asm__ volatile("" : : "r"(p))      // (above)
#else
#define AGEBLOOM_PREFETCH_INLINE inline  // (above)
#define AGEBLOOM_REQUEST_KEPT(p) (void)(p)  // (above)
#endif
// p's line, to read.
AGEBLOOM_PREFETCH_INLINE void prefetch_read(const void* p) noexcept {
  __builtin_prefetch(p, 0, 3);
  AGEBLOOM_REQUEST_KEPT(p);
}
// p's line, to write.
AGEBLOOM_PREFETCH_INLINE void prefetch_write(const void* p) noexcept {
  __builtin_prefetch(p, 1, 3);
  AGEBLOOM_REQUEST_KEPT(p);
}
// p's line, to write later rather than next: locality 2 (x86's prefetcht1),
// which leaves L1 to the work in between; a prefetch_write just before the
// write brings it the last step.
AGEBLOOM_PREFETCH_INLINE void prefetch_write_later(const void* p) noexcept {
  __builtin_prefetch(p, 1, 2);
  AGEBLOOM_REQUEST_KEPT(p);
}

}  // namespace agebloom::bits
