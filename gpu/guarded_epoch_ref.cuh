// Non-owning, trivially copyable device view of a guarded epoch filter's
// state (the ref of cuco's bloom_filter / bloom_filter_ref split): what a
// kernel takes by value. The owner (guarded_epoch_device.cuh) holds the
// memory and the epoch schedule; the ref only knows where the bits are.
//
// Bit positions come from the same functions the CPU filter calls
// (agebloom::probe and agebloom::reduce in core/hash.hpp, constexpr and
// accepted by nvcc with --expt-relaxed-constexpr). The one exception is the
// blocked in-block bit: core's block_bit() reads the host table kBlockSalts,
// which device code cannot see (nvcc compiles that read to a `trap`, silently),
// so the salts are copied into __constant__ memory at compile time from the
// same constexpr BlockSalts constructor, and salted_bit() below repeats
// block_bit's one-line formula; static_asserts below hold the two equal.
//
// Both layouts are seen as "k bit positions inside a segment of
// segment_words * 64 bits": flat positions are probe(h, i, s); blocked ones
// are block * B + in-block bit. The exact replay then treats them alike.
#pragma once

#include <cstdint>

#include "agebloom/core/hash.hpp"

namespace agebloom::gpu {

// The in-block bit formula of core's block_bit(), over an explicit salt table.
__host__ __device__ constexpr uint32_t salted_bit(const uint64_t* salts, uint64_t h2, uint32_t i,
                                                  uint32_t log2_block) noexcept {
  return static_cast<uint32_t>((h2 * salts[i]) >> (64 - log2_block));
}

// Salts for device code: the constexpr BlockSalts{} evaluated by the compiler.
// One 256-byte copy per translation unit (static: without -rdc an extern
// __constant__ is silently a separate, uninitialized definition per unit).
static __constant__ BlockSalts kDeviceBlockSalts = BlockSalts{};

// salted_bit() must stay core's block_bit(): checked on a few inputs here, and
// bit for bit over millions of keys by tests/gpu.
static_assert(salted_bit(BlockSalts{}.salt, 0x9e3779b97f4a7c15ULL, 0, 9) == block_bit(0x9e3779b97f4a7c15ULL, 0, 9));
static_assert(salted_bit(BlockSalts{}.salt, 0x0123456789abcdefULL, 31, 6) == block_bit(0x0123456789abcdefULL, 31, 6));
static_assert(salted_bit(BlockSalts{}.salt, 0xfedcba9876543210ULL, 17, 8) == block_bit(0xfedcba9876543210ULL, 17, 8));

struct GuardedEpochRef {
  uint64_t* words = nullptr;   // (r+1) * segment_words, segment j at j * segment_words
  uint64_t segment_words = 0;
  uint64_t segment_bits = 0;   // s: the flat probe range
  uint64_t blocks = 0;         // blocked: blocks per segment; 0 = flat
  uint32_t log2_block = 0;     // blocked: log2(B)
  uint32_t k = 0;
  uint32_t segments = 0;       // r + 1

  __device__ uint64_t* segment(uint32_t j) const noexcept { return words + j * segment_words; }

  // Position of the key's i-th bit inside a segment, as the CPU filter sets it.
  __device__ uint64_t position(KeyHash h, uint32_t i) const noexcept {
    if (blocks == 0) return probe(h, i, segment_bits);
    return (reduce(h.h1, blocks) << log2_block) + salted_bit(kDeviceBlockSalts.salt, h.h2, i, log2_block);
  }

  __device__ bool segment_contains(uint32_t j, KeyHash h) const noexcept {
    const uint64_t* seg = segment(j);
    for (uint32_t i = 0; i < k; ++i) {
      const uint64_t p = position(h, i);
      if (!((seg[p / 64] >> (p % 64)) & 1u)) return false;
    }
    return true;
  }

  // contains(): one segment holding all k bits is enough (paper 000, §2).
  __device__ bool contains(KeyHash h) const noexcept {
    for (uint32_t j = 0; j < segments; ++j)
      if (segment_contains(j, h)) return true;
    return false;
  }

  // Sets the key's bits in segment j. Other threads insert concurrently into
  // the same words, hence the atomic OR (order does not matter for an OR).
  __device__ void insert(uint32_t j, KeyHash h) const noexcept {
    uint64_t* seg = segment(j);
    for (uint32_t i = 0; i < k; ++i) {
      const uint64_t p = position(h, i);
      atomicOr(reinterpret_cast<unsigned long long*>(seg + p / 64), 1ull << (p % 64));
    }
  }
};

}  // namespace agebloom::gpu
