// Counting Bloom filter with exact window deletion (the baseline of Guarded
// Epoch Bloom Filters, §3): expiry is exact (a key answers false once its last
// copy leaves the window, unless a false positive), never a live false
// negative (saturation and ring overflow are sticky), the model within ±15%
// of the measured FPR, and every error path.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <deque>
#include <random>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "agebloom/filters/counting.hpp"
#include "owned_filter.hpp"

namespace ab = agebloom;
using ab::CountingConfig;
using ab::CountingFilter;
using ab::Errc;
using ab::KeyHash;
using ab::Window;

namespace {

using Owned = OwnedFilter<CountingFilter>;

KeyHash key_hash(uint64_t key, uint64_t seed = 0xc0c0) { return ab::Hasher(seed)(&key, sizeof key); }

static_assert(std::is_trivially_copyable_v<CountingFilter>);
static_assert(std::is_trivially_copyable_v<CountingConfig>);
// Sizing is constexpr, like every config of the core.
static_assert(CountingConfig::for_fpr(Window::count(1000), 0.01)->model_fpr() <= 0.01);

// Every counter of f.
std::vector<uint32_t> counters(const CountingFilter& f) {
  std::vector<uint32_t> v(f.config().cells);
  for (uint64_t i = 0; i < v.size(); ++i) v[i] = f.counter(i);
  return v;
}

}  // namespace

// The numbers the registry and the report quote: W = 1,000,000 at 1%.
TEST(Counting, SizingAtOneMillionAndOnePercent) {
  auto c = CountingConfig::for_fpr(Window::count(1'000'000), 0.01);
  ASSERT_TRUE(c) << c.what();
  EXPECT_EQ(c->k, 7u);
  EXPECT_EQ(c->capacity, 1'000'000u);
  EXPECT_EQ(c->ring_slots(), 1'000'000u);
  // m = ⌈-n ln f / ln²2⌉ = 9,585,059, nudged up until the model meets 1% at k = 7.
  EXPECT_GE(c->cells, 9'585'059u);
  EXPECT_LE(c->cells, 9'585'059u * 1.005);
  EXPECT_LE(c->model_fpr(), 0.01);
  EXPECT_GT(c->model_fpr(), 0.0099);
  // The ring dominates: 128 bits per item against ~38 of counters.
  EXPECT_NEAR(c->counter_bits_per_item(), 38.4, 0.1);
  EXPECT_NEAR(c->bits_per_item(), 38.4 + 128.0, 0.2);
  auto need = CountingFilter::bytes_needed(*c);
  ASSERT_TRUE(need);
  EXPECT_NEAR(static_cast<double>(*need) * 8 / 1e6, c->bits_per_item(), 0.01);
  std::printf("counting W=1M fpr=0.01: k=%u cells=%llu bits_per_item=%.3f (counters %.3f) model_fpr=%.6f\n", c->k,
              static_cast<unsigned long long>(c->cells), c->bits_per_item(), c->counter_bits_per_item(),
              c->model_fpr());

  for (double f : {0.2, 0.05, 1e-3, 1e-5, 1e-8}) {
    auto t = CountingConfig::for_fpr(Window::time(1000), f, {.capacity = 50'000});
    ASSERT_TRUE(t) << f;
    EXPECT_LE(t->model_fpr(), f);
    EXPECT_GT(t->model_fpr(), 0.9 * f);  // not wastefully oversized
    EXPECT_EQ(t->ring_slots(), 50'000u);
    EXPECT_NEAR(t->bits_per_item() - t->counter_bits_per_item(), 192.0, 0.1);  // KeyHash + tick per slot
  }
}

// Insert a key, then W others: it has left the window. Over many such keys
// the rate at which a just-expired key still answers true is the FPR of a
// key never inserted (the model), and the oldest live key always answers true.
TEST(Counting, KeyAnswersFalseOnceItLeavesTheCountWindow) {
  const uint64_t W = 20000;
  auto cfg = CountingConfig::for_fpr(Window::count(W), 0.01);
  ASSERT_TRUE(cfg);
  Owned f(*cfg);
  uint64_t expired_pos = 0, fresh_pos = 0, probes = 0, oldest_live_misses = 0;
  for (uint64_t t = 0; t < 12 * W; ++t) {
    f->insert(key_hash(t));
    if (t < 2 * W) continue;
    ++probes;
    expired_pos += f->contains(key_hash(t - W));  // inserted W + 1 insertions ago
    fresh_pos += f->contains(key_hash((1ULL << 50) + t));
    oldest_live_misses += !f->contains(key_hash(t - W + 1));  // exactly W insertions ago, counting itself
  }
  EXPECT_EQ(oldest_live_misses, 0u);
  EXPECT_EQ(f->live_entries(), W);
  EXPECT_EQ(f->saturated_insertions(), 0u);
  const double expired = static_cast<double>(expired_pos) / probes, fresh = static_cast<double>(fresh_pos) / probes;
  EXPECT_NEAR(expired / cfg->model_fpr(), 1.0, 0.15) << "expired " << expired << " model " << cfg->model_fpr();
  EXPECT_NEAR(expired / fresh, 1.0, 0.15) << "expired " << expired << " fresh " << fresh;
}

// Insert A, d - 1 others, A again, then W - d + 1 others: the first copy has
// left the window (W + 1 insertions after it), the second (W - d + 2 ago, for
// d >= 2) has not, so A answers true. d - 2 insertions later the second copy
// is the oldest live entry, still true; one more and it leaves too, and A
// answers false but for false positives.
TEST(Counting, ASecondLiveCopyKeepsTheKey) {
  const uint64_t W = 1000;
  auto cfg = CountingConfig::for_fpr(Window::count(W), 0.01);
  ASSERT_TRUE(cfg);
  uint64_t other = 1ULL << 40;
  for (uint64_t d : {2u, 3u, 10u, 500u, 998u, 999u}) {
    const int trials = 60;
    int stale = 0;
    for (int trial = 0; trial < trials; ++trial) {
      Owned f(*cfg);
      const KeyHash a = key_hash(d * 1000 + trial);
      f->insert(a);
      for (uint64_t i = 0; i + 1 < d; ++i) f->insert(key_hash(other++));
      f->insert(a);
      for (uint64_t i = 0; i < W - d + 1; ++i) f->insert(key_hash(other++));
      ASSERT_TRUE(f->contains(a)) << "d=" << d << " trial " << trial;
      for (uint64_t i = 0; i + 2 < d; ++i) f->insert(key_hash(other++));
      ASSERT_TRUE(f->contains(a)) << "the second copy is the oldest live entry: d=" << d;
      f->insert(key_hash(other++));
      stale += f->contains(a);
    }
    // Expected trials * model ≈ 0.6: anything beyond a handful is a leak.
    EXPECT_LE(stale, 5) << "d=" << d;
  }
}

// Exact deletion, structurally: after any stream the counters equal those of
// a filter fed only the live insertions (no counter saturated on the way).
TEST(Counting, CountersEqualThoseOfTheLiveInsertionsAlone) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 10; ++trial) {
    const uint64_t W = 50 + rng() % 3000;
    auto cfg = CountingConfig::for_fpr(Window::count(W), trial % 2 ? 0.01 : 0.2);
    ASSERT_TRUE(cfg);
    Owned f(*cfg), live(*cfg);
    std::vector<KeyHash> stream;
    const uint64_t n = W * (2 + rng() % 5) + rng() % W;
    for (uint64_t t = 0; t < n; ++t) {
      stream.push_back(key_hash(rng() % (2 * W)));
      f->insert(stream.back());
    }
    for (uint64_t t = n - W; t < n; ++t) live->insert(stream[t]);
    ASSERT_EQ(f->saturated_insertions(), 0u);
    EXPECT_EQ(counters(f.filter), counters(live.filter)) << "W=" << W;
    EXPECT_EQ(f->fill_ratio(), live->fill_ratio());
  }
}

// Time window with a fake clock: a key answers true through tick + T and is
// gone at tick + T + 1; insertions before the first advance() take its tick.
TEST(Counting, TimeWindowExpiresWhatEndedByNow) {
  const uint64_t T = 1000;
  auto cfg = CountingConfig::for_fpr(Window::time(T), 0.01, {.capacity = 4000});
  ASSERT_TRUE(cfg);
  Owned f(*cfg);
  ASSERT_TRUE(f->advance(10));
  for (uint64_t i = 0; i < 1000; ++i) f->insert(key_hash(i));
  ASSERT_TRUE(f->advance(500));
  for (uint64_t i = 0; i < 1000; ++i) f->insert(key_hash(10'000 + i));
  ASSERT_TRUE(f->advance(10 + T));  // now - tick = T: still live
  EXPECT_EQ(f->live_entries(), 2000u);
  for (uint64_t i = 0; i < 1000; ++i) ASSERT_TRUE(f->contains(key_hash(i)));
  ASSERT_TRUE(f->advance(10 + T + 1));  // the first thousand have ended
  EXPECT_EQ(f->live_entries(), 1000u);
  uint64_t stale = 0;
  for (uint64_t i = 0; i < 1000; ++i) stale += f->contains(key_hash(i));
  for (uint64_t i = 0; i < 1000; ++i) ASSERT_TRUE(f->contains(key_hash(10'000 + i)));
  // What remains is a filter of the second thousand alone (load 1000, not the capacity 4000).
  const double fp = ab::bloom_math::fpr(static_cast<double>(cfg->cells), 1000, cfg->k);
  EXPECT_LE(stale, 1000 * fp * 4 + 3);
  ASSERT_TRUE(f->advance(500 + T + 1));
  EXPECT_EQ(f->live_entries(), 0u);
  EXPECT_EQ(f->fill_ratio(), 0.0);  // exact: every counter back to zero
  EXPECT_EQ(f->insertions(), 2000u);

  // Before the first advance() there is no clock: the entries take its tick.
  Owned g(*cfg);
  for (uint64_t i = 0; i < 100; ++i) g->insert(key_hash(i));
  ASSERT_TRUE(g->advance(1'000'000));
  for (uint64_t i = 0; i < 100; ++i) ASSERT_TRUE(g->contains(key_hash(i)));
  ASSERT_TRUE(g->advance(1'000'000 + T));
  EXPECT_EQ(g->live_entries(), 100u);
  ASSERT_TRUE(g->advance(1'000'000 + T + 1));
  EXPECT_EQ(g->fill_ratio(), 0.0);
  // An idle gap of 2^62 ticks expires everything, in the work of the entries.
  for (uint64_t i = 0; i < 100; ++i) g->insert(key_hash(i));
  ASSERT_TRUE(g->advance(uint64_t{1} << 62));
  EXPECT_EQ(g->live_entries(), 0u);
  EXPECT_EQ(g->fill_ratio(), 0.0);
}

// No live false negatives over random streams with repeats, at every step
// (the verdict) and periodically for every live key.
TEST(Counting, CountWindowHasNoLiveFalseNegatives) {
  std::mt19937_64 rng(20261122);
  static const double fprs[] = {0.2, 0.01, 0.001};
  for (int trial = 0; trial < 20; ++trial) {
    const uint64_t W = 10 + rng() % 3000;
    auto cfg = CountingConfig::for_fpr(Window::count(W), fprs[trial % 3]);
    ASSERT_TRUE(cfg) << cfg.what();
    Owned f(*cfg);
    std::deque<uint64_t> last;
    std::unordered_map<uint64_t, uint64_t> last_seen;
    uint64_t misses = 0, checks = 0;
    for (uint64_t t = 0; t < 12 * W + 50; ++t) {
      const uint64_t key = rng() % (2 * W + 1);
      auto it = last_seen.find(key);
      const bool live = it != last_seen.end() && t - it->second <= W;
      const bool verdict = f->test_and_insert(key_hash(key));
      if (live) ++checks, misses += !verdict;
      last_seen[key] = t;
      last.push_back(key);
      if (last.size() > W) last.pop_front();
      if (t % (W / 3 + 1) == 0)
        for (uint64_t k : last) misses += !f->contains(key_hash(k));
    }
    EXPECT_GT(checks, W);
    EXPECT_EQ(misses, 0u) << "W=" << W;
  }
}

// Time windows: every key inserted within the last T ticks answers true,
// through idle gaps longer than T; with a ring too small for the rate, the
// overflowing insertions are sticky and still no live key is missed.
TEST(Counting, TimeWindowHasNoLiveFalseNegatives) {
  std::mt19937_64 rng(78);
  for (int trial = 0; trial < 12; ++trial) {
    const uint64_t T = 200 + rng() % 5000;
    const bool small_ring = trial % 3 == 2;
    // At least one tick per insertion: T + 1 slots hold every live entry.
    const uint64_t capacity = small_ring ? T / 16 + 1 : T + 1;
    auto cfg = CountingConfig::for_fpr(Window::time(T), 0.01, {.capacity = capacity});
    ASSERT_TRUE(cfg) << cfg.what();
    Owned f(*cfg);
    std::deque<std::pair<uint64_t, uint64_t>> recent;  // (tick, key)
    std::unordered_map<uint64_t, uint64_t> last_tick;
    uint64_t now = rng() % 1'000'000'000, misses = 0;
    for (uint64_t t = 0; t < 20000; ++t) {
      const uint64_t r = rng() % 2000;
      now += r == 0 ? 3 * T : r == 1 ? T + 1 : 1 + rng() % 3;
      ASSERT_TRUE(f->advance(now));
      const uint64_t key = rng() % 3000;
      auto it = last_tick.find(key);
      const bool live = it != last_tick.end() && now - it->second <= T;
      const bool verdict = f->test_and_insert(key_hash(key));
      misses += live && !verdict;
      last_tick[key] = now;
      recent.emplace_back(now, key);
      while (now - recent.front().first > T) recent.pop_front();
      if (t % 97 == 0)
        for (auto& [tick, k] : recent) misses += !f->contains(key_hash(k));
    }
    EXPECT_EQ(misses, 0u) << "T=" << T << " capacity " << capacity;
    if (small_ring) {
      EXPECT_GT(f->ring_overflows(), 0u);
    } else {
      EXPECT_EQ(f->ring_overflows(), 0u);
    }
  }
}

// The ring of a time window holds `capacity` entries: what it cannot record
// keeps its counters for good (sticky), counted, and never missed.
TEST(Counting, RingOverflowIsStickyNotAFalseNegative) {
  CountingConfig cfg;
  cfg.window = Window::time(100);
  cfg.capacity = 10;
  cfg.k = 3;
  cfg.cells = 4096;
  ASSERT_TRUE(cfg.validate());
  Owned f(cfg), overflowed(cfg);
  ASSERT_TRUE(f->advance(0));
  for (uint64_t i = 0; i < 30; ++i) f->insert(key_hash(i));
  EXPECT_EQ(f->live_entries(), 10u);
  EXPECT_EQ(f->ring_overflows(), 20u);
  for (uint64_t i = 0; i < 30; ++i) EXPECT_TRUE(f->contains(key_hash(i)));
  ASSERT_TRUE(f->advance(101));  // the ten recorded ones expire, exactly
  EXPECT_EQ(f->live_entries(), 0u);
  for (uint64_t i = 10; i < 30; ++i) {
    EXPECT_TRUE(f->contains(key_hash(i)));
    overflowed->insert(key_hash(i));
  }
  EXPECT_EQ(counters(f.filter), counters(overflowed.filter));

  // A ring larger than the capacity absorbs the burst.
  cfg.ring = 30;
  ASSERT_TRUE(cfg.validate());
  Owned g(cfg);
  ASSERT_TRUE(g->advance(0));
  for (uint64_t i = 0; i < 30; ++i) g->insert(key_hash(i));
  EXPECT_EQ(g->ring_overflows(), 0u);
  ASSERT_TRUE(g->advance(101));
  EXPECT_EQ(g->fill_ratio(), 0.0);
}

// A counter that reaches 15 is never decremented: the key stays (a stale
// positive), and the insertions that left it saturated are counted.
TEST(Counting, SaturatedCountersAreSticky) {
  CountingConfig cfg;
  cfg.window = Window::count(20);
  cfg.k = 1;
  cfg.cells = 1024;
  ASSERT_TRUE(cfg.validate());
  Owned f(cfg);
  const KeyHash a = key_hash(7);
  const uint64_t cell = ab::probe(a, 0, cfg.cells);
  for (int i = 0; i < 20; ++i) f->insert(a);
  EXPECT_EQ(f->counter(cell), 15u);
  EXPECT_EQ(f->saturated_insertions(), 6u);  // insertions 15..20
  for (uint64_t key = 1000, n = 0; n < 20; ++key)
    if (ab::probe(key_hash(key), 0, cfg.cells) != cell) f->insert(key_hash(key)), ++n;
  EXPECT_EQ(f->counter(cell), 15u);
  EXPECT_TRUE(f->contains(a));  // every copy of a has left the window: stale, by design
  EXPECT_EQ(f->saturated_insertions(), 6u);
}

TEST(Counting, TimeGoingBackwardsIsAnErrorAndChangesNothing) {
  auto cfg = CountingConfig::for_fpr(Window::time(1000), 0.01, {.capacity = 500});
  ASSERT_TRUE(cfg);
  Owned f(*cfg);
  ASSERT_TRUE(f->advance(5000));
  for (uint64_t i = 0; i < 100; ++i) f->insert(key_hash(i));
  ASSERT_TRUE(f->advance(5600));
  for (uint64_t i = 100; i < 200; ++i) f->insert(key_hash(i));
  const std::vector<unsigned char> before = f.state();
  EXPECT_EQ(f->advance(5599).code(), Errc::time_went_backwards);
  EXPECT_EQ(f->advance(0).code(), Errc::time_went_backwards);
  EXPECT_EQ(before, f.state());
  for (uint64_t i = 0; i < 200; ++i) EXPECT_TRUE(f->contains(key_hash(i)));
  // Count windows have no clock: advance() is a no-op.
  auto cc = CountingConfig::for_fpr(Window::count(100), 0.01);
  ASSERT_TRUE(cc);
  Owned g(*cc);
  for (uint64_t i = 0; i < 50; ++i) g->insert(key_hash(i));
  const std::vector<unsigned char> count_before = g.state();
  EXPECT_TRUE(g->advance(100));
  EXPECT_TRUE(g->advance(1));
  EXPECT_EQ(count_before, g.state());
}

// Measured FPR on fresh keys within ±15% of the model at steady state (the
// counters hold exactly the W live keys from then on).
TEST(Counting, MeasuredFprMatchesModel) {
  const uint64_t W = 20000;
  for (double target : {0.05, 0.01, 0.002}) {
    auto cfg = CountingConfig::for_fpr(Window::count(W), target);
    ASSERT_TRUE(cfg);
    Owned f(*cfg);
    uint64_t t = 0, probes = 0, positives = 0, next_probe = 1ULL << 52;
    for (; t < 2 * W; ++t) f->insert(key_hash(t));
    for (int round = 0; round < 20; ++round) {
      for (uint64_t i = 0; i < W / 4; ++i) f->insert(key_hash(t++));
      for (int q = 0; q < 20000; ++q, ++probes) positives += f->contains(key_hash(next_probe++));
    }
    const double measured = static_cast<double>(positives) / probes;
    EXPECT_NEAR(measured / cfg->model_fpr(), 1.0, 0.15)
        << "target " << target << " measured " << measured << " model " << cfg->model_fpr();
  }
  // A time window at its planned rate, one insertion per tick: T + 1 live.
  const uint64_t T = 20000;
  auto cfg = CountingConfig::for_fpr(Window::time(T), 0.01, {.capacity = T});
  ASSERT_TRUE(cfg);
  EXPECT_EQ(cfg->ring_slots(), T);
  cfg->ring = T + 1;  // the +1 live entry at one per tick: no overflow
  Owned g(*cfg);
  uint64_t now = 0, probes = 0, positives = 0, next_probe = 1ULL << 53;
  for (; now < 3 * T; ++now) {
    ASSERT_TRUE(g->advance(now));
    g->insert(key_hash(now));
    if (now >= 2 * T && now % 4 == 0)
      for (int q = 0; q < 40; ++q, ++probes) positives += g->contains(key_hash(next_probe++));
  }
  EXPECT_EQ(g->ring_overflows(), 0u);
  const double measured = static_cast<double>(positives) / probes;
  EXPECT_NEAR(measured / cfg->model_fpr(), 1.0, 0.15) << "time: measured " << measured << " model " << cfg->model_fpr();
}

// test_and_insert(h) == { v = contains(h); insert(h); return v; }, and every
// bulk form equals its scalar loop: same verdicts, same bytes of state.
TEST(Counting, OperationFormsAgree) {
  for (bool time : {false, true}) {
    auto cfg = time ? CountingConfig::for_fpr(Window::time(400), 0.05, {.capacity = 2000})
                    : CountingConfig::for_fpr(Window::count(3000), 0.05);
    ASSERT_TRUE(cfg);
    Owned a(*cfg), b(*cfg), c(*cfg), d(*cfg);
    std::mt19937_64 rng(time);
    std::vector<KeyHash> keys(20000);
    for (auto& k : keys) k = key_hash(rng() % 6000);
    std::vector<char> bulk(keys.size());
    for (size_t i = 0; i < keys.size(); i += 100) {
      const uint64_t now = i / 10;
      for (Owned* o : {&a, &b, &c, &d}) ASSERT_TRUE((*o)->advance(now));
      c->test_and_insert_bulk(keys.data() + i, 100, reinterpret_cast<bool*>(bulk.data() + i));
      d->insert_bulk(keys.data() + i, 100);
      for (size_t j = i; j < i + 100; ++j) {
        const bool v1 = a->test_and_insert(keys[j]);
        const bool v2 = b->contains(keys[j]);
        b->insert(keys[j]);
        ASSERT_EQ(v1, v2) << j;
        ASSERT_EQ(v1, static_cast<bool>(bulk[j])) << j;
      }
    }
    EXPECT_EQ(a.state(), b.state());
    EXPECT_EQ(a.state(), c.state());
    EXPECT_EQ(a.state(), d.state());
    std::vector<char> q(keys.size());
    a->contains_bulk(keys.data(), keys.size(), reinterpret_cast<bool*>(q.data()));
    for (size_t i = 0; i < keys.size(); ++i) ASSERT_EQ(static_cast<bool>(q[i]), b->contains(keys[i]));
  }
}

TEST(Counting, ErrorPaths) {
  // FPR out of range.
  for (double f : {0.0, 1.0, -0.5, 2.0, std::nan("")})
    EXPECT_EQ(CountingConfig::for_fpr(Window::count(1000), f).code(), Errc::fpr_out_of_range) << f;
  // Windows: empty, and a time window without capacity.
  EXPECT_EQ(CountingConfig::for_fpr(Window::count(0), 0.01).code(), Errc::window_zero);
  EXPECT_EQ(CountingConfig::for_fpr(Window::time(0), 0.01, {.capacity = 10}).code(), Errc::time_span_zero);
  EXPECT_EQ(CountingConfig::for_fpr(Window::time(1000), 0.01).code(), Errc::capacity_zero);
  auto good = CountingConfig::for_fpr(Window::count(5000), 0.01);
  ASSERT_TRUE(good);
  CountingConfig c = *good;
  c.window = Window::time(1000);
  c.capacity = 0;
  EXPECT_EQ(c.validate().code(), Errc::capacity_zero);
  // k out of range.
  for (uint32_t k : {0u, 33u}) {
    c = *good;
    c.k = k;
    EXPECT_EQ(c.validate().code(), Errc::k_out_of_range);
    EXPECT_EQ(CountingFilter::bytes_needed(c).code(), Errc::k_out_of_range);
    ab::Arena none;
    EXPECT_EQ(CountingFilter::create(c, none).code(), Errc::k_out_of_range);
  }
  // Fewer counters than one word.
  c = *good;
  c.cells = 15;
  EXPECT_EQ(c.validate().code(), Errc::budget_too_small);
  // A ring that cannot hold the window's insertions.
  c = *good;
  c.ring = 4999;
  EXPECT_EQ(c.validate().code(), Errc::ring_too_small);
  c.ring = 5000;
  EXPECT_TRUE(c.validate());
  auto tc = CountingConfig::for_fpr(Window::time(1000), 0.01, {.capacity = 800});
  ASSERT_TRUE(tc);
  c = *tc;
  c.ring = 799;
  EXPECT_EQ(c.validate().code(), Errc::ring_too_small);
  // Too large: an FPR out of reach with k <= 32, a ring beyond 2^50 bits, counters beyond it.
  EXPECT_EQ(CountingConfig::for_fpr(Window::time(1000), 1e-300, {.capacity = 1000}).code(), Errc::too_large);
  EXPECT_EQ(CountingConfig::for_fpr(Window::count(uint64_t{1} << 44), 0.01).code(), Errc::too_large);
  EXPECT_EQ(CountingConfig::for_fpr(Window::count(~uint64_t{0}), 0.5).code(), Errc::too_large);
  c = *good;
  c.cells = ab::kMaxStructureBits / 4 + 1;
  EXPECT_EQ(c.validate().code(), Errc::too_large);
  // A time window's span is ticks, not insertions: any span is fine.
  EXPECT_TRUE(CountingConfig::for_fpr(Window::time(~uint64_t{0}), 0.01, {.capacity = 100}));

  // An arena too small, whether the header fits or not, is refused and left as it was.
  const size_t need = *CountingFilter::bytes_needed(*good);
  std::vector<unsigned char> mem(need + 64);
  unsigned char* base = mem.data() + (64 - reinterpret_cast<uintptr_t>(mem.data()) % 64) % 64;
  for (size_t size : {size_t{16}, size_t{200}, need / 2, need - 64}) {
    ab::Arena small(base, size);
    EXPECT_EQ(CountingFilter::create(*good, small).code(), Errc::arena_too_small) << size;
    EXPECT_EQ(small.used(), 0u) << size;
  }
  ab::Arena partly(base, need);
  ASSERT_TRUE(partly.carve(64));
  EXPECT_EQ(CountingFilter::create(*good, partly).code(), Errc::arena_too_small);
  EXPECT_EQ(partly.used(), 64u);
  // bytes_needed is enough from any base address.
  ab::Arena odd(mem.data() + 1, need);
  EXPECT_TRUE(CountingFilter::create(*good, odd));
}
