// Non-owning, trivially copyable view of a guarded epoch filter's bits (the
// ref of cuco's bloom_filter / bloom_filter_ref split): what a kernel takes by
// value. The owner (epoch_device.cuh) holds the memory and the epoch
// schedule; the ref only knows where a key's bits are.
//
// Three layouts, one view: every segment is "segment_words 64-bit words", and
// a key has k bit positions inside a segment:
//   - flat:    segment j's words contiguous;
//   - blocked: the same, one block per key;
//   - lanes:   the one-line layout (InterleavedEpochFilter, 64-bit lanes):
//              segment j is lane j of every 64-byte line, so its word w (the
//              lane of line w) sits at words[w * 8 + j].
// word(j, w) hides the difference (word_stride, segment_stride), so the exact
// replay treats the layouts alike.
//
// Bit positions come from the placement policies the CPU filters call
// (core/placement.hpp: Flat, Blocked, Lanes), constexpr and __host__
// __device__, so CPU and GPU set the same bits by construction; the salt
// table of the blocked layout reaches device code through placement's
// __constant__ copy.
//
// Portable (gpu/portable/portable.hpp): compiled by the host compiler too, for the
// emulation test.
#pragma once

#include <cstdint>

#include "agebloom/core/bits.hpp"
#include "agebloom/core/hash.hpp"
#include "agebloom/core/placement.hpp"
#include "portable.hpp"

namespace agebloom::gpu {

enum class SegmentLayout : uint8_t { flat, blocked, lanes };

struct GuardedEpochRef {
  uint64_t* words = nullptr;    // the first word of segment 0
  uint64_t segment_words = 0;   // words per segment (lanes: lines)
  uint64_t word_stride = 1;     // distance between a segment's consecutive words
  uint64_t segment_stride = 0;  // distance between segment j's and j+1's word 0
  placement::Flat flat{};        // flat: the probe range s
  placement::Blocked blocked{};  // blocked: blocks per segment, log2(B)
  placement::Lanes lanes{};      // lanes: lines, and k parts per lane word
  uint32_t k = 0;
  uint32_t segments = 0;        // r + 1
  SegmentLayout layout = SegmentLayout::flat;

  AGEBLOOM_HD uint64_t* word(uint32_t j, uint64_t w) const noexcept {
    return words + w * word_stride + j * segment_stride;
  }

  // Position of the key's i-th bit inside a segment, as the CPU filter sets it.
  AGEBLOOM_HD uint64_t position(KeyHash h, uint32_t i) const noexcept {
    switch (layout) {
      case SegmentLayout::flat: return flat.bit(h, i);
      case SegmentLayout::blocked: return blocked.bit(h, i);
      case SegmentLayout::lanes: return lanes.bit(h, i);
    }
    return 0;
  }

  AGEBLOOM_HD bool test(uint32_t j, uint64_t p) const noexcept { return (*word(j, p / 64) >> (p % 64)) & 1u; }

  AGEBLOOM_HD bool segment_contains(uint32_t j, KeyHash h) const noexcept {
    for (uint32_t i = 0; i < k; ++i)
      if (!test(j, position(h, i))) return false;
    return true;
  }

  // contains(): one segment holding all k bits is enough (Guarded Epoch Bloom Filters, §2).
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
