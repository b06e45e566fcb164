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

inline void prefetch_read(const void* p) noexcept { __builtin_prefetch(p, 0, 3); }
inline void prefetch_write(const void* p) noexcept { __builtin_prefetch(p, 1, 3); }

}  // namespace agebloom::bits
