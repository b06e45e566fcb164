// The inferential Block Timing Bloom filter (Dautrich & Ravishankar,
// "Inferential Time-Decaying Bloom Filters", Sec. 4): the posterior
// P(I_x < w | R_x) that key x was among the last w insertions, from what a
// query already reads (TimerObservation: λ_x, c_x, r_x, b) and the key's
// prior p_x, for a continuous stream (n → ∞, eq. 4's geometric prior).
//
//   λ_x > ⌈(w − b)/B⌉        0                                            Theorem 2
//   λ_x = 0                   1 − q^w / ((1 − q^b)/F(r,0,b) + q^b)         Theorem 3, eq. 23
//   0 < λ_x < ⌈(w − b)/B⌉     1 − q^(w−a) / ((1 − q^B)/F(c,0,B) + q^B)     Theorem 4, eq. 26
//   λ_x = ⌈(w − b)/B⌉         (1 − q^(w−a)) / (1 − q^B·(1 − F(c,0,B)))     Theorem 5, eq. 27
//
// with q = 1 − p_x, a = (λ_x − 1)B + b, and F(r,c,j) = u^c(1 − u)^(r−c)
// (eq. 21) the chance that c given timers of r stay untouched by j
// insertions while the others are touched, u = (1 − 1/m)^(k·D(j)), D(j) the
// distinct keys among j insertions (distinct_items.hpp). G/F = F(c,0,B)
// (eq. 25) is why only F(c,0,B) appears.
//
// Cost (Sec. 4.4): F(c,0,B) depends on c only, so its k + 1 values are
// computed once, at make(); a query of the common cases then costs two
// powers q^B and q^(w−a) by squaring, O(log w) multiplications. The rare
// λ_x = 0 case (the key's timers all written since the last step) computes
// F(r,0,b) for its b.
//
// The expected insertion age E[I_x | R_x] (eq. 8) is cheap as well: P(R_x|i)
// is piecewise constant in i (Lemmas 1 and 2), so the sums of i·p·q^i over
// each piece close (Σ_{i>=a} i·p·q^i = q^a(a + q/p)). When a timer expired
// the filter keeps nothing of x's age beyond I_x >= w: infinity.
//
// Freestanding, header-only, allocation-free. Count windows only: the
// theorems count insertions, and a time window's blocks are ticks.
#pragma once

#include <cstdint>

#include "agebloom/core/error.hpp"
#include "agebloom/core/math.hpp"
#include "agebloom/filters/block_timing.hpp"
#include "agebloom/inference/distinct_items.hpp"

namespace agebloom::inference {

// The posteriors of the table above for one BTBF configuration: make() caches
// F(c,0,B) for c = 0..k, so the queries reuse it.
class BlockTimingPosterior {
 public:
  constexpr BlockTimingPosterior() noexcept = default;  // empty: make() one

  // For c's timers and the stream model distinct; c's error if invalid, and
  // inference_unsupported for a time window (the theorems count insertions).
  static constexpr Expected<BlockTimingPosterior> make(const BlockTimingConfig& c,
                                                       DistinctItems distinct = DistinctItems{}) noexcept {
    if (Status s = c.validate(); !s) return s;
    if (c.window.is_time()) return Errc::inference_unsupported;
    BlockTimingPosterior p;
    p.k_ = c.k;
    p.block_ = c.block;
    p.distinct_ = distinct;
    p.ln_miss_ = static_cast<double>(c.k) * math::ln_one_minus(1.0 / static_cast<double>(c.timers));
    const double touched_in_block = p.touched(static_cast<double>(c.block));
    for (uint32_t n = 0; n <= c.k; ++n) p.block_cache_[n] = math::ipow(touched_in_block, n);
    return p;
  }

  // P(I_x < w | R_x) for prior p_x in (0, 1) (validate_prior; not checked here: the hot path).
  constexpr double posterior(const TimerObservation& o, double p) const noexcept {
    if (o.expired()) return 0.0;  // Theorem 2
    const double q_b = math::survive(p, o.in_block);
    if (o.age == 0) {  // Theorem 3
      const double f = math::ipow(touched(static_cast<double>(o.in_block)), o.timers);  // F(r,0,b)
      if (!(f > 0.0)) return 1.0;  // b = 0: the state cannot arise from the model; trust the timers
      return clamp01(1.0 - math::survive(p, o.window) / (math::hit(p, o.in_block) / f + q_b));
    }
    const uint64_t a = (o.age - 1) * o.block + o.in_block;  // insertions since T+ left T_x
    const double f_cb = F_cb(o.oldest);
    const double q_B = math::survive(p, o.block);
    if (o.age < o.live_ages)  // Theorem 4
      return clamp01(1.0 - math::survive(p, o.window - a) / (math::hit(p, o.block) / f_cb + q_B));
    return clamp01(math::hit(p, o.window - a) / (1.0 - q_B * (1.0 - f_cb)));  // Theorem 5
  }

  // E[I_x | R_x] (eq. 8) in insertions; infinity when a timer expired.
  constexpr double expected_age(const TimerObservation& o, double p) const noexcept {
    if (o.expired()) return math::kInf;
    const double tail = (1.0 - p) / p;  // Σ_{i>=0} i·p·q^i = q/p
    if (o.age == 0) {
      // Pieces: [0, b) weight 1, [b, ∞) weight F(r,0,b) (Lemma 1).
      const double f = math::ipow(touched(static_cast<double>(o.in_block)), o.timers);
      const double q_b = math::survive(p, o.in_block);
      const double b = static_cast<double>(o.in_block);
      return (tail - q_b * (b + tail) * (1.0 - f)) / (1.0 - q_b * (1.0 - f));
    }
    // Pieces, scaled by q^-a: [a, a + B) weight 1, [a + B, ∞) weight F(c,0,B) (Lemma 2, eq. 25).
    const double a = static_cast<double>((o.age - 1) * o.block + o.in_block);
    const double B = static_cast<double>(o.block);
    const double f_cb = F_cb(o.oldest);
    const double q_B = math::survive(p, o.block);
    return ((a + tail) - q_B * (a + B + tail) * (1.0 - f_cb)) / (1.0 - q_B * (1.0 - f_cb));
  }

  // eq. 21: c given timers of r untouched by j insertions, the other r − c touched.
  constexpr double untouched(uint32_t r, uint32_t c, double j) const noexcept {
    const double u = math::exp(distinct_(j) * ln_miss_);
    return math::ipow(u, c) * math::ipow(1.0 - u, r - c);
  }
  // F(c, 0, B) from the cache (c <= k).
  constexpr double F_cb(uint32_t c) const noexcept { return block_cache_[c <= k_ ? c : k_]; }
  const DistinctItems& distinct() const noexcept { return distinct_; }  // the stream model D(j) the posteriors use

 private:
  // 1 − (1 − 1/m)^(k·D(j)): the chance one timer is touched by j insertions.
  constexpr double touched(double j) const noexcept { return -math::expm1_safe(distinct_(j) * ln_miss_); }
  static constexpr double clamp01(double v) noexcept { return v > 0.0 ? (v < 1.0 ? v : 1.0) : 0.0; }

  uint32_t k_ = 0;
  uint64_t block_ = 1;
  double ln_miss_ = 0.0;  // k·ln(1 − 1/m): ln of the chance one insertion leaves a timer alone
  double block_cache_[BlockTimingConfig::kMaxK + 1] = {};  // F(c, 0, B), c = 0..k (Sec. 4.4)
  DistinctItems distinct_{};
};

}  // namespace agebloom::inference
