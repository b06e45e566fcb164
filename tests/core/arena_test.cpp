#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "agebloom/agebloom.hpp"

namespace ab = agebloom;

TEST(Arena, CarvesAlignedToCacheLineByDefault) {
  alignas(64) static unsigned char buf[4096];
  for (size_t offset : {0, 1, 7, 33, 63}) {
    ab::Arena arena(buf + offset, sizeof buf - offset);
    auto a = arena.carve(10);
    auto b = arena.carve(100);
    ASSERT_TRUE(a && b);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(*a) % 64, 0u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(*b) % 64, 0u);
    EXPECT_GE(static_cast<unsigned char*>(*b), static_cast<unsigned char*>(*a) + 64);
  }
}

TEST(Arena, HonoursRequestedAlignment) {
  alignas(4096) static unsigned char buf[3 * 4096];
  ab::Arena arena(buf + 8, sizeof buf - 8);
  auto p = arena.carve(1, 4096);
  ASSERT_TRUE(p);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(*p) % 4096, 0u);
  EXPECT_EQ(arena.carve(1, 48).code(), ab::Errc::arena_misaligned);
}

TEST(Arena, ExhaustionIsAnErrorAndLeavesArenaUnchanged) {
  alignas(64) static unsigned char buf[256];
  ab::Arena arena(buf, sizeof buf);
  ASSERT_TRUE(arena.carve(128));
  const size_t used = arena.used();
  auto big = arena.carve(129);
  EXPECT_FALSE(big);
  EXPECT_EQ(big.code(), ab::Errc::arena_too_small);
  EXPECT_EQ(arena.used(), used);
  EXPECT_TRUE(arena.carve(128));
  EXPECT_EQ(arena.carve(1).code(), ab::Errc::arena_too_small);
  EXPECT_EQ(arena.remaining(), 0u);
}

TEST(Arena, OverflowingSizesAreRejected) {
  alignas(64) static unsigned char buf[256];
  ab::Arena arena(buf, sizeof buf);
  EXPECT_EQ(arena.carve(SIZE_MAX).code(), ab::Errc::arena_too_small);
  EXPECT_EQ(arena.carve_array<uint64_t>(SIZE_MAX / 4).code(), ab::Errc::arena_too_small);
  ab::Arena null_arena(nullptr, 1000);
  EXPECT_EQ(null_arena.capacity(), 0u);
  EXPECT_FALSE(null_arena.carve(1));
}

// bytes_needed(config) is exactly enough from any base address, and one byte
// less fails for some base: the sizing and the carving agree.
TEST(Arena, BytesNeededMatchesCreateFromAnyBase) {
  for (uint32_t block : {0u, 64u, 512u}) {
    auto cfg = ab::GuardedEpochConfig::for_fpr(ab::Window::count(5000), 0.01, {.r = 4, .block_bits = block});
    ASSERT_TRUE(cfg);
    auto need = ab::GuardedEpochFilter::bytes_needed(*cfg);
    ASSERT_TRUE(need);
    std::vector<unsigned char> storage(*need + 128);
    const auto base = reinterpret_cast<uintptr_t>(storage.data());
    const size_t to_line = (64 - base % 64) % 64;
    bool some_base_failed_with_one_less = false;
    for (size_t off = 0; off < 64; ++off) {
      unsigned char* p = storage.data() + to_line + off;
      ab::Arena exact(p, *need);
      EXPECT_TRUE(ab::GuardedEpochFilter::create(*cfg, exact)) << "offset " << off;
      ab::Arena short_by_one(p, *need - 1);
      auto f = ab::GuardedEpochFilter::create(*cfg, short_by_one);
      if (!f) {
        EXPECT_EQ(f.code(), ab::Errc::arena_too_small);
        EXPECT_EQ(short_by_one.used(), 0u);  // rewound
        some_base_failed_with_one_less = true;
      }
    }
    EXPECT_TRUE(some_base_failed_with_one_less);
  }
}

// A filter is a handle (docs/API.md): its copies share the arena's state,
// and a filter created in another arena is independent. The documented
// contract, checked, so a change to it cannot go unnoticed.
TEST(Arena, FilterCopiesShareStateSecondArenaDoesNot) {
  auto cfg = ab::GuardedEpochConfig::for_fpr(ab::Window::count(5000), 0.001, {.r = 4});
  ASSERT_TRUE(cfg);
  const size_t need = *ab::GuardedEpochFilter::bytes_needed(*cfg);
  std::vector<unsigned char> a(need + 64), b(need + 64);
  ab::Arena arena_a(a.data(), a.size()), arena_b(b.data(), b.size());
  auto one = ab::GuardedEpochFilter::create(*cfg, arena_a);
  auto other = ab::GuardedEpochFilter::create(*cfg, arena_b);
  ASSERT_TRUE(one && other);
  ab::GuardedEpochFilter copy = *one;
  const ab::Hasher hash(7);
  const uint64_t key = 42;
  copy.insert(hash(&key, sizeof key));
  EXPECT_TRUE(one->contains(hash(&key, sizeof key)));     // the copy wrote the original's state
  EXPECT_EQ(one->insertions(), 1u);
  EXPECT_FALSE(other->contains(hash(&key, sizeof key)));  // another arena, another filter
  // Named sizing parameters land where they are named, for each structure.
  auto il = ab::InterleavedEpochConfig::for_fpr(ab::Window::count(5000), 0.01, {.lane_bits = 32, .r = 7});
  ASSERT_TRUE(il);
  EXPECT_EQ(il->lane_bits, 32u);
  EXPECT_EQ(il->r, 7u);
  auto ge = ab::GuardedEpochConfig::for_fpr(ab::Window::count(5000), 0.01, {.r = 7, .block_bits = 256});
  ASSERT_TRUE(ge);
  EXPECT_EQ(ge->r, 7u);
  EXPECT_EQ(ge->block_bits, 256u);
}
