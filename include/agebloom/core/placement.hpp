// Where a key's bits go: one placement policy per layout, called by the CPU
// filters and by the GPU backend's replay references (gpu/), so that both set
// and test the same bits by construction, not by a copy kept in step.
//
//   Flat       a plain Bloom segment: bit i at probe(h, i, s) (enhanced
//              double hashing, Kirsch & Mitzenmacher; Dillinger & Manolios;
//              scattered so that two keys' positions are independent);
//              the guarded epoch filter tests the same k positions in every
//              segment (Guarded Epoch Bloom Filters, Sec. 2).
//   Blocked    one block per segment probe: the block from h1, bit i inside
//              it from h2 times a fixed odd salt (the blocked variant, same
//              section; Putze, Sanders, Singler for blocked filters).
//   Lanes      the one-line layout: the line from h1, a pattern of b parts of
//              64/b bits in the key's 64-bit lane word, part i's offset read
//              from h2's own bits (bits::word_pattern).
//   ApbfSlice  age-partitioned slices, each with its own hash function
//              (Age-Partitioned Bloom Filters, Sec. 5): probe(h, phys, m) for
//              a plain slice; for a blocked one (Sec. 6) a block from the
//              slice's hash and b bits, one per part of B/b bits.
//
// Plain data plus constexpr functions; AGEBLOOM_HD lets nvcc compile them for
// the device. The one host-only datum, the salt table, is reached through
// block_salts(), which device code answers from a __constant__ copy.
#pragma once

#include <cstdint>

#include "agebloom/core/bits.hpp"
#include "agebloom/core/hash.hpp"
#include "agebloom/core/host_device.hpp"

namespace agebloom::placement {

#if defined(__CUDACC__)
// Salts for device code: the constexpr BlockSalts{} evaluated by the
// compiler. One 256-byte copy per translation unit (static: without -rdc an
// extern __constant__ is silently a separate, uninitialised definition per unit).
static __constant__ BlockSalts kDeviceBlockSalts = BlockSalts{};
#endif

// The salt table of the Blocked policy, wherever the caller runs.
AGEBLOOM_HD inline const uint64_t* block_salts() noexcept {
#if defined(__CUDA_ARCH__)
  return kDeviceBlockSalts.salt;
#else
  return kBlockSalts.salt;
#endif
}

// Index of the lowest set bit of m != 0, on either side.
AGEBLOOM_HD inline uint32_t lowest_bit(uint64_t m) noexcept {
#if defined(__CUDA_ARCH__)
  return static_cast<uint32_t>(__ffsll(static_cast<long long>(m)) - 1);
#else
  return static_cast<uint32_t>(__builtin_ctzll(m));
#endif
}

// Flat (unblocked) segments: k positions anywhere in s bits.
struct Flat {
  uint64_t bits = 0;  // the segment's probe range s

  // Position i of the key.
  AGEBLOOM_HD constexpr uint64_t bit(KeyHash h, uint32_t i) const noexcept { return probe(h, i, bits); }
};

// Blocked segments: one block of B bits per key, k bits inside it.
struct Blocked {
  uint64_t blocks = 0;      // blocks per segment
  uint32_t log2_block = 0;  // log2(B)

  // The key's block (from h1).
  AGEBLOOM_HD constexpr uint64_t block(KeyHash h) const noexcept { return reduce(h.h1, blocks); }
  // Bit i (< 32) inside the block: the top log2(B) bits of h2 · salt_i.
  AGEBLOOM_HD static constexpr uint32_t in_block(uint64_t h2, uint32_t i, uint32_t log2_block,
                                                 const uint64_t* salts) noexcept {
    return static_cast<uint32_t>((h2 * salts[i]) >> (64 - log2_block));
  }
  // Bit i of the key as an index into the whole segment.
  AGEBLOOM_HD uint64_t bit(KeyHash h, uint32_t i) const noexcept {
    return (block(h) << log2_block) + in_block(h.h2, i, log2_block, block_salts());
  }
};

// The one-line layouts: one 64-byte line per key, one lane word per segment.
struct Lanes {
  uint64_t lines = 0;  // 64-byte lines
  uint32_t b = 0;      // parts (bits) per 64-bit lane word: a power of two

  // The key's line (from h1).
  AGEBLOOM_HD constexpr uint64_t line(KeyHash h) const noexcept { return reduce(h.h1, lines); }
  // The key's whole lane word (the CPU's form: one byte shuffle for b = 8).
  constexpr uint64_t word(KeyHash h) const noexcept { return bits::word_pattern(h.h2, b); }
  // Part i of word() alone, as a bit index counted from the line's lane 0
  // word (the GPU's form, one bit at a time): equal by construction of
  // word_pattern (part i spans 64/b bits; its offset is h2's bits there).
  AGEBLOOM_HD constexpr uint64_t bit(KeyHash h, uint32_t i) const noexcept {
    const uint32_t span = 64 / b;
    return line(h) * 64 + i * span + ((h.h2 >> (i * span)) & (span - 1));
  }
};

// Where an age-partitioned filter puts a key in each slice (APBF: one bit;
// APBBF: a block and b bits in it).
struct ApbfSlice {
  uint64_t slice_bits = 0;  // APBF: the probe range m
  uint64_t blocks = 0;      // APBBF: blocks per slice (0: APBF)
  uint32_t block_bits = 0;  // APBBF: B
  uint32_t b = 0;           // APBBF: bits per block, one per part of B/b bits
  uint32_t log2_part = 0;   // APBBF: log2(B/b)

  // APBF: the key's one bit in physical slice `phys` (its own hash function).
  AGEBLOOM_HD constexpr uint64_t bit(KeyHash h, uint32_t phys) const noexcept { return probe(h, phys, slice_bits); }
  // APBBF: the slice's hash of the key, its block, and its pattern in the block.
  AGEBLOOM_HD static constexpr uint64_t slice_hash(KeyHash h, uint32_t phys) noexcept {
    return enhanced_double_hash(h, phys);
  }
  AGEBLOOM_HD constexpr uint64_t block(uint64_t x) const noexcept { return reduce(x, blocks); }  // from slice_hash
  // The b in-block bits of slice hash x.
  AGEBLOOM_HD constexpr void pattern(uint64_t x, bits::Pattern<8>& p) const noexcept {
    bits::partitioned_pattern(mix64(x), b, log2_part, p);
  }
  // Whether the slice whose words start at `words` (physical slice `phys`)
  // holds the key: its bit (APBF), or every bit of its pattern in its block
  // (APBBF, the block's words against the pattern's masks). ApbfFilter's
  // query and the GPU replay's both probe with it.
  AGEBLOOM_HD constexpr bool holds(const uint64_t* words, KeyHash h, uint32_t phys) const noexcept {
    if (block_bits == 0) return bits::test(words, bit(h, phys));
    const uint64_t x = slice_hash(h, phys);
    bits::Pattern<8> p;
    pattern(x, p);
    const uint64_t* blk = words + block(x) * (block_bits / 64);
    uint64_t missing = 0;
    for (uint32_t w = 0; w < block_bits / 64; ++w) missing |= p.mask[w] & ~blk[w];
    return missing == 0;
  }
  // Whether pred(position) holds for every bit position of the key in slice
  // `phys` (1 for APBF, b for APBBF), asked in order and stopping at the first
  // that does not: the positions without an array to hold them (a GPU
  // thread's array of them lived in local memory).
  template <class Pred>
  AGEBLOOM_HD bool all_positions(KeyHash h, uint32_t phys, Pred&& pred) const noexcept {
    if (block_bits == 0) return pred(bit(h, phys));
    const uint64_t x = slice_hash(h, phys);
    bits::Pattern<8> p;
    pattern(x, p);
    const uint64_t base = block(x) * block_bits;
    for (uint32_t w = 0; w < block_bits / 64; ++w)
      for (uint64_t m = p.mask[w]; m != 0; m &= m - 1)
        if (!pred(base + w * 64 + lowest_bit(m))) return false;
    return true;
  }
};

}  // namespace agebloom::placement
