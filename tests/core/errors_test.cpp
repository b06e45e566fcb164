// One test per invalid input: each gets its own error code and message.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "agebloom/agebloom.hpp"

namespace ab = agebloom;
using ab::Errc;
using ab::GuardedEpochConfig;
using ab::Window;

namespace {
GuardedEpochConfig valid() {
  GuardedEpochConfig c;
  c.window = Window::count(1000);
  c.r = 4;
  c.k = 7;
  c.segment_bits = 4096;
  return c;
}
}  // namespace

TEST(Errors, EveryCodeHasADistinctMessage) {
  std::set<std::string> seen;
  for (int i = 0; i <= static_cast<int>(Errc::distinct_model_invalid); ++i) {
    const std::string m = ab::message(static_cast<Errc>(i));
    EXPECT_FALSE(m.empty());
    EXPECT_NE(m, "unknown error");
    EXPECT_TRUE(seen.insert(m).second) << m;
  }
}

TEST(Errors, ValidConfigPasses) { EXPECT_TRUE(valid().validate()); }

TEST(Errors, WindowZero) {
  auto c = valid();
  c.window = Window::count(0);
  EXPECT_EQ(c.validate().code(), Errc::window_zero);
  EXPECT_EQ(GuardedEpochConfig::for_fpr(Window::count(0), 0.01).code(), Errc::window_zero);
}

TEST(Errors, TimeSpanZero) {
  auto c = valid();
  c.window = Window::time(0);
  EXPECT_EQ(c.validate().code(), Errc::time_span_zero);
  EXPECT_EQ(GuardedEpochConfig::for_fpr(Window::time(0), 0.01, {.r = 8, .capacity = 100}).code(),
            Errc::time_span_zero);
}

TEST(Errors, FprOutOfRange) {
  for (double p : {0.0, 1.0, -0.5, 1.5, __builtin_nan("")})
    EXPECT_EQ(GuardedEpochConfig::for_fpr(Window::count(1000), p).code(), Errc::fpr_out_of_range) << p;
}

TEST(Errors, KOutOfRange) {
  auto c = valid();
  c.k = 0;
  EXPECT_EQ(c.validate().code(), Errc::k_out_of_range);
  c.k = GuardedEpochConfig::kMaxK + 1;
  EXPECT_EQ(c.validate().code(), Errc::k_out_of_range);
}

TEST(Errors, SegmentsOutOfRange) {
  auto c = valid();
  c.r = 0;
  EXPECT_EQ(c.validate().code(), Errc::segments_out_of_range);
  c.r = GuardedEpochConfig::kMaxSegments;  // r + 1 segments would exceed the maximum
  EXPECT_EQ(c.validate().code(), Errc::segments_out_of_range);
  // r + 1 must not wrap to 0 (a time window has no span >= r check to catch it).
  c.window = agebloom::Window::time(1000);
  c.r = UINT32_MAX;
  EXPECT_EQ(c.validate().code(), Errc::segments_out_of_range);
  agebloom::InterleavedEpochConfig il;
  il.window = agebloom::Window::time(1000);
  il.k = 4;
  il.lines = 100;
  il.r = UINT32_MAX;
  EXPECT_EQ(il.validate().code(), Errc::segments_out_of_range);
}

TEST(Errors, WindowSmallerThanSegments) {
  auto c = valid();
  c.window = Window::count(3);
  EXPECT_EQ(c.validate().code(), Errc::window_smaller_than_segments);
}

TEST(Errors, BlockSizeInvalid) {
  for (uint32_t b : {1u, 32u, 100u, 96u, 1024u}) {
    auto c = valid();
    c.block_bits = b;
    EXPECT_EQ(c.validate().code(), Errc::block_size_invalid) << b;
  }
}

TEST(Errors, BudgetTooSmall) {
  auto c = valid();
  c.segment_bits = 63;
  EXPECT_EQ(c.validate().code(), Errc::budget_too_small);
  c.segment_bits = 256;
  c.block_bits = 512;
  EXPECT_EQ(c.validate().code(), Errc::budget_too_small);
  EXPECT_EQ(GuardedEpochConfig::for_bits_per_item(Window::count(1000), 0.0, 4).code(),
            Errc::budget_too_small);
}

TEST(Errors, CapacityZeroForTimeWindows) {
  EXPECT_EQ(GuardedEpochConfig::for_fpr(Window::time(1000), 0.01, {.r = 4}).code(), Errc::capacity_zero);
}

TEST(Errors, ArenaTooSmall) {
  alignas(64) static unsigned char buf[1024];
  ab::Arena arena(buf, sizeof buf);
  auto f = ab::GuardedEpochFilter::create(valid(), arena);
  EXPECT_EQ(f.code(), Errc::arena_too_small);
  EXPECT_STREQ(f.what(), "arena is too small for the structure");
}

TEST(Errors, InvalidConfigIsRejectedByCreateAndBytesNeeded) {
  alignas(64) static unsigned char buf[1 << 16];
  ab::Arena arena(buf, sizeof buf);
  auto c = valid();
  c.k = 0;
  EXPECT_EQ(ab::GuardedEpochFilter::bytes_needed(c).code(), Errc::k_out_of_range);
  EXPECT_EQ(ab::GuardedEpochFilter::create(c, arena).code(), Errc::k_out_of_range);
  EXPECT_EQ(arena.used(), 0u);
}
