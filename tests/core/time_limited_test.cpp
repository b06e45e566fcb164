// The time-limited Bloom filter (filters/time_limited.hpp) with a fake clock
// and no sleeps: the reference implementation's tests, rate steps, the
// budget's promise, idle gaps, time going backwards, and every error path.
#include <gtest/gtest.h>

#include <cstdio>
#include <deque>
#include <utility>
#include <vector>

#include "agebloom/filters/time_limited.hpp"
#include "owned_filter.hpp"

using namespace agebloom;

namespace {

constexpr uint64_t kSecond = 1'000'000'000;  // ticks are nanoseconds here
const Hasher kHash(0x71b5);
KeyHash key(uint64_t i) { return kHash(&i, sizeof i); }

using Owned = OwnedFilter<TimeLimitedFilter>;

double fpr_of(const TimeLimitedFilter& f, uint64_t base, uint64_t n) {
  uint64_t hits = 0;
  for (uint64_t i = 0; i < n; ++i) hits += f.contains(key(base + i));
  return static_cast<double>(hits) / static_cast<double>(n);
}

}  // namespace

// The reference implementation's tests: FP 1% and capacity 1000 give
// k = 10, l = 25 (35 slices); over a count window of 1000, after 20,000
// insertions the last 1000 are present and the FPR is below 1.5%.
TEST(TimeLimited, ReferenceCountWindow) {
  auto c = TimeLimitedConfig::for_fpr(Window::count(1000), 0.01, {.capacity = 1000});
  ASSERT_TRUE(c) << c.what();
  EXPECT_EQ(c->k, 10u);
  EXPECT_EQ(c->l, 25u);
  Owned o(*c);
  EXPECT_EQ(o.filter.slices(), 35u);
  for (uint64_t i = 0; i < 20000; ++i) o.filter.insert(key(i));
  for (uint64_t i = 19000; i < 20000; ++i) ASSERT_TRUE(o.filter.contains(key(i))) << i;
  EXPECT_LT(fpr_of(o.filter, 1u << 30, 100000), 0.015);
  EXPECT_EQ(o.filter.saturations(), 0u);
}

// ... and over a time window (capacity 100, T = 1 s): 1000 distinct keys
// inserted at one instant are all present, still present at 0.5 s, and all
// absent after 2 s, with no insertion in between.
TEST(TimeLimited, ReferenceTimeWindow) {
  auto c = TimeLimitedConfig::for_fpr(Window::time(kSecond), 0.01, {.capacity = 100});
  ASSERT_TRUE(c);
  Owned o(*c);
  const uint64_t t0 = 7 * kSecond;
  ASSERT_TRUE(o.filter.advance(t0));
  for (uint64_t i = 0; i < 1000; ++i) o.filter.insert(key(i));
  for (uint64_t i = 0; i < 1000; ++i) ASSERT_TRUE(o.filter.contains(key(i))) << i;
  ASSERT_TRUE(o.filter.advance(t0 + kSecond / 2));
  for (uint64_t i = 0; i < 1000; ++i) ASSERT_TRUE(o.filter.contains(key(i))) << i;
  ASSERT_TRUE(o.filter.advance(t0 + 2 * kSecond));
  for (uint64_t i = 0; i < 1000; ++i) EXPECT_FALSE(o.filter.contains(key(i))) << i;
}

// Rate steps x10 and x0.1 around a planned 1000 keys per second: no key
// younger than T is ever missed, the slice count rises for a while after a
// step and returns to k + l, memory follows the rate, and the FPR stays near
// the target.
TEST(TimeLimited, FollowsRateStepsWithoutLosingLiveKeys) {
  auto c = TimeLimitedConfig::for_fpr(Window::time(kSecond), 0.01, {.capacity = 1000});
  ASSERT_TRUE(c);
  Owned o(*c);
  const uint32_t base_slices = c->k + c->l;
  uint64_t now = kSecond, next = 0;
  std::deque<std::pair<uint64_t, uint64_t>> live;  // key, tick
  struct Phase {
    uint64_t per_second;
    uint32_t max_slices = 0;
    uint64_t max_bits = 0, end_bits = 0;
    double fpr = 0;
  };
  std::vector<Phase> phases = {{1000}, {10000}, {1000}, {100}, {1000}};
  for (Phase& p : phases) {
    const uint64_t step = kSecond / p.per_second;
    for (uint64_t i = 0; i < 6 * p.per_second; ++i) {  // six seconds each
      now += step;
      ASSERT_TRUE(o.filter.advance(now));
      // Every key of the last T: present (checked on a rolling sample).
      while (!live.empty() && now - live.front().second > kSecond) live.pop_front();
      if (i % 7 == 0) {
        for (size_t j = 0; j < live.size(); j += live.size() / 16 + 1) {
          ASSERT_TRUE(o.filter.contains(key(live[j].first))) << "rate " << p.per_second << " age " << now - live[j].second;
        }
      }
      o.filter.insert(key(next));
      live.emplace_back(next++, now);
      p.max_slices = std::max(p.max_slices, o.filter.slices());
      p.max_bits = std::max(p.max_bits, o.filter.bits_in_use());
    }
    for (const auto& [k, t] : live) ASSERT_TRUE(o.filter.contains(key(k)));
    p.end_bits = o.filter.bits_in_use();
    p.fpr = fpr_of(o.filter, 1ull << 40, 50000);
    std::printf("rate %6llu/s: slices max %u end %u, bits max %llu end %llu, g* %llu, FPR %.4f\n",
                static_cast<unsigned long long>(p.per_second), p.max_slices, o.filter.slices(),
                static_cast<unsigned long long>(p.max_bits), static_cast<unsigned long long>(p.end_bits),
                static_cast<unsigned long long>(o.filter.generation_target()), p.fpr);
    EXPECT_EQ(o.filter.slices(), base_slices) << "back to k + l after six spans at a steady rate";
    EXPECT_LT(p.fpr, 0.02);
  }
  EXPECT_GT(phases[1].max_slices, base_slices) << "a x10 step grows the filter for a while";
  EXPECT_GT(phases[1].end_bits, 5 * phases[0].end_bits) << "memory follows the rate up";
  EXPECT_LT(phases[3].end_bits, phases[2].end_bits / 2) << "and down";
  EXPECT_EQ(o.filter.saturations(), 0u) << "the default budget takes a x10 step";
}

// At a steady rate, bits per window key against the paper's Table 2 (bits
// per element, min-max: 0.1: 10-13; 0.01: 19-24; 0.001: 26-35), and the
// model FPR against the FPR measured at the end of a generation.
TEST(TimeLimited, BitsPerElementAndModelAtSteadyRate) {
  struct Row {
    double fpr, lo, hi;
  };
  for (const Row& r : {Row{0.1, 10, 13}, Row{0.01, 19, 24}, Row{0.001, 26, 35}}) {
    const uint64_t W = 100000;
    auto c = TimeLimitedConfig::for_fpr(Window::count(W), r.fpr, {.capacity = W});
    ASSERT_TRUE(c);
    Owned o(*c);
    uint64_t i = 0;
    for (; i < 10 * W; ++i) o.filter.insert(key(i));
    while (o.filter.insertions_before_shift() != 0) o.filter.insert(key(i++));
    const double bits = static_cast<double>(o.filter.bits_in_use()) / W, measured = fpr_of(o.filter, 1ull << 44, 400000);
    std::printf("FP %g: k=%u l=%u, %.1f bits per window key (paper %.0f-%.0f), model FPR %.5f, measured %.5f\n", r.fpr,
                c->k, c->l, bits, r.lo, r.hi, c->model_fpr(), measured);
    EXPECT_GE(bits, r.lo - 1.5);
    EXPECT_LE(bits, r.hi + 1.5);
    EXPECT_NEAR(c->model_fpr(), measured, 0.15 * measured);
  }
}

// When the budget holds only live slices, a shift is skipped, not a key:
// every key of the last T is still present, the FPR rises, saturations()
// says so; once the surge has aged out the filter recovers.
TEST(TimeLimited, ExhaustedBudgetKeepsEveryLiveKey) {
  auto base = TimeLimitedConfig::for_fpr(Window::time(kSecond), 0.01, {.capacity = 1000});
  ASSERT_TRUE(base);
  // The minimum budget: exactly the k + l steady slices.
  auto c = TimeLimitedConfig::with_shape(Window::time(kSecond), base->k, base->l, 1000, base->steady_bits());
  ASSERT_TRUE(c) << c.what();
  Owned o(*c);
  uint64_t now = kSecond;
  const uint64_t surge = 50000;  // 50 times the planned rate, in one second
  for (uint64_t i = 0; i < surge; ++i) {
    now += kSecond / surge;
    ASSERT_TRUE(o.filter.advance(now));
    o.filter.insert(key(i));
  }
  EXPECT_GT(o.filter.saturations(), 0u);
  EXPECT_LE(o.filter.bits_in_use(), c->budget_bits);
  for (uint64_t i = 0; i < surge; ++i) ASSERT_TRUE(o.filter.contains(key(i))) << i;
  const double high = fpr_of(o.filter, 1ull << 41, 20000);
  EXPECT_GT(high, c->model_fpr()) << "the FPR rises while the budget is exhausted";
  // Back to the planned rate for three spans: the surge ages out.
  for (uint64_t i = 0; i < 3000; ++i) {
    now += kSecond / 1000;
    ASSERT_TRUE(o.filter.advance(now));
    o.filter.insert(key((1ull << 42) + i));
  }
  for (uint64_t i = 2000; i < 3000; ++i) ASSERT_TRUE(o.filter.contains(key((1ull << 42) + i)));
  EXPECT_LT(fpr_of(o.filter, 1ull << 43, 20000), 0.02);
}

TEST(TimeLimited, IdleGapEmptiesAndTimeBackwardsChangesNothing) {
  auto c = TimeLimitedConfig::for_fpr(Window::time(kSecond), 0.01, {.capacity = 1000});
  ASSERT_TRUE(c);
  Owned o(*c);
  ASSERT_TRUE(o.filter.advance(10 * kSecond));
  for (uint64_t i = 0; i < 500; ++i) o.filter.insert(key(i));
  const std::vector<unsigned char> before = o.state();
  EXPECT_EQ(o.filter.advance(10 * kSecond - 1).code(), Errc::time_went_backwards);
  EXPECT_EQ(o.state(), before);
  for (uint64_t i = 0; i < 500; ++i) EXPECT_TRUE(o.filter.contains(key(i)));
  ASSERT_TRUE(o.filter.advance(12 * kSecond));  // longer than T without an insertion
  EXPECT_EQ(o.filter.fill_ratio(), 0.0);
  for (uint64_t i = 0; i < 500; ++i) EXPECT_FALSE(o.filter.contains(key(i)));
  o.filter.insert(key(1));  // and it starts again
  EXPECT_TRUE(o.filter.contains(key(1)));
}

TEST(TimeLimited, OperationFormsAgree) {
  auto c = TimeLimitedConfig::for_fpr(Window::count(2000), 0.01, {.capacity = 2000});
  ASSERT_TRUE(c);
  Owned a(*c), b(*c);
  std::vector<KeyHash> keys;
  for (uint64_t i = 0; i < 30000; ++i) keys.push_back(key(i % 7000));
  bool got[64];
  for (size_t at = 0; at < keys.size(); at += 64) {
    const size_t n = std::min<size_t>(64, keys.size() - at);
    a.filter.test_and_insert_bulk(&keys[at], n, got);
    for (size_t i = 0; i < n; ++i) {
      const bool v = b.filter.contains(keys[at + i]);
      b.filter.insert(keys[at + i]);
      ASSERT_EQ(got[i], v) << at + i;
    }
  }
  // The same state: byte for byte, counters, slices, and every answer.
  EXPECT_EQ(a.state(), b.state());
  EXPECT_EQ(a.filter.insertions(), b.filter.insertions());
  EXPECT_EQ(a.filter.slices(), b.filter.slices());
  EXPECT_EQ(a.filter.bits_in_use(), b.filter.bits_in_use());
  EXPECT_EQ(a.filter.shifts(), b.filter.shifts());
  EXPECT_EQ(a.filter.fill_ratio(), b.filter.fill_ratio());
  for (uint64_t i = 0; i < 20000; ++i) ASSERT_EQ(a.filter.contains(key(i)), b.filter.contains(key(i))) << i;
}

TEST(TimeLimited, ErrorPaths) {
  const Window t = Window::time(kSecond);
  EXPECT_EQ(TimeLimitedConfig::for_fpr(Window::time(0), 0.01).code(), Errc::time_span_zero);
  EXPECT_EQ(TimeLimitedConfig::for_fpr(t, 0.0).code(), Errc::fpr_out_of_range);
  EXPECT_EQ(TimeLimitedConfig::for_fpr(t, 1e-300).code(), Errc::k_out_of_range);
  EXPECT_EQ(TimeLimitedConfig::with_shape(t, 0, 10).code(), Errc::k_out_of_range);
  EXPECT_EQ(TimeLimitedConfig::with_shape(t, 10, 0).code(), Errc::l_out_of_range);
  // A capacity below one insertion per generation.
  EXPECT_EQ(TimeLimitedConfig::with_shape(t, 10, 25, 5).code(), Errc::capacity_too_small);
  // A budget smaller than the k + l minimum slices.
  auto c = TimeLimitedConfig::with_shape(t, 10, 25, 1000);
  ASSERT_TRUE(c);
  EXPECT_EQ(TimeLimitedConfig::with_shape(t, 10, 25, 1000, c->steady_bits() - 64).code(), Errc::slice_budget_too_small);
  // A slice table smaller than k + l.
  EXPECT_EQ(TimeLimitedConfig::with_shape(t, 10, 25, 1000, 0, 30).code(), Errc::segments_out_of_range);
  // Too large to build.
  EXPECT_EQ(TimeLimitedConfig::with_shape(t, 32, 100, uint64_t{1} << 60).code(), Errc::too_large);
  // An arena one line short, left as it was.
  std::vector<unsigned char> mem(*TimeLimitedFilter::bytes_needed(*c));
  Arena small(mem.data(), mem.size() - 64);
  EXPECT_EQ(TimeLimitedFilter::create(*c, small).code(), Errc::arena_too_small);
  EXPECT_EQ(small.used(), 0u);
}
