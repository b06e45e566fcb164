// Timestamp-cell filters: the Timing and Block Timing Bloom filters
// (filters/block_timing.hpp) and the continuous 4-bit clock filter
// (filters/clock.hpp), with a fake clock: sizing rules, the exact expiry
// boundary, the sweep's bound per insertion, the clock's wrap-round flaw
// fixed, and every error path. (The registry's property suite adds live FNR
// 0 over random streams, staleness, the model and time going backwards.)
#include <gtest/gtest.h>

#include <vector>

#include "agebloom/filters/block_timing.hpp"
#include "agebloom/filters/clock.hpp"
#include "owned_filter.hpp"

using namespace agebloom;

namespace {

const Hasher kHash(0x7b1f);
KeyHash key(uint64_t i) { return kHash(&i, sizeof i); }

using Timing = OwnedFilter<BlockTimingFilter>;
using Clock = OwnedFilter<ClockFilter>;

}  // namespace

// The TBF needs O(log w) bits per timer (Sec. 3.2: w = 2^20 takes 21 with
// its padding); the BTBF's default is bpt = k (at least 3) with the sweep at
// most k timers per insertion (Sec. 5.1.2).
TEST(Timing, SizingRules) {
  auto tbf = BlockTimingConfig::for_fpr(Window::count(1 << 20), 0.01, {.capacity = 0, .tbf = true});
  ASSERT_TRUE(tbf) << tbf.what();
  EXPECT_EQ(tbf->block, 1u);
  EXPECT_GE(tbf->bpt, 21u);
  EXPECT_LE(tbf->model_fpr(), 0.01);
  auto btbf = BlockTimingConfig::for_fpr(Window::count(1 << 20), 0.01);
  ASSERT_TRUE(btbf) << btbf.what();
  EXPECT_EQ(btbf->bpt, btbf->k < 3 ? 3 : btbf->k);
  EXPECT_GT(btbf->block, 1u);
  EXPECT_LE(math::ceil_div(btbf->sweep_per_step(), btbf->block), btbf->k);
  EXPECT_LE(btbf->model_fpr(), 0.01);
  EXPECT_LT(btbf->bits_per_item(), tbf->bits_per_item());
  std::printf("W=2^20, 1%%: TBF bpt %u, %.0f bits/item; BTBF k=%u bpt %u B=%llu P=%llu, %.1f bits/item\n", tbf->bpt,
              tbf->bits_per_item(), btbf->k, btbf->bpt, static_cast<unsigned long long>(btbf->block),
              static_cast<unsigned long long>(btbf->padding), btbf->bits_per_item());
}

// The expiry boundary: a key is reported while I_x < w (no false negative),
// and once no timer of it can still be young, it is not: with m much larger
// than w, collisions aside, a TBF key is gone after w + 1 insertions and a
// BTBF key after w + B.
TEST(Timing, ExpiryBoundary) {
  for (bool tbf : {true, false}) {
    SCOPED_TRACE(tbf ? "tbf" : "btbf");
    const uint64_t W = 1000;
    auto c = BlockTimingConfig::for_fpr(Window::count(W), 1e-6, {.capacity = 0, .tbf = tbf});
    ASSERT_TRUE(c) << c.what();
    Timing o(*c);
    uint64_t next = 1'000'000;
    o.filter.insert(key(0));
    for (uint64_t i = 0; i + 1 < W; ++i) o.filter.insert(key(next++));  // I_x = W - 1: still in the window
    EXPECT_TRUE(o.filter.contains(key(0)));
    for (uint64_t i = 0; i < c->block + 1; ++i) o.filter.insert(key(next++));
    EXPECT_FALSE(o.filter.contains(key(0))) << "B = " << c->block;
  }
}

// Idle gaps in a time window: one step at a time (the incremental sweep),
// and a jump longer than the window (one pass), both expire what they must
// and keep what is live.
TEST(Timing, TimeWindowSteps) {
  const uint64_t T = 1'000'000;
  auto c = BlockTimingConfig::for_fpr(Window::time(T), 0.001, {.capacity = 5000});
  ASSERT_TRUE(c) << c.what();
  Timing o(*c);
  ASSERT_TRUE(o.filter.advance(10 * T));
  for (uint64_t i = 0; i < 2000; ++i) o.filter.insert(key(i));
  ASSERT_TRUE(o.filter.advance(10 * T + T / 2));
  for (uint64_t i = 0; i < 2000; ++i) ASSERT_TRUE(o.filter.contains(key(i)));
  ASSERT_TRUE(o.filter.advance(10 * T + T));  // exactly T after: still inside
  for (uint64_t i = 0; i < 2000; ++i) ASSERT_TRUE(o.filter.contains(key(i)));
  ASSERT_TRUE(o.filter.advance(12 * T + c->block));
  uint64_t left = 0;
  for (uint64_t i = 0; i < 2000; ++i) left += o.filter.contains(key(i));
  EXPECT_EQ(left, 0u);
  EXPECT_EQ(o.filter.fill_ratio(), 0.0);
  EXPECT_EQ(o.filter.advance(12 * T).code(), Errc::time_went_backwards);
}

// The continuous filter's known flaw: a cell untouched for 15 ticks wraps
// round and looks fresh. With the sweep it does not, over time ticks and
// over count ticks.
TEST(Clock, NoWrapRoundAfterFifteenTicks) {
  const uint64_t T = 1'000'000;
  auto c = ClockConfig::for_fpr(Window::time(T), 0.001, {.capacity = 1000});
  ASSERT_TRUE(c) << c.what();
  Clock o(*c);
  uint64_t now = 5 * T;
  ASSERT_TRUE(o.filter.advance(now));
  o.filter.insert(key(42));
  // 15 ticks of TTL/2, one at a time: the clock comes back to the same slot.
  const uint32_t slot = o.filter.slot();
  for (int t = 0; t < 15; ++t) ASSERT_TRUE(o.filter.advance(now += c->tick_length()));
  EXPECT_EQ(o.filter.slot(), slot);
  EXPECT_FALSE(o.filter.contains(key(42))) << "the cells wrapped round and looked fresh";
  // The same on the count clock: 15 ticks of W/2 insertions of other keys.
  auto cc = ClockConfig::for_fpr(Window::count(200), 1e-6);
  ASSERT_TRUE(cc);
  Clock q(*cc);
  q.filter.insert(key(7));
  for (uint64_t i = 0; i < 15 * cc->tick_length(); ++i) q.filter.insert(key(1000 + i));
  EXPECT_FALSE(q.filter.contains(key(7)));
}

// Keys live between TTL and (1 + 1/divisor)·TTL: present right up to TTL,
// gone once divisor + 1 ticks have passed.
TEST(Clock, LifetimeBounds) {
  const uint64_t W = 1000;
  auto c = ClockConfig::for_fpr(Window::count(W), 1e-6);
  ASSERT_TRUE(c);
  Clock o(*c);
  o.filter.insert(key(1));
  uint64_t next = 100;
  for (uint64_t i = 0; i < W; ++i) o.filter.insert(key(next++));
  EXPECT_TRUE(o.filter.contains(key(1))) << "inside the window";
  for (uint64_t i = 0; i < W / c->divisor + c->tick_length(); ++i) o.filter.insert(key(next++));
  EXPECT_FALSE(o.filter.contains(key(1))) << "past (1 + 1/divisor)·W";
}

TEST(Timing, ErrorPaths) {
  BlockTimingConfig c;
  c.window = Window::count(1000);
  c.k = 4;
  c.timers = 10000;
  c.bpt = 8;
  c.block = 10;
  EXPECT_TRUE(c.validate());
  auto with = [&](auto change) {
    BlockTimingConfig x = c;
    change(x);
    return x.validate().code();
  };
  EXPECT_EQ(with([](auto& x) { x.bpt = 2; }), Errc::timer_bits_invalid);
  EXPECT_EQ(with([](auto& x) { x.bpt = 33; }), Errc::timer_bits_invalid);
  EXPECT_EQ(with([](auto& x) { x.bpt = 5; }), Errc::timer_bits_invalid);  // T_max = 101 needs 7 bits
  EXPECT_EQ(with([](auto& x) { x.block = 0; }), Errc::block_invalid);
  EXPECT_EQ(with([](auto& x) { x.block = 2000; }), Errc::block_invalid);
  EXPECT_EQ(with([](auto& x) { x.padding = 5000; }), Errc::padding_invalid);
  EXPECT_EQ(with([](auto& x) { x.k = 0; }), Errc::k_out_of_range);
  EXPECT_EQ(with([](auto& x) { x.window = Window::count(0); }), Errc::window_zero);
  EXPECT_EQ(with([](auto& x) { x.window = Window::time(1000); }), Errc::capacity_zero);
  EXPECT_EQ(BlockTimingConfig::for_fpr(Window::count(1000), 1e-300).code(), Errc::too_large);
  ClockConfig k;
  k.window = Window::count(1000);
  k.k = 4;
  k.cells = 1000;
  EXPECT_TRUE(k.validate());
  k.divisor = 0;
  EXPECT_EQ(k.validate().code(), Errc::divisor_invalid);
  k.divisor = 8;
  EXPECT_EQ(k.validate().code(), Errc::divisor_invalid);
  std::vector<unsigned char> mem(*BlockTimingFilter::bytes_needed(c));
  Arena small(mem.data(), mem.size() - 64);
  EXPECT_EQ(BlockTimingFilter::create(c, small).code(), Errc::arena_too_small);
}
