// The inferential filters (include/agebloom/inference/): each closed form of
// Dautrich & Ravishankar's Theorems 1-5 against the sum it closes (eqs. 10
// and 11 with Lemmas 1 and 2), the expected age against eq. 8 summed, D(j)
// against its definition, calibration of the posteriors on a real stream
// (eq. 28), the decision rule of Sec. 2.6, and every refusal.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "agebloom/filters/block_timing.hpp"
#include "agebloom/inference/block_timing_posterior.hpp"
#include "agebloom/inference/classical_posterior.hpp"
#include "agebloom/inference/distinct_items.hpp"
#include "agebloom/inference/penalty.hpp"
#include "owned_filter.hpp"

using namespace agebloom;
using namespace agebloom::inference;

namespace {

const Hasher kHash(0x1f3);
KeyHash key(uint64_t i) { return kHash(&i, sizeof i); }

BlockTimingConfig small_config(uint64_t w, uint64_t block, uint32_t k, uint64_t m) {
  BlockTimingConfig c;
  c.window = Window::count(w);
  c.k = k;
  c.timers = m;
  c.bpt = 16;
  c.block = block;
  c.padding = 0;
  return c;
}

// P(R_x | i) of Lemmas 1 and 2, with G = F(c,0,B)·F(r,c,a) (eq. 25).
long double likelihood(const BlockTimingPosterior& post, const TimerObservation& o, uint64_t i) {
  const uint64_t b = o.in_block, B = o.block;
  if (o.age == 0) return i < b ? 1.0L : post.untouched(o.timers, 0, static_cast<double>(b));
  const uint64_t a = (o.age - 1) * B + b;
  const long double f = post.untouched(o.timers, o.oldest, static_cast<double>(a));
  if (i < a) return 0.0L;
  if (i < a + B) return f;
  return f * post.F_cb(o.oldest);
}

// eq. 10 summed term by term (the geometric tail beyond `limit` is negligible).
void brute_force(const BlockTimingPosterior& post, const TimerObservation& o, double p, long double& posterior,
                 long double& age) {
  long double in = 0, all = 0, moment = 0, qi = 1;
  const uint64_t limit = static_cast<uint64_t>(60.0 / p) + 10 * o.window;
  for (uint64_t i = 0; i < limit; ++i) {
    const long double t = p * qi * likelihood(post, o, i);
    all += t;
    moment += t * i;
    if (i < o.window) in += t;
    qi *= 1.0L - p;
  }
  posterior = in / all;
  age = moment / all;
}

}  // namespace

// Theorems 3, 4 and 5 (and the expected age, eq. 8) are closed forms of
// eq. 10's sums; they must agree with the sums for every case of λ_x.
TEST(Inference, ClosedFormsMatchTheSums) {
  for (uint64_t B : {1u, 4u, 16u}) {
    const uint64_t w = 64;
    auto post = BlockTimingPosterior::make(small_config(w, B, 4, 400), *DistinctItems::uniform(500));
    ASSERT_TRUE(post) << post.what();
    for (uint64_t b = 0; b < B; ++b) {
      const uint64_t live = math::ceil_div(w - b, B);
      for (uint64_t age = 0; age <= live; ++age) {
        if (age == 0 && b == 0) continue;  // cannot arise: T+ steps right after a block's last insertion
        for (uint32_t c = 1; c <= 4; ++c) {
          const uint32_t r = age == 0 ? c : 4;
          if (age == 0 && c != 4) continue;  // λ_x = 0: every timer holds T+ (c_x = r_x)
          if (age == 1 && b == 0 && c != 4) continue;  // no insertion since the step: none younger than 1
          TimerObservation o;
          o.age = age;
          o.oldest = c;
          o.timers = r;
          o.in_block = b;
          o.block = B;
          o.window = w;
          o.live_ages = live;
          for (double p : {0.005, 0.03, 0.2}) {
            long double want, want_age;
            brute_force(*post, o, p, want, want_age);
            SCOPED_TRACE(testing::Message() << "B=" << B << " b=" << b << " age=" << age << " c=" << c << " p=" << p);
            EXPECT_NEAR(post->posterior(o, p), static_cast<double>(want), 1e-9);
            EXPECT_NEAR(post->expected_age(o, p), static_cast<double>(want_age), 1e-6 * static_cast<double>(want_age) + 1e-6);
          }
        }
      }
    }
  }
}

// Theorem 2: an expired timer proves I_x >= w; posterior 0 and no expected age.
TEST(Inference, ExpiredIsZero) {
  auto post = BlockTimingPosterior::make(small_config(64, 4, 4, 400));
  ASSERT_TRUE(post);
  TimerObservation o;
  o.age = TimerObservation::kExpired;
  o.window = 64;
  o.block = 4;
  o.live_ages = 16;
  EXPECT_TRUE(o.expired());
  EXPECT_EQ(post->posterior(o, 0.01), 0.0);
  EXPECT_TRUE(std::isinf(post->expected_age(o, 0.01)));
}

// On a live filter: every posterior lies in [0, 1], is 0 exactly when the
// standard filter answers "not seen" (no false negatives either way), and the
// observation's λ_x bounds the key's true insertion age from below
// (Sec. 3.2.2: I_x >= (λ − 1)B + b).
TEST(Inference, LiveFilterInvariants) {
  for (bool tbf : {true, false}) {
    SCOPED_TRACE(tbf ? "tbf" : "btbf");
    const uint64_t w = 4096, universe = 8192;
    auto c = BlockTimingConfig::for_fpr(Window::count(w), 0.05, {.capacity = 0, .tbf = tbf});
    ASSERT_TRUE(c) << c.what();
    OwnedFilter<BlockTimingFilter> f(*c);
    auto post = BlockTimingPosterior::make(*c, *DistinctItems::uniform(universe));
    ASSERT_TRUE(post);
    std::mt19937_64 rng(7);
    std::vector<uint64_t> last(universe, ~uint64_t{0});
    const double prior = 1.0 / universe;
    for (uint64_t n = 0; n < 6 * w; ++n) {
      const uint64_t x = rng() % universe;
      const TimerObservation o = f->observe(key(x));
      const double p = post->posterior(o, prior);
      ASSERT_GE(p, 0.0);
      ASSERT_LE(p, 1.0);
      ASSERT_EQ(p == 0.0, !f->contains(key(x))) << n;
      if (last[x] != ~uint64_t{0}) {
        const uint64_t age = n - last[x] - 1;  // I_x: insertions since x's last
        if (age < w) {
          ASSERT_FALSE(o.expired()) << "live key " << x << " looks expired";
        }
        if (!o.expired() && o.age > 0) {
          ASSERT_GE(age, (o.age - 1) * o.block + o.in_block) << n;
        }
      }
      f->insert(key(x));
      last[x] = n;
    }
  }
}

// Calibration (Sec. 5.1.4): on a uniform stream with the exact prior, the
// fraction of queries inside the window in each posterior bin matches the
// bin; the posterior error (eq. 28) stays under the paper's 0.05.
TEST(Inference, PosteriorsAreCalibrated) {
  const uint64_t universe = 1 << 12, w = 1 << 12;
  BlockTimingConfig c;
  auto planned = BlockTimingConfig::for_fpr(Window::count(w), 0.2);
  ASSERT_TRUE(planned);
  c = *planned;
  OwnedFilter<BlockTimingFilter> f(c);
  auto post = BlockTimingPosterior::make(c, *DistinctItems::uniform(universe));
  ASSERT_TRUE(post);
  std::mt19937_64 rng(11);
  std::vector<uint64_t> last(universe, ~uint64_t{0});
  const double prior = 1.0 / universe;
  uint64_t n = 0;
  for (; n < (1u << 16); ++n) {  // warm-up
    const uint64_t x = rng() % universe;
    f->insert(key(x));
    last[x] = n;
  }
  uint64_t count[20] = {}, inside[20] = {}, total = 0;
  for (uint64_t q = 0; q < (1u << 18); ++q, ++n) {
    const uint64_t x = rng() % universe;
    const double p = post->posterior(f->observe(key(x)), prior);
    const int bin = p >= 1.0 ? 19 : static_cast<int>(p * 20);
    ++count[bin];
    inside[bin] += last[x] != ~uint64_t{0} && n - last[x] - 1 < w;
    ++total;
    f->insert(key(x));
    last[x] = n;
  }
  double error = 0;
  for (int b = 0; b < 20; ++b)
    if (count[b]) error += std::fabs(static_cast<double>(inside[b]) / count[b] - (b + 0.5) / 20) * count[b];
  error /= static_cast<double>(total);
  std::printf("posterior error (eq. 28) on a uniform stream, %.2f bits/item: %.4f\n", c.bits_per_item(), error);
  EXPECT_LT(error, 0.05);
}

// Theorem 1 against eq. 11's sum with eq. 12's likelihoods, and eq. 14's
// form at the optimal k.
TEST(Inference, ClassicalPosterior) {
  const double m = 1000;
  const uint32_t k = 7;
  const uint64_t n = 100;
  const double fp = classical_false_positive(m, k, n, k);
  EXPECT_NEAR(fp, std::pow(1 - std::pow(1 - 1 / m, k * n), k), 1e-12);
  for (double p : {1e-4, 1e-3, 0.01, 0.1}) {
    // eq. 11: Σ_{i<n} P(i)·1 / (P(⊥)·P_FP + Σ_{i<n} P(i)·1).
    long double in = 0, qi = 1;
    for (uint64_t i = 0; i < n; ++i, qi *= 1 - p) in += p * qi;
    const long double never = std::pow(1.0L - p, n);
    EXPECT_NEAR(classical_posterior(true, fp, n, p), static_cast<double>(in / (never * fp + in)), 1e-12);
    EXPECT_EQ(classical_posterior(false, fp, n, p), 0.0);
  }
  // eq. 14: with k = (m/n) ln 2, P_FP = (1/2)^k.
  const uint32_t kopt = 7;  // (1000/100)·ln 2 = 6.93
  const double half = std::pow(0.5, (m / n) * std::log(2.0));
  const double p = 0.005, ever = 1 - std::pow(1 - p, n);
  EXPECT_NEAR(classical_posterior(true, half, n, p), ever / ((1 - ever) * half + ever), 1e-12);
  EXPECT_NEAR(classical_false_positive(m, kopt, n, kopt), half, 2e-3);
}

// D(j): eq. 16 is eq. 15 for a uniform stream; eq. 17 approximates eq. 15
// for a Zipf stream; eq. 18 passes through its samples and is a straight line
// on a log-log plot between them.
TEST(Inference, DistinctItems) {
  auto u = DistinctItems::uniform(1000);
  ASSERT_TRUE(u);
  for (double j : {1.0, 10.0, 1000.0, 1e5}) EXPECT_NEAR((*u)(j), 1000 * (1 - std::pow(1 - 1e-3, j)), 1e-9 * 1000);
  EXPECT_EQ(DistinctItems::all_distinct()(123.0), 123.0);

  const uint64_t U = 1 << 12;
  auto z = DistinctItems::zipf(U);
  ASSERT_TRUE(z);
  double H = 0;
  for (uint64_t x = 1; x <= U; ++x) H += 1.0 / x;
  for (double j : {100.0, 1000.0, 4000.0}) {
    double exact = 0;  // eq. 15
    for (uint64_t x = 1; x <= U; ++x) exact += 1 - std::pow(1 - 1 / (H * x), j);
    EXPECT_NEAR((*z)(j), exact, 0.05 * exact) << j;
  }

  const double js[] = {10, 1000, 100000}, ds[] = {10, 500, 20000};
  auto s = DistinctItems::sampled(js, ds, 3);
  ASSERT_TRUE(s) << s.what();
  for (int i = 0; i < 3; ++i) EXPECT_NEAR((*s)(js[i]), ds[i], 1e-9 * ds[i]);
  // eq. 18 at the geometric midpoint of two samples: their geometric mean.
  EXPECT_NEAR((*s)(100.0), std::sqrt(10.0 * 500.0), 1e-9 * 100);
  EXPECT_LE((*s)(5.0), 5.0);

  EXPECT_EQ(DistinctItems::uniform(0).code(), Errc::distinct_model_invalid);
  EXPECT_EQ(DistinctItems::zipf(0).code(), Errc::distinct_model_invalid);
  const double bad_j[] = {10, 5}, bad_d[] = {5, 6};
  EXPECT_EQ(DistinctItems::sampled(bad_j, bad_d, 2).code(), Errc::distinct_model_invalid);
  const double over_j[] = {10}, over_d[] = {11};  // more distinct keys than insertions
  EXPECT_EQ(DistinctItems::sampled(over_j, over_d, 1).code(), Errc::distinct_model_invalid);
  EXPECT_EQ(DistinctItems::sampled(js, ds, 0).code(), Errc::distinct_model_invalid);
}

// Sec. 2.6: "seen" iff $FP·(1 − P) <= $FN·P, with the expected penalty of the answer.
TEST(Inference, MinimumPenaltyDecision) {
  EXPECT_TRUE(decide(0.5, {1, 1}).seen);  // a tie answers "seen"
  EXPECT_FALSE(decide(0.4, {1, 1}).seen);
  EXPECT_TRUE(decide(0.2, {1, 9}).seen);   // a repeat that costs 9x more than a lost click
  EXPECT_FALSE(decide(0.8, {9, 1}).seen);  // the other way round
  EXPECT_DOUBLE_EQ(decide(0.2, {1, 9}).expected_penalty, 0.8);
  EXPECT_DOUBLE_EQ(decide(0.8, {9, 1}).expected_penalty, 0.8);
  EXPECT_FALSE(decide(0.0, {1, 1e9}).seen);  // an expired key is never suppressed
  // The neutral prior: P(I_x < w) = 1/2.
  EXPECT_NEAR(std::pow(1 - neutral_prior(1000), 1000), 0.5, 1e-12);
}

TEST(Inference, BadInputs) {
  EXPECT_EQ((Penalties{0, 1}).validate().code(), Errc::penalty_invalid);
  EXPECT_EQ((Penalties{1, -2}).validate().code(), Errc::penalty_invalid);
  EXPECT_EQ((Penalties{1, std::nan("")}).validate().code(), Errc::penalty_invalid);
  EXPECT_EQ((Penalties{HUGE_VAL, 1}).validate().code(), Errc::penalty_invalid);
  EXPECT_TRUE((Penalties{0.5, 7}).validate());
  for (double p : {0.0, 1.0, -0.1, 2.0, std::nan("")}) EXPECT_EQ(validate_prior(p).code(), Errc::prior_invalid) << p;
  EXPECT_TRUE(validate_prior(1e-9));
  // A time window's blocks are ticks, not insertions: no posterior.
  auto timed = BlockTimingConfig::for_fpr(Window::time(1'000'000), 0.01, {.capacity = 1000});
  ASSERT_TRUE(timed) << timed.what();
  EXPECT_EQ(BlockTimingPosterior::make(*timed).code(), Errc::inference_unsupported);
  // A config the filter refuses is refused with the filter's own error.
  auto bad = small_config(64, 0, 4, 400);
  EXPECT_EQ(BlockTimingPosterior::make(bad).code(), Errc::block_invalid);
  bad = small_config(64, 4, 4, 400);
  bad.bpt = 2;
  EXPECT_EQ(BlockTimingPosterior::make(bad).code(), Errc::timer_bits_invalid);
  bad = small_config(0, 1, 4, 400);
  EXPECT_EQ(BlockTimingPosterior::make(bad).code(), Errc::window_zero);
}
