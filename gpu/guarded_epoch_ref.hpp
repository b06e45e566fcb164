// Non-owning, trivially copyable view of a guarded epoch filter's bits (the
// ref of cuco's bloom_filter / bloom_filter_ref split): what a kernel takes by
// value. The owner (epoch_device.cuh) holds the memory and the epoch
// schedule; the ref only knows where a key's bits are.
//
// Three layouts, one view: every segment is "segment_words 64-bit words", and
// a key has k bit positions inside a segment:
//   - flat:    positions probe(h, i, s), segment j's words contiguous;
//   - blocked: block reduce(h1, blocks), in-block bit block_bit(h2, i, log2 B);
//   - lanes:   the one-line layout (InterleavedEpochFilter, 64-bit lanes):
//              segment j is lane j of every 64-byte line, so its word w (the
//              lane of line w) sits at words[w * 8 + j]; the key's line is
//              reduce(h1, lines) and its k bits are core's word_pattern of h2.
// word(j, w) hides the difference (word_stride, segment_stride), so the exact
// replay treats the layouts alike.
//
// Bit positions come from the functions the CPU filters call (core/hash.hpp
// and core/bits.hpp, constexpr and accepted by nvcc with
// --expt-relaxed-constexpr). The one exception is the blocked in-block bit:
// core's block_bit() reads the host table kBlockSalts, which device code cannot
// see (nvcc compiles that read to a `trap`, silently), so device code reads a
// __constant__ copy made at compile time from the same constexpr BlockSalts
// constructor, and salted_bit() below repeats block_bit's one-line formula;
// static_asserts hold the two equal.
//
// Portable (gpu/portable.hpp): compiled by the host compiler too, for the
// emulation test.
#pragma once

#include <cstdint>

#include "agebloom/core/bits.hpp"
#include "agebloom/core/hash.hpp"
#include "portable.hpp"

namespace agebloom::gpu {

// The in-block bit formula of core's block_bit(), over an explicit salt table.
AGEBLOOM_HD constexpr uint32_t salted_bit(const uint64_t* salts, uint64_t h2, uint32_t i,
                                          uint32_t log2_block) noexcept {
  return static_cast<uint32_t>((h2 * salts[i]) >> (64 - log2_block));
}

#if defined(__CUDACC__)
// Salts for device code: the constexpr BlockSalts{} evaluated by the compiler.
// One 256-byte copy per translation unit (static: without -rdc an extern
// __constant__ is silently a separate, uninitialized definition per unit).
static __constant__ BlockSalts kDeviceBlockSalts = BlockSalts{};
#endif

AGEBLOOM_HD inline const uint64_t* block_salts() noexcept {
#if defined(__CUDA_ARCH__)
  return kDeviceBlockSalts.salt;
#else
  return kBlockSalts.salt;
#endif
}

// salted_bit() must stay core's block_bit(): checked on a few inputs here, and
// bit for bit over millions of keys by tests/gpu.
static_assert(salted_bit(BlockSalts{}.salt, 0x9e3779b97f4a7c15ULL, 0, 9) == block_bit(0x9e3779b97f4a7c15ULL, 0, 9));
static_assert(salted_bit(BlockSalts{}.salt, 0x0123456789abcdefULL, 31, 6) == block_bit(0x0123456789abcdefULL, 31, 6));
static_assert(salted_bit(BlockSalts{}.salt, 0xfedcba9876543210ULL, 17, 8) == block_bit(0xfedcba9876543210ULL, 17, 8));

enum class SegmentLayout : uint8_t { flat, blocked, lanes };

struct GuardedEpochRef {
  uint64_t* words = nullptr;    // the first word of segment 0
  uint64_t segment_words = 0;   // words per segment (lanes: lines)
  uint64_t word_stride = 1;     // distance between a segment's consecutive words
  uint64_t segment_stride = 0;  // distance between segment j's and j+1's word 0
  uint64_t segment_bits = 0;    // flat: the probe range s
  uint64_t blocks = 0;          // blocked: blocks per segment
  uint32_t log2_block = 0;      // blocked: log2(B)
  uint32_t k = 0;
  uint32_t segments = 0;        // r + 1
  SegmentLayout layout = SegmentLayout::flat;

  AGEBLOOM_HD uint64_t* word(uint32_t j, uint64_t w) const noexcept {
    return words + w * word_stride + j * segment_stride;
  }

  // Position of the key's i-th bit inside a segment, as the CPU filter sets it.
  AGEBLOOM_HD uint64_t position(KeyHash h, uint32_t i) const noexcept {
    switch (layout) {
      case SegmentLayout::flat: return probe(h, i, segment_bits);
      case SegmentLayout::blocked:
        return (reduce(h.h1, blocks) << log2_block) + salted_bit(block_salts(), h.h2, i, log2_block);
      case SegmentLayout::lanes: {
        // Part i of the lane pattern (core/bits.hpp, word_pattern): span 64/k
        // bits, the offset read from h2's bits at the part's own position.
        const uint32_t span = 64 / k;
        const uint64_t offset = (h.h2 >> (i * span)) & (span - 1);
        return reduce(h.h1, segment_words) * 64 + i * span + offset;
      }
    }
    return 0;
  }

  AGEBLOOM_HD bool test(uint32_t j, uint64_t p) const noexcept { return (*word(j, p / 64) >> (p % 64)) & 1u; }

  AGEBLOOM_HD bool segment_contains(uint32_t j, KeyHash h) const noexcept {
    for (uint32_t i = 0; i < k; ++i)
      if (!test(j, position(h, i))) return false;
    return true;
  }

  // contains(): one segment holding all k bits is enough (paper 000, §2).
  AGEBLOOM_HD bool contains(KeyHash h) const noexcept {
    for (uint32_t j = 0; j < segments; ++j)
      if (segment_contains(j, h)) return true;
    return false;
  }

  // Sets the key's bits in segment j. Other threads insert concurrently into
  // the same words, hence the atomic OR (order does not matter for an OR).
  AGEBLOOM_HD void insert(uint32_t j, KeyHash h) const noexcept {
    for (uint32_t i = 0; i < k; ++i) {
      const uint64_t p = position(h, i);
      atomic_or_u64(word(j, p / 64), uint64_t{1} << (p % 64));
    }
  }
};

}  // namespace agebloom::gpu
