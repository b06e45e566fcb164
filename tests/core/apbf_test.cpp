// Age-partitioned Bloom filter (Age-Partitioned Bloom Filters): Algorithm 1 against a brute-force
// scan, the window invariant over count and time windows, the slack bound,
// the FP recurrence against the paper's vectors and against measurement.
#include <gtest/gtest.h>

#include <cmath>
#include <deque>
#include <random>
#include <vector>

#include "agebloom/agebloom.hpp"
#include "owned_filter.hpp"

namespace ab = agebloom;
using ab::ApbfConfig;
using ab::ApbfFilter;

// The models are constexpr (the core sizes at compile time where it can):
// evaluated in a constant expression, a read of an uninitialised or
// out-of-range element is a compile error, not a silent value. Plain and
// blocked slices, the scan over k + l slices, and a blocked load whose
// Poisson sum runs past the tabulated terms.
static_assert(ApbfConfig::with_shape(ab::Window::count(1000), 4, 3)->model_fpr() > 0);
static_assert(ApbfConfig::blocked(ab::Window::count(100000), 4, 6, 512, 2)->model_fpr() > 0);
static_assert(ApbfConfig::design_fpr(11, 9) > 0.000917 && ApbfConfig::design_fpr(11, 9) < 0.000919);  // ALGORITHMS.md's vector
using ab::KeyHash;
using ab::Window;

namespace {

using Owned = OwnedFilter<ApbfFilter>;

KeyHash key_hash(uint64_t key) { return ab::Hasher(0xab0f)(&key, sizeof key); }

}  // namespace

// ALGORITHMS.md's shared (k, l) → FP vectors, from the design-point recurrence.
TEST(Apbf, DesignFprMatchesPublishedVectors) {
  struct V {
    uint32_t k, l;
    double fp;
    int decimals;  // as printed
  };
  for (const V v : {V{4, 3, 0.100586, 6}, V{5, 7, 0.101603, 6}, V{7, 5, 0.011232, 6}, V{8, 8, 0.010244, 6},
                    V{10, 7, 0.001211, 6}, V{11, 9, 0.000918, 6}, V{14, 11, 0.000099, 6},
                    V{15, 15, 0.000100, 6}, V{17, 13, 0.0000106, 7}, V{18, 16, 0.000009, 6}}) {
    const double fp = ApbfConfig::design_fpr(v.k, v.l);
    // Agree to half a unit in the last printed decimal place.
    EXPECT_NEAR(fp, v.fp, 0.5 * std::pow(10.0, -v.decimals)) << "k=" << v.k << " l=" << v.l << " got " << fp;
  }
}

TEST(Apbf, ForFprFollowsThePublishedParameterisation) {
  auto a = ApbfConfig::for_fpr(Window::count(100), 0.01);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->k, 7u);
  EXPECT_EQ(a->l, 4u);
  auto b = ApbfConfig::for_fpr(Window::count(100), 0.001);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->k, 10u);
  EXPECT_EQ(b->l, 6u);
  EXPECT_GE(b->generation * b->l, 100u);  // the window fits in l generations
}

TEST(Apbf, InvalidParametersAreErrors) {
  EXPECT_EQ(ApbfConfig::with_shape(Window::count(1000), 0, 5).code(), ab::Errc::k_out_of_range);
  EXPECT_EQ(ApbfConfig::with_shape(Window::count(1000), 33, 5).code(), ab::Errc::k_out_of_range);
  EXPECT_EQ(ApbfConfig::with_shape(Window::count(1000), 4, 0).code(), ab::Errc::l_out_of_range);
  EXPECT_EQ(ApbfConfig::with_shape(Window::count(1000), 4, 5000).code(), ab::Errc::l_out_of_range);
  EXPECT_EQ(ApbfConfig::with_shape(Window::count(3), 4, 5).code(), ab::Errc::window_smaller_than_segments);
  EXPECT_EQ(ApbfConfig::with_shape(Window::count(0), 4, 5).code(), ab::Errc::window_zero);
  EXPECT_EQ(ApbfConfig::with_shape(Window::time(0), 4, 5, 10).code(), ab::Errc::time_span_zero);
  EXPECT_EQ(ApbfConfig::for_fpr(Window::count(100), 1.0).code(), ab::Errc::fpr_out_of_range);
  EXPECT_EQ(ApbfConfig::for_fpr(Window::time(100), 0.01).code(), ab::Errc::capacity_zero);
  ApbfConfig c = *ApbfConfig::with_shape(Window::count(1000), 4, 5);
  c.slice_bits = 10;
  EXPECT_EQ(c.validate().code(), ab::Errc::budget_too_small);
  alignas(64) static unsigned char small[128];
  ab::Arena arena(small, sizeof small);
  EXPECT_EQ(ApbfFilter::create(*ApbfConfig::with_shape(Window::count(1000), 4, 5), arena).code(),
            ab::Errc::arena_too_small);
}

// Every key among the last w insertions answers true; test_and_insert agrees
// with ground truth on every live repeat. Random (k, l, W), with and without
// repeated keys, 12 windows each.
TEST(Apbf, CountWindowHasNoLiveFalseNegatives) {
  std::mt19937_64 rng(2001);
  for (int trial = 0; trial < 30; ++trial) {
    const uint32_t k = 1 + rng() % 12, l = 1 + rng() % 20;
    const uint64_t W = l + rng() % 3000;
    auto cfg = ApbfConfig::with_shape(Window::count(W), k, l);
    ASSERT_TRUE(cfg) << cfg.what();
    Owned f(*cfg);
    std::deque<uint64_t> last;
    std::vector<uint64_t> seen_at(2 * W + 1, UINT64_MAX);
    uint64_t misses = 0;
    for (uint64_t t = 0; t < 12 * W; ++t) {
      const uint64_t key = trial % 2 ? rng() % (2 * W + 1) : (static_cast<uint64_t>(trial) << 40) + t;
      const bool live = trial % 2 && seen_at[key] != UINT64_MAX && t - seen_at[key] <= W;
      const bool v = f->test_and_insert(key_hash(key));
      misses += live && !v;
      if (trial % 2) seen_at[key] = t;
      last.push_back(key);
      if (last.size() > W) last.pop_front();
      if (t % (W / 2 + 1) == 0)
        for (uint64_t x : last) misses += !f->contains(key_hash(x));
    }
    EXPECT_EQ(misses, 0u) << "k=" << k << " l=" << l << " W=" << W;
  }
}

TEST(Apbf, TimeWindowHasNoLiveFalseNegatives) {
  std::mt19937_64 rng(2002);
  for (int trial = 0; trial < 15; ++trial) {
    const uint64_t T = 1000 + rng() % 50000;
    auto cfg = ApbfConfig::for_fpr(Window::time(T), trial % 2 ? 0.01 : 0.001, {.capacity = 3000});
    ASSERT_TRUE(cfg) << cfg.what();
    Owned f(*cfg);
    std::deque<std::pair<uint64_t, uint64_t>> recent;
    uint64_t now = rng() % 1'000'000, misses = 0;
    for (uint64_t t = 0; t < 20000; ++t) {
      now += rng() % 200 == 0 ? rng() % (3 * T) : rng() % (T / 1000 + 2);
      ASSERT_TRUE(f->advance(now));
      const uint64_t key = rng() % 4000;
      f->insert(key_hash(key));
      recent.emplace_back(now, key);
      while (now - recent.front().first > T) recent.pop_front();
      if (t % 101 == 0)
        for (auto& [tick, k] : recent) misses += !f->contains(key_hash(k));
    }
    EXPECT_EQ(misses, 0u) << "T=" << T;
    EXPECT_EQ(f->advance(now - 1).code(), ab::Errc::time_went_backwards);
  }
}

// Nothing older than w + s answers true except by ordinary false positives:
// distinct keys older than w + k·g are positive no more often than fresh ones.
// For the APBF and for blocked (APBBF) segments alike.
TEST(Apbf, NothingOlderThanWindowPlusSlackSurvives) {
  const Window w = Window::count(10000);
  for (auto cfg : {ApbfConfig::for_fpr(w, 0.01), ApbfConfig::blocked(w, 3, 8, 512, 4),
                   ApbfConfig::blocked(w, 2, 5, 64, 4)}) {
    ASSERT_TRUE(cfg);
    Owned f(*cfg);
    const uint64_t g = cfg->generation, n = 20 * 10000;
    const uint64_t horizon = cfg->l * g + cfg->k * g + g;  // w + s, plus the partial generation
    for (uint64_t t = 0; t < n; ++t) f->insert(key_hash(t));
    uint64_t old_pos = 0, fresh_pos = 0;
    const uint64_t probes = 50000;
    for (uint64_t i = 0; i < probes; ++i) {
      old_pos += f->contains(key_hash(n - 1 - horizon - i));
      fresh_pos += f->contains(key_hash((1ULL << 52) + i));
    }
    const double sd = std::sqrt(probes * cfg->model_fpr()) + 1;
    EXPECT_LE(static_cast<double>(old_pos), fresh_pos + 5 * sd) << "B=" << cfg->block_bits;
    // ...while keys just inside the window are all there.
    for (uint64_t age = 0; age < 10000; ++age) ASSERT_TRUE(f->contains(key_hash(n - 1 - age)));
  }
}

// Algorithm 1 answers exactly "some k consecutive slices all hold the key"
// (the brute-force definition), on filters filled at random.
TEST(Apbf, JumpBackScanEqualsExhaustiveScan) {
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 20; ++trial) {
    const uint32_t k = 1 + rng() % 6, l = 1 + rng() % 10;
    auto cfg = ApbfConfig::with_shape(Window::count(200), k, l);
    ASSERT_TRUE(cfg);
    cfg->slice_bits = 64 + rng() % 200;  // small slices: many partial matches
    Owned f(*cfg);
    for (int t = 0; t < 700; ++t) f->insert(key_hash(rng()));
    for (int q = 0; q < 3000; ++q) {
      const KeyHash h = key_hash(rng());
      bool any = false;
      std::vector<bool> hit(k + l);
      const ApbfFilter& ref = f.filter;
      for (uint32_t i = 0; i < k + l; ++i) hit[i] = ref.slice_holds(h, i);
      for (uint32_t s = 0; s + k <= k + l && !any; ++s) {
        bool all = true;
        for (uint32_t j = 0; j < k; ++j) all = all && hit[s + j];
        any = all;
      }
      ASSERT_EQ(f->contains(h), any) << "k=" << k << " l=" << l;
    }
  }
}

// Measured FPR on fresh negatives within ±15% of the recurrence with the
// filter's own fill ratios, at generation ends, averaged over generations.
TEST(Apbf, MeasuredFprMatchesModel) {
  for (double p : {0.1, 0.01, 0.001}) {
    auto cfg = ApbfConfig::for_fpr(Window::count(20000), p);
    ASSERT_TRUE(cfg);
    Owned f(*cfg);
    const uint64_t g = cfg->generation;
    uint64_t t = 0, probes = 0, pos = 0, next = 1ULL << 50;
    const uint64_t per_gen = p >= 0.01 ? 20000 : 100000;
    for (uint32_t gen = 0; gen < cfg->slices() + 12; ++gen) {
      for (uint64_t i = 0; i < g; ++i) f->insert(key_hash(t++));
      if (gen < cfg->slices()) continue;
      for (uint64_t q = 0; q < per_gen; ++q, ++probes) pos += f->contains(key_hash(next++));
    }
    const double measured = static_cast<double>(pos) / probes, model = cfg->model_fpr();
    EXPECT_NEAR(measured / model, 1.0, 0.15) << "p=" << p << " measured " << measured << " model " << model;
    EXPECT_LE(model, p * 1.2);  // the design point is what for_fpr aimed at
  }
}

// insert_bulk in chunks shorter and longer than its look-ahead leaves the bytes
// of state that insert() one key at a time leaves, across generation shifts
// (the unblocked form keeps bits computed D keys ahead; a shift in between
// moves the slices they were computed for).
static void expect_insert_bulk_agrees(const ApbfConfig& cfg, const std::vector<KeyHash>& keys) {
  Owned one(cfg), bulk(cfg);
  for (const KeyHash& k : keys) one->insert(k);
  insert_bulk_in_chunks(bulk.filter, keys);
  EXPECT_EQ(one.state(), bulk.state());
}

TEST(Apbf, OperationFormsAgree) {
  auto cfg = ApbfConfig::for_fpr(Window::count(3000), 0.05);
  ASSERT_TRUE(cfg);
  Owned a(*cfg), b(*cfg);
  std::mt19937_64 rng(9);
  std::vector<KeyHash> keys(20000);
  for (auto& k : keys) k = key_hash(rng() % 6000);
  std::vector<char> bulk(keys.size());
  b->test_and_insert_bulk(keys.data(), keys.size(), reinterpret_cast<bool*>(bulk.data()));
  for (size_t i = 0; i < keys.size(); ++i) ASSERT_EQ(a->test_and_insert(keys[i]), static_cast<bool>(bulk[i]));
  std::vector<char> q(keys.size());
  a->contains_bulk(keys.data(), keys.size(), reinterpret_cast<bool*>(q.data()));
  for (size_t i = 0; i < keys.size(); ++i) ASSERT_EQ(static_cast<bool>(q[i]), b->contains(keys[i]));
  expect_insert_bulk_agrees(*cfg, keys);
}

// ---- APBBF (Age-Partitioned Bloom Filters, §6): segments are blocked, partitioned Bloom filters.

namespace {
struct BlockShape {
  uint32_t B, b;
};
constexpr BlockShape kShapes[] = {{64, 4}, {512, 4}, {512, 8}, {256, 2}};
}  // namespace

TEST(Apbbf, InvalidBlockParametersAreErrors) {
  const Window w = Window::count(10000);
  EXPECT_EQ(ApbfConfig::blocked(w, 3, 5, 100, 4).code(), ab::Errc::block_size_invalid);   // not 2^n
  EXPECT_EQ(ApbfConfig::blocked(w, 3, 5, 1024, 4).code(), ab::Errc::block_size_invalid);  // > a line
  EXPECT_EQ(ApbfConfig::blocked(w, 3, 5, 32, 4).code(), ab::Errc::block_size_invalid);    // < a word
  EXPECT_EQ(ApbfConfig::blocked(w, 3, 5, 0, 4).code(), ab::Errc::block_size_invalid);
  EXPECT_EQ(ApbfConfig::blocked(w, 3, 5, 64, 128).code(), ab::Errc::bits_per_block_invalid);  // b > B
  EXPECT_EQ(ApbfConfig::blocked(w, 3, 5, 64, 3).code(), ab::Errc::bits_per_block_invalid);    // not 2^n
  EXPECT_EQ(ApbfConfig::blocked(w, 3, 5, 64, 0).code(), ab::Errc::bits_per_block_invalid);
  // 16 parts of 32 bits need 16·5 = 80 hash bits: more than one 64-bit mix gives.
  EXPECT_EQ(ApbfConfig::blocked(w, 3, 5, 512, 16).code(), ab::Errc::bits_per_block_invalid);
  ApbfConfig c = *ApbfConfig::with_shape(w, 3, 5);
  c.bits_per_block = 4;  // b without a block size
  EXPECT_EQ(c.validate().code(), ab::Errc::bits_per_block_invalid);
  EXPECT_EQ(ApbfConfig::blocked(w, 0, 5, 64, 4).code(), ab::Errc::k_out_of_range);
  EXPECT_EQ(ApbfConfig::blocked(w, 3, 0, 64, 4).code(), ab::Errc::l_out_of_range);
}

TEST(Apbbf, CountAndTimeWindowsHaveNoLiveFalseNegatives) {
  std::mt19937_64 rng(6001);
  for (const BlockShape s : kShapes)
    for (int trial = 0; trial < 6; ++trial) {
      const uint32_t k = 1 + rng() % 4, l = 1 + rng() % 10;
      const bool timed = trial % 2;
      const uint64_t W = l + rng() % 4000, T = 500 + rng() % 20000;
      auto cfg = timed ? ApbfConfig::blocked(Window::time(T), k, l, s.B, s.b, 3000)
                       : ApbfConfig::blocked(Window::count(W), k, l, s.B, s.b);
      ASSERT_TRUE(cfg) << cfg.what();
      Owned f(*cfg);
      std::deque<std::pair<uint64_t, uint64_t>> recent;  // (insertion tick or index, key)
      uint64_t now = 0, misses = 0;
      for (uint64_t t = 0; t < 10 * (timed ? 3000 : W) + 100; ++t) {
        if (timed) {
          now += rng() % 150 == 0 ? rng() % (2 * T) : rng() % (T / 1000 + 2);
          ASSERT_TRUE(f->advance(now));
        }
        const uint64_t key = rng() % 5000;
        f->insert(key_hash(key));
        recent.emplace_back(timed ? now : t, key);
        const uint64_t at = timed ? now : t, span = timed ? T : W - 1;
        while (at - recent.front().first > span) recent.pop_front();
        if (t % 89 == 0)
          for (auto& [when, k2] : recent) misses += !f->contains(key_hash(k2));
      }
      EXPECT_EQ(misses, 0u) << "B=" << s.B << " b=" << s.b << " k=" << k << " l=" << l << (timed ? " time" : " count");
    }
}

TEST(Apbbf, MeasuredFprMatchesModel) {
  struct Case {
    uint32_t k, l, B, b;
  };
  for (const Case c : {Case{2, 3, 64, 4}, Case{2, 3, 512, 4}, Case{2, 5, 512, 4}, Case{3, 5, 64, 4},
                       Case{2, 3, 64, 8}, Case{2, 5, 512, 8}}) {
    auto cfg = ApbfConfig::blocked(Window::count(30000), c.k, c.l, c.B, c.b);
    ASSERT_TRUE(cfg);
    Owned f(*cfg);
    const uint64_t g = cfg->generation;
    const double model = cfg->model_fpr();
    // Enough probes for ~400 expected positives (±5% at 1 sd).
    const uint64_t per_gen = static_cast<uint64_t>(400 / model / 10) + 1000;
    uint64_t t = 0, probes = 0, pos = 0, next = 1ULL << 50;
    for (uint32_t gen = 0; gen < cfg->slices() + 10; ++gen) {
      for (uint64_t i = 0; i < g; ++i) f->insert(key_hash(t++));
      if (gen < cfg->slices()) continue;
      for (uint64_t q = 0; q < per_gen; ++q, ++probes) pos += f->contains(key_hash(next++));
    }
    const double measured = static_cast<double>(pos) / probes;
    EXPECT_NEAR(measured / model, 1.0, 0.15)
        << "k=" << c.k << " l=" << c.l << " B=" << c.B << " b=" << c.b << " measured " << measured << " model " << model;
  }
}

TEST(Apbbf, OperationFormsAgree) {
  for (const BlockShape s : kShapes) {
    auto cfg = ApbfConfig::blocked(Window::count(3000), 3, 5, s.B, s.b);
    ASSERT_TRUE(cfg);
    Owned a(*cfg), b(*cfg);
    std::mt19937_64 rng(s.B + s.b);
    std::vector<KeyHash> keys(15000);
    for (auto& k : keys) k = key_hash(rng() % 5000);
    std::vector<char> bulk(keys.size());
    b->test_and_insert_bulk(keys.data(), keys.size(), reinterpret_cast<bool*>(bulk.data()));
    for (size_t i = 0; i < keys.size(); ++i) ASSERT_EQ(a->test_and_insert(keys[i]), static_cast<bool>(bulk[i]));
    expect_insert_bulk_agrees(*cfg, keys);
  }
}
