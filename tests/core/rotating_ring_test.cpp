// Rotating ring of N+1 filters (Continuous Bloom Filter (Surprenant)): the shared guarded-epoch invariant
// through the ring's own constructor, and the capacity trigger that keeps the
// FPR under overload at the price of a shorter (dynamic) window.
#include <gtest/gtest.h>

#include <deque>
#include <random>
#include <vector>

#include "agebloom/agebloom.hpp"
#include "owned_filter.hpp"

namespace ab = agebloom;
using ab::KeyHash;
using ab::RotatingRing;
using ab::Window;

namespace {
using Owned = OwnedFilter<ab::RotatingRingFilter>;
KeyHash key_hash(uint64_t key) { return ab::Hasher(0x4196)(&key, sizeof key); }

// Fraction of `probes` fresh keys the filter reports.
double fresh_fpr(ab::RotatingRingFilter& f, uint64_t probes, uint64_t base) {
  uint64_t pos = 0;
  for (uint64_t i = 0; i < probes; ++i) pos += f.contains(key_hash(base + i));
  return static_cast<double>(pos) / probes;
}
}  // namespace

TEST(RotatingRing, CountWindowKeepsTheLastWInsertions) {
  for (uint32_t n : {1u, 2u, 5u, 16u})
    for (uint32_t block : {0u, 512u}) {
      const uint64_t W = 5000;
      auto cfg = RotatingRing::config(Window::count(W), n, 0.01, block);
      ASSERT_TRUE(cfg) << cfg.what();
      EXPECT_EQ(cfg->segments(), n + 1);
      Owned f(*cfg);
      uint64_t misses = 0;
      for (uint64_t t = 0; t < 10 * W; ++t) {
        f->insert(key_hash(t));
        if (t % 1777 == 0)
          for (uint64_t a = 0; a < W && a <= t; ++a) misses += !f->contains(key_hash(t - a));
      }
      EXPECT_EQ(misses, 0u) << "N=" << n << " B=" << block;
    }
}

// Below the planned rate the capacity trigger never fires early enough to
// matter: every key of the last TTL is present.
TEST(RotatingRing, TimeWindowWithCapacityTriggerKeepsTheTtlAtPlannedRate) {
  const uint64_t T = 100000, capacity = 2000;  // planned: at most 2000 insertions per T
  auto cfg = RotatingRing::config(Window::time(T), 4, 0.01, 0, capacity, true);
  ASSERT_TRUE(cfg);
  EXPECT_EQ(cfg->epoch_capacity, 500u);
  Owned f(*cfg);
  std::deque<std::pair<uint64_t, uint64_t>> recent;
  std::mt19937_64 rng(4);
  uint64_t now = 0, misses = 0;
  for (uint64_t t = 0; t < 40000; ++t) {
    now += 60 + rng() % 20;  // ≤ 1 insertion per 60 ticks: ≤ 1667 per T
    ASSERT_TRUE(f->advance(now));
    f->insert(key_hash(t));
    recent.emplace_back(now, t);
    while (now - recent.front().first > T) recent.pop_front();
    if (t % 503 == 0)
      for (auto& [tick, k] : recent) misses += !f->contains(key_hash(k));
  }
  EXPECT_EQ(misses, 0u);
}

// At 10x the planned rate: the ring with the capacity trigger keeps its FPR
// near the target and still holds the last `capacity` insertions; the same
// ring rotating on time alone fills up and its FPR explodes.
TEST(RotatingRing, CapacityTriggerPreservesFprUnderOverload) {
  const uint64_t T = 100000, capacity = 2000;
  auto with_cap = RotatingRing::config(Window::time(T), 4, 0.01, 0, capacity, true);
  auto time_only = RotatingRing::config(Window::time(T), 4, 0.01, 0, capacity, false);
  ASSERT_TRUE(with_cap && time_only);
  Owned a(*with_cap), b(*time_only);
  uint64_t now = 0;
  for (uint64_t t = 0; t < 100000; ++t) {
    now += 5;  // 20000 insertions per T: 10x the plan
    ASSERT_TRUE(a->advance(now));
    ASSERT_TRUE(b->advance(now));
    a->insert(key_hash(t));
    b->insert(key_hash(t));
  }
  uint64_t misses = 0;
  for (uint64_t age = 0; age < capacity; ++age) misses += !a->contains(key_hash(100000 - 1 - age));
  EXPECT_EQ(misses, 0u);  // the dynamic window still covers `capacity` insertions
  const double fa = fresh_fpr(a.filter, 200000, 1ULL << 50), fb = fresh_fpr(b.filter, 200000, 1ULL << 51);
  EXPECT_LT(fa, 0.0115);  // the target (model at the capped load), with sampling slack
  EXPECT_GT(fb, 0.2);     // the time-only ring holds 5x its planned load per filter
}

TEST(RotatingRing, RotatesWhenCurrentFilterIsFull) {
  auto cfg = RotatingRing::config(Window::time(1'000'000), 3, 0.01, 0, 300, true);
  ASSERT_TRUE(cfg);
  Owned f(*cfg);
  ASSERT_TRUE(f->advance(10));
  const uint32_t first = f->current_segment();
  for (uint64_t i = 0; i < cfg->epoch_capacity; ++i) f->insert(key_hash(i));
  EXPECT_EQ(f->current_segment(), first);
  f->insert(key_hash(999));
  EXPECT_EQ(f->current_segment(), (first + 1) % cfg->segments());
}
