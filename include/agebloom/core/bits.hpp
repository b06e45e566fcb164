// Bit, word and block primitives over plain uint64_t arrays. Structures keep
// their state as such arrays (plus a small header) so it can be snapshotted,
// copied to a GPU or placed in shared memory.
#pragma once

#include <cstddef>
#include <cstdint>

namespace agebloom::bits {

inline constexpr unsigned kWordBits = 64;

constexpr uint64_t words_for(uint64_t nbits) noexcept { return (nbits + kWordBits - 1) / kWordBits; }

constexpr bool test(const uint64_t* words, uint64_t bit) noexcept {
  return (words[bit / kWordBits] >> (bit % kWordBits)) & 1u;
}
constexpr void set(uint64_t* words, uint64_t bit) noexcept {
  words[bit / kWordBits] |= uint64_t{1} << (bit % kWordBits);
}
constexpr void clear(uint64_t* words, uint64_t nwords) noexcept {
  for (uint64_t i = 0; i < nwords; ++i) words[i] = 0;
}
constexpr uint64_t popcount(const uint64_t* words, uint64_t nwords) noexcept {
  uint64_t n = 0;
  for (uint64_t i = 0; i < nwords; ++i) n += static_cast<uint64_t>(__builtin_popcountll(words[i]));
  return n;
}

// A key's in-block pattern: one mask word per 64 bits of block. Testing a key
// against a block is then "no mask bit missing from its word", setting it an OR.
template <unsigned BlockWords>
struct Pattern {
  uint64_t mask[BlockWords] = {};
};

// A block partitioned into b parts of 2^w bits with one bit set per part
// (paper 001, §6): part i's bit is the i-th w-bit field of y. Needs b·w <= 64
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

// The same pattern inside one 64-bit word with b known at compile time: the
// compiler unrolls the parts into independent shifts (no chain through y),
// which the one-line filters' hot path needs. Same bits as
// partitioned_pattern(y, B, log2(64 / B), ...).
template <uint32_t B>
constexpr uint64_t word_pattern(uint64_t y) noexcept {
  constexpr uint32_t w = static_cast<uint32_t>(__builtin_ctz(64 / B));
  constexpr uint64_t field = (uint64_t{1} << w) - 1;
  uint64_t m = 0;
  for (uint32_t part = 0; part < B; ++part)
    m |= uint64_t{1} << ((part << w) | static_cast<uint32_t>((y >> (part * w)) & field));
  return m;
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

inline void prefetch_read(const void* p) noexcept { __builtin_prefetch(p, 0, 3); }
inline void prefetch_write(const void* p) noexcept { __builtin_prefetch(p, 1, 3); }

}  // namespace agebloom::bits
