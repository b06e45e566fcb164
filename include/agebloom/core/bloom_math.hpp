// False-positive formulas of a single Bloom filter segment, shared by the
// sizing functions of every structure in the core (freestanding; the hosted
// model library in lib/model builds the papers' recurrences on top of these).
#pragma once

#include <cstdint>

#include "agebloom/core/math.hpp"

namespace agebloom::bloom_math {

// Classic Bloom filter of m bits, n items, k hash functions:
// (1 - e^{-kn/m})^k (Bloom 1970; the approximation used by Guarded Epoch Bloom Filters Prop. 2).
constexpr double fpr(double m_bits, double n_items, unsigned k) noexcept {
  if (n_items <= 0) return 0.0;
  const double fill = 1.0 - math::exp(-static_cast<double>(k) * n_items / m_bits);
  return math::pow(fill, k);
}

namespace detail {
// σ for poisson_mixture's bounds: ⌈√λ⌉, at least 1, found by counting up.
constexpr double poisson_sigma(double lambda) noexcept {
  double sigma = 1.0;
  while (sigma * sigma < lambda) sigma += 1.0;
  return sigma;
}
// The last j poisson_mixture sums.
constexpr uint64_t poisson_last(double lambda) noexcept {
  return static_cast<uint64_t>(lambda + 12.0 * poisson_sigma(lambda) + 16.0);
}
// Σ_j Pois(j; λ) · term(j), summed out to λ + 12σ + 16 (the tail beyond is
// < 1e-30). The pmf is carried from term to term (p_j = p_{j-1} λ / j),
// starting in the log domain when e^{-λ} would underflow.
template <class Term>
constexpr double poisson_mixture(double lambda, Term&& term) noexcept {
  const double sigma = poisson_sigma(lambda);
  const uint64_t jmax = poisson_last(lambda);
  const uint64_t jmin = lambda > 600 ? static_cast<uint64_t>(lambda - 12.0 * sigma) : 0;
  // log Pois(jmin; λ) = -λ + jmin ln λ - ln jmin!, with Stirling's series for
  // ln jmin! (jmin > 400 here: its error is below 1e-12).
  double log_p = -lambda;
  if (jmin > 0) {
    const double n = static_cast<double>(jmin);
    log_p += n * math::ln(lambda) - (n * math::ln(n) - n + 0.5 * math::ln(2 * 3.14159265358979323846 * n) + 1 / (12 * n));
  }
  double p = math::exp(log_p), sum = 0.0;
  for (uint64_t j = jmin; j <= jmax; ++j) {
    sum += p * term(j);
    p *= lambda / static_cast<double>(j + 1);
  }
  return sum;
}
}  // namespace detail

// Blocked Bloom filter (Putze, Sanders, Singler 2007, §3): the n items spread
// over m/B blocks as Poisson(λ = nB/m); a block holding j keys has each bit
// set with probability 1 - (1 - 1/B)^{kj}. FP = Σ_j Pois(j; λ) (that)^k.
constexpr double blocked_fpr(double m_bits, double n_items, unsigned k, unsigned block_bits) noexcept {
  if (n_items <= 0) return 0.0;
  const double keep_k = math::ipow(1.0 - 1.0 / block_bits, k);  // one key leaves a bit clear
  return detail::poisson_mixture(n_items * block_bits / m_bits, [&](uint64_t j) {
    return math::ipow(1.0 - math::ipow(keep_k, j), k);
  });
}

// Blocked Bloom filter whose B-bit block is partitioned into b parts of B/b
// bits, one bit set per part (Age-Partitioned Bloom Filters, §6: the APBBF's segments):
// FP = Σ_j Pois(j; λ) (1 - (1 - b/B)^j)^b, λ = nB/m.
// Its term for a block holding j keys: (1 - (1 - b/B)^j)^b.
constexpr double partitioned_block_term(uint64_t j, unsigned block_bits, unsigned b) noexcept {
  const double keep = 1.0 - static_cast<double>(b) / block_bits;
  return math::ipow(1.0 - math::ipow(keep, j), b);
}
// λ = nB/m, the mean keys per block, and the last j the sum takes there: a
// caller that sums many loads over one (B, b) tabulates the terms up to it.
constexpr double partitioned_block_lambda(double m_bits, double n_items, unsigned block_bits) noexcept {
  return n_items * block_bits / m_bits;
}
// `terms`, if given, holds partitioned_block_term(j) for j < `count` (the
// same values, computed once for many calls: APBBF's slices).
constexpr double partitioned_block_fpr(double m_bits, double n_items, unsigned block_bits, unsigned b,
                                       const double* terms = nullptr, uint64_t count = 0) noexcept {
  if (n_items <= 0) return 0.0;
  return detail::poisson_mixture(partitioned_block_lambda(m_bits, n_items, block_bits), [&](uint64_t j) {
    return j < count ? terms[j] : partitioned_block_term(j, block_bits, b);
  });
}

// k minimising the FP of m bits holding n items: round(ln2 · m/n), clamped.
constexpr unsigned optimal_k(double m_bits, double n_items, unsigned k_max) noexcept {
  const double k = math::kLn2 * m_bits / (n_items > 0 ? n_items : 1.0);
  unsigned r = static_cast<unsigned>(k + 0.5);
  if (r < 1) r = 1;
  if (r > k_max) r = k_max;
  return r;
}

// Bits for a plain Bloom filter of n items at FP f with optimal k:
// m = -n ln f / ln² 2.
constexpr double bits_for(double n_items, double f) noexcept {
  return -n_items * math::ln(f) / (math::kLn2 * math::kLn2);
}

}  // namespace agebloom::bloom_math
