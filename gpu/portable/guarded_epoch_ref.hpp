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
  uint32_t segments = 0;        // r + 1 (the swept layout: r + 2 lanes)
  SegmentLayout layout = SegmentLayout::flat;
  // Lanes: a lane queries do not read (the swept layout's spare, which the
  // owner sets for a bulk query from the current segment), or 0xff.
  uint32_t spare = 0xff;

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

  // Lanes: the key's line, and its pattern in a lane word (the same in
  // every segment, which is what makes the layout one line per key).
  AGEBLOOM_HD uint64_t line_of(KeyHash h) const noexcept { return lanes.line(h); }
  AGEBLOOM_HD uint64_t lane_mask(KeyHash h) const noexcept { return lanes.word(h); }
  // Lanes: zeroes lane `slot` of lines [from, to) (the swept layout's sweep).
  AGEBLOOM_HD void clear_lane_lines(uint32_t slot, uint64_t from, uint64_t to) const noexcept {
    for (uint64_t line = from; line < to; ++line) *word(slot, line) = 0;
  }
  // Lanes: zeroes lanes `slots` (bit s: segment s) of one line.
  AGEBLOOM_HD void clear_lanes(uint64_t line, uint64_t slots) const noexcept {
    for (uint64_t m = slots; m != 0; m &= m - 1) *word(placement::lowest_bit(m), line) = 0;
  }

  // Blocked: the key's k bits as masks over its block's words (B <= 512: at
  // most 8; the ones past B/64 stay 0), the same block index in every
  // segment. Each bit is ORed into every word under a compare, so the masks
  // stay in registers.
  AGEBLOOM_HD void block_masks(KeyHash h, uint64_t (&m)[8]) const noexcept {
    AGEBLOOM_UNROLL
    for (uint32_t w = 0; w < 8; ++w) m[w] = 0;
    const uint64_t* salts = placement::block_salts();
    for (uint32_t i = 0; i < k; ++i) {
      const uint32_t b = placement::Blocked::in_block(h.h2, i, blocked.log2_block, salts);
      AGEBLOOM_UNROLL
      for (uint32_t w = 0; w < 8; ++w) m[w] |= b / 64 == w ? uint64_t{1} << (b % 64) : 0;
    }
  }
  AGEBLOOM_HD uint32_t block_words() const noexcept { return (1u << blocked.log2_block) / 64; }

  AGEBLOOM_HD bool segment_contains(uint32_t j, KeyHash h) const noexcept {
    for (uint32_t i = 0; i < k; ++i)
      if (!test(j, position(h, i))) return false;
    return true;
  }

  // contains(): one segment holding all k bits is enough (Guarded Epoch Bloom
  // Filters, §2). The line and block layouts build the key's masks once and
  // compare whole words, a line (lanes) or a block (blocked) per segment,
  // where bit by bit would recompute k positions in each of r+1 segments.
  // contains_as<L>: one layout's probe alone, so that a kernel made for it
  // holds only its registers (the flat probe needs a quarter fewer than the
  // others' masks, and the occupancy that buys).
  template <SegmentLayout L>
  AGEBLOOM_HD bool contains_as(KeyHash h) const noexcept {
    if constexpr (L == SegmentLayout::lanes) {
      const uint64_t m = lane_mask(h);
      uint64_t line[8];
      load_line(word(0, line_of(h)), line);
      bool hit = false;
      AGEBLOOM_UNROLL
      for (uint32_t j = 0; j < 8; ++j) hit |= j < segments && j != spare && (line[j] & m) == m;
      return hit;
    } else if constexpr (L == SegmentLayout::blocked) {
      uint64_t m[8];
      block_masks(h, m);
      const uint32_t n = block_words();
      const uint64_t first = blocked.block(h) * n;
      for (uint32_t j = 0; j < segments; ++j) {
        const uint64_t* b = word(j, first);
        bool all = true;
        AGEBLOOM_UNROLL
        for (uint32_t w = 0; w < 8; ++w) all &= w >= n || (b[w] & m[w]) == m[w];
        if (all) return true;
      }
      return false;
    } else {
      for (uint32_t j = 0; j < segments; ++j)
        if (segment_contains(j, h)) return true;
      return false;
    }
  }

  AGEBLOOM_HD bool contains(KeyHash h) const noexcept {
    switch (layout) {
      case SegmentLayout::lanes: return contains_as<SegmentLayout::lanes>(h);
      case SegmentLayout::blocked: return contains_as<SegmentLayout::blocked>(h);
      case SegmentLayout::flat: break;
    }
    return contains_as<SegmentLayout::flat>(h);
  }

  // Sets the key's bits in segment j. Other threads insert concurrently into
  // the same words, hence the atomic OR (order does not matter for an OR):
  // the one-line layout's whole pattern in one, the others bit by bit (for
  // blocks that measured faster on an H200 than one OR per word of masks
  // built first).
  AGEBLOOM_HD void insert(uint32_t j, KeyHash h) const noexcept {
    if (layout == SegmentLayout::lanes) {
      atomic_or_u64(word(j, line_of(h)), lane_mask(h));
      return;
    }
    for (uint32_t i = 0; i < k; ++i) {
      const uint64_t p = position(h, i);
      atomic_or_u64(word(j, p / 64), uint64_t{1} << (p % 64));
    }
  }
};

}  // namespace agebloom::gpu
