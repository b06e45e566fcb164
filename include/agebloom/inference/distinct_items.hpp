// D(j): the expected number of distinct keys among j insertions
// (Dautrich & Ravishankar, "Inferential Time-Decaying Bloom Filters", Sec. 2.5).
//
// The posteriors ask how likely a timer is to stay untouched during j
// insertions; with repeats in the stream only the distinct keys among them
// touch new timers, so j is replaced by D(j) (eq. 21). Which D depends on the
// stream:
//   all_distinct  D(j) = j: nothing known (a key stream far larger than the window)
//   uniform       eq. 16: D(j) = |U|(1 − (1 − 1/|U|)^j)
//   zipf          eq. 17: D(j) ≈ (j/H)(1 − γ + ln(|U|H/j)), p_x = 1/(H·x), H = H_|U|
//   sampled       eq. 18: D measured at a few j, straight lines on a log-log plot between them
//                 (below the first sample D(j) = j·D(j₁)/j₁; above the last, the last slope)
//
// Freestanding: a small value type, no allocation (at most kMaxSamples points).
#pragma once

#include <cstddef>
#include <cstdint>

#include "agebloom/core/error.hpp"
#include "agebloom/core/math.hpp"

namespace agebloom::inference {

// D(j) for one of the stream models above: a small value type, copied into
// the posterior that uses it.
class DistinctItems {
 public:
  enum class Kind : uint8_t { all_distinct, uniform, zipf, sampled };  // the models of the table above
  static constexpr size_t kMaxSamples = 32;  // most (j, D(j)) points sampled() keeps

  constexpr DistinctItems() noexcept = default;  // all_distinct: D(j) = j

  // D(j) = j: the default when nothing is known of the stream.
  static constexpr DistinctItems all_distinct() noexcept { return DistinctItems{}; }
  // Uniform keys over a universe of |U| = universe (eq. 16); distinct_model_invalid if 0.
  static constexpr Expected<DistinctItems> uniform(uint64_t universe) noexcept {
    if (universe == 0) return Errc::distinct_model_invalid;
    DistinctItems d;
    d.kind_ = Kind::uniform;
    d.universe_ = static_cast<double>(universe);
    return d;
  }
  // Zipf keys over a universe of |U| = universe (eq. 17, H = H_|U| computed
  // here once); distinct_model_invalid if 0.
  static constexpr Expected<DistinctItems> zipf(uint64_t universe) noexcept {
    if (universe == 0) return Errc::distinct_model_invalid;
    DistinctItems d;
    d.kind_ = Kind::zipf;
    d.universe_ = static_cast<double>(universe);
    d.harmonic_ = harmonic(universe);
    return d;
  }
  // n samples (j_i, D(j_i)), j and D strictly increasing, 1 <= D(j) <= j.
  static constexpr Expected<DistinctItems> sampled(const double* j, const double* dj, size_t n) noexcept {
    if (n == 0 || n > kMaxSamples) return Errc::distinct_model_invalid;
    DistinctItems d;
    d.kind_ = Kind::sampled;
    for (size_t i = 0; i < n; ++i) {
      if (!(j[i] >= 1.0 && dj[i] >= 1.0 && dj[i] <= j[i] && j[i] < math::kInf)) return Errc::distinct_model_invalid;
      if (i > 0 && !(j[i] > j[i - 1] && dj[i] >= dj[i - 1])) return Errc::distinct_model_invalid;
      d.ln_j_[i] = math::ln(j[i]);
      d.ln_d_[i] = math::ln(dj[i]);
    }
    d.samples_ = n;
    return d;
  }

  constexpr Kind kind() const noexcept { return kind_; }  // which model
  constexpr double universe() const noexcept { return universe_; }  // |U| (uniform and zipf; 0 otherwise)

  // D(j) for j >= 0 insertions.
  constexpr double operator()(double j) const noexcept {
    if (!(j > 0.0)) return 0.0;
    switch (kind_) {
      case Kind::all_distinct: return j;
      case Kind::uniform:  // eq. 16
        return universe_ * -math::expm1_safe(j * math::ln_one_minus(1.0 / universe_));
      case Kind::zipf: {  // eq. 17, which holds while j is well below |U|H; never more than j or |U|
        constexpr double kEulerGamma = 0.57721566490153286;
        const double d = j / harmonic_ * (1.0 - kEulerGamma + math::ln(universe_ * harmonic_ / j));
        return clamp(d, 1.0, j < universe_ ? j : universe_);
      }
      case Kind::sampled: return sampled_at(j);
    }
    return j;
  }

 private:
  static constexpr double harmonic(uint64_t n) noexcept {
    if (n < 100000) {
      double h = 0.0;
      for (uint64_t i = n; i >= 1; --i) h += 1.0 / static_cast<double>(i);  // small terms first
      return h;
    }
    // ln n + γ + 1/(2n) − 1/(12n²): exact to double precision this far out.
    const double x = static_cast<double>(n);
    return math::ln(x) + 0.57721566490153286 + 1.0 / (2.0 * x) - 1.0 / (12.0 * x * x);
  }
  static constexpr double clamp(double v, double lo, double hi) noexcept { return v < lo ? lo : v > hi ? hi : v; }

  // eq. 18: ln D linear in ln j between neighbouring samples.
  constexpr double sampled_at(double j) const noexcept {
    const double lj = math::ln(j);
    if (samples_ == 1 || lj <= ln_j_[0]) return clamp(j * math::exp(ln_d_[0] - ln_j_[0]), 0.0, j);
    size_t i = 1;
    while (i + 1 < samples_ && lj > ln_j_[i]) ++i;
    const double slope = (ln_d_[i] - ln_d_[i - 1]) / (ln_j_[i] - ln_j_[i - 1]);
    return clamp(math::exp(ln_d_[i - 1] + slope * (lj - ln_j_[i - 1])), 0.0, j);
  }

  Kind kind_ = Kind::all_distinct;
  double universe_ = 0.0;
  double harmonic_ = 0.0;
  size_t samples_ = 0;
  double ln_j_[kMaxSamples] = {};
  double ln_d_[kMaxSamples] = {};
};

}  // namespace agebloom::inference
