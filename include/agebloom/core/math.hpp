// Freestanding ln/exp/pow for sizing and model functions in the core.
//
// The core links without libstdc++ and must not depend on libm either, so the
// few transcendental functions that sizing needs are computed here: argument
// reduction to a small interval, then a rapidly converging series. They run
// at creation time only, never on the data plane. Accuracy: a few ulp over the
// ranges used (tested against <cmath> in tests/core).
#pragma once

#include <cstdint>

namespace agebloom::math {

inline constexpr double kLn2 = 0.693147180559945309417232121458176568;  // ln 2
inline constexpr double kInf = __builtin_huge_val();  // +infinity, constexpr

// ln(x) for x > 0: x = m * 2^e with m in [1, 2), ln m = 2 atanh((m-1)/(m+1)).
// z <= 1/3, so each term shrinks by at least 9x and 40 terms reach double precision.
constexpr double ln(double x) noexcept {
  if (!(x > 0)) return -kInf;
  if (x == kInf) return kInf;
  int e = 0;
  double m = x;
  while (m >= 0x1p64) { m *= 0x1p-64; e += 64; }
  while (m < 0x1p-64) { m *= 0x1p64; e -= 64; }
  while (m >= 2.0) { m *= 0.5; ++e; }
  while (m < 1.0) { m *= 2.0; --e; }
  const double z = (m - 1.0) / (m + 1.0);
  const double z2 = z * z;
  double term = z, sum = 0.0;
  for (int i = 1; i < 80; i += 2) {
    sum += term / i;
    term *= z2;
  }
  return 2.0 * sum + e * kLn2;
}

// b^n for a non-negative integer n, by squaring: exact enough and far
// cheaper than exp(n ln b) in the models' inner sums.
constexpr double ipow(double b, uint64_t n) noexcept {
  double r = 1.0;
  while (n) {
    if (n & 1) r *= b;
    b *= b;
    n >>= 1;
  }
  return r;
}

// exp(x) = 2^n * exp(r), |r| <= ln2/2, Taylor series for exp(r).
constexpr double exp(double x) noexcept {
  if (x != x) return x;
  if (x > 709.78) return kInf;
  if (x < -745.2) return 0.0;
  const double nf = x / kLn2;
  const int64_t n = static_cast<int64_t>(nf < 0 ? nf - 0.5 : nf + 0.5);
  const double r = x - static_cast<double>(n) * kLn2;
  double term = 1.0, sum = 1.0;
  for (int i = 1; i < 30; ++i) {
    term *= r / i;
    sum += term;
  }
  // 2^n by squaring (|n| <= 1075): a handful of multiplications, not |n|.
  return sum * ipow(n >= 0 ? 2.0 : 0.5, static_cast<uint64_t>(n >= 0 ? n : -n));
}

// b^e for b > 0.
constexpr double pow(double b, double e) noexcept {
  if (b == 1.0 || e == 0.0) return 1.0;
  return exp(e * ln(b));
}

// ln(1 - x) for 0 <= x < 1. For small x, 1 - x loses x's low digits (at
// x = 1e-6 half of them), so the series -x - x²/2 - x³/3 - x⁴/4 is used.
constexpr double ln_one_minus(double x) noexcept {
  if (x < 1e-4) return -x * (1.0 + x * (0.5 + x * (1.0 / 3.0 + x * 0.25)));
  return ln(1.0 - x);
}

// exp(x) − 1 without the cancellation near 0 (its series there).
constexpr double expm1_safe(double x) noexcept {
  if (x > -1e-5 && x < 1e-5) return x * (1.0 + x * (0.5 + x / 6.0));
  return exp(x) - 1.0;
}

// (1 - p)^n and 1 - (1 - p)^n for an integer n: a geometric prior's mass
// beyond n, and within it (Dautrich & Ravishankar, eq. 5). By squaring, as
// the paper's Sec. 4.4 counts it (O(log n) multiplications); where n·p is
// tiny, 1 - (1 - p)^n cancels, so its series n·p − C(n,2)p² + C(n,3)p³.
constexpr double survive(double p, uint64_t n) noexcept { return ipow(1.0 - p, n); }
// 1 - (1 - p)^n, exact where the series above is needed.
constexpr double hit(double p, uint64_t n) noexcept {
  const double np = static_cast<double>(n) * p;
  if (np < 1e-5) {
    const double d = static_cast<double>(n);
    return np - d * (d - 1.0) * 0.5 * p * p + d * (d - 1.0) * (d - 2.0) / 6.0 * p * p * p;
  }
  return 1.0 - survive(p, n);
}

// 1 - (1 - p)^(1/n). For tiny p, 1 - p rounds to 1 and the direct form
// returns 0 (and the sizes derived from it, infinity): there the series
// p/n + (n-1)p^2/(2n^2) is exact to double precision.
constexpr double root_complement(double p, double n) noexcept {
  if (p < 1e-9) return p / n + (n - 1.0) * p * p / (2.0 * n * n);
  return 1.0 - exp(ln(1.0 - p) / n);
}

// 1 - (1 - x)^n, the chance that one of n independent trials of
// probability x succeeds (Prop. 2's union over segments). For tiny x, 1 - x
// rounds to 1 and the direct form returns 0: there n·x - C(n,2)·x² is exact
// to double precision.
constexpr double any_of(double x, double n) noexcept {
  if (x < 1e-9) return n * x - n * (n - 1.0) * 0.5 * x * x;
  return 1.0 - pow(1.0 - x, n);
}

// The smallest u in (lo, hi] with pass(u), given pass(hi) and not pass(lo),
// for a pass() that is monotone in u: a bisection, log2(hi - lo) calls.
template <class Pass>
constexpr uint64_t bisect_smallest(uint64_t lo, uint64_t hi, Pass&& pass) noexcept {
  while (hi - lo > 1) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (pass(mid)) hi = mid;
    else lo = mid;
  }
  return hi;
}

// ⌈a / b⌉ for b > 0, without overflow.
constexpr uint64_t ceil_div(uint64_t a, uint64_t b) noexcept { return a / b + (a % b != 0); }

// ⌈x⌉ as an integer: 0 for x <= 0 (or NaN), UINT64_MAX past its range.
constexpr uint64_t ceil_to_u64(double x) noexcept {
  if (!(x > 0)) return 0;
  if (x >= 1.8e19) return UINT64_MAX;
  const uint64_t t = static_cast<uint64_t>(x);
  return static_cast<double>(t) < x ? t + 1 : t;
}

}  // namespace agebloom::math
