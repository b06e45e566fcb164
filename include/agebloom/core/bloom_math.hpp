// False-positive formulas of a single Bloom filter segment, shared by the
// sizing functions of every structure in the core (freestanding; the hosted
// model library in lib/model builds the papers' recurrences on top of these).
#pragma once

#include <cstdint>

#include "agebloom/core/math.hpp"

namespace agebloom::bloom_math {

// Classic Bloom filter of m bits, n items, k hash functions:
// (1 - e^{-kn/m})^k (Bloom 1970; the approximation used by paper 000 Prop. 2).
constexpr double fpr(double m_bits, double n_items, unsigned k) noexcept {
  if (n_items <= 0) return 0.0;
  const double fill = 1.0 - math::exp(-static_cast<double>(k) * n_items / m_bits);
  return math::pow(fill, k);
}

// Blocked Bloom filter (Putze, Sanders, Singler 2007, §3): the n items spread
// over m/B blocks as Poisson(λ = nB/m); a block holding j keys has each bit
// set with probability 1 - (1 - 1/B)^{kj}. FP = Σ_j Pois(j; λ) (that)^k.
constexpr double blocked_fpr(double m_bits, double n_items, unsigned k, unsigned block_bits) noexcept {
  if (n_items <= 0) return 0.0;
  const double blocks = m_bits / block_bits;
  const double lambda = n_items / blocks;
  const double keep = 1.0 - 1.0 / block_bits;
  // Sum the Poisson mass out to λ + 12σ + 16: the tail beyond is < 1e-30.
  double sigma = 1.0;
  while (sigma * sigma < lambda) sigma += 1.0;
  const uint64_t jmax = static_cast<uint64_t>(lambda + 12.0 * sigma + 16.0);
  double log_p = -lambda;  // log Pois(0)
  const double log_lambda = math::ln(lambda);
  double sum = 0.0;
  for (uint64_t j = 0; j <= jmax; ++j) {
    if (j > 0) log_p += log_lambda - math::ln(static_cast<double>(j));
    const double bit_set = 1.0 - math::pow(keep, static_cast<double>(k) * j);
    sum += math::exp(log_p) * math::pow(bit_set, k);
  }
  return sum;
}

// Blocked Bloom filter whose B-bit block is partitioned into b parts of B/b
// bits, one bit set per part (paper 001, §6: the APBBF's segments):
// FP = Σ_j Pois(j; λ) (1 - (1 - b/B)^j)^b, λ = nB/m.
constexpr double partitioned_block_fpr(double m_bits, double n_items, unsigned block_bits,
                                       unsigned b) noexcept {
  if (n_items <= 0) return 0.0;
  const double lambda = n_items * block_bits / m_bits;
  const double keep = 1.0 - static_cast<double>(b) / block_bits;
  double sigma = 1.0;
  while (sigma * sigma < lambda) sigma += 1.0;
  const uint64_t jmax = static_cast<uint64_t>(lambda + 12.0 * sigma + 16.0);
  double log_p = -lambda;
  const double log_lambda = math::ln(lambda);
  double sum = 0.0;
  for (uint64_t j = 0; j <= jmax; ++j) {
    if (j > 0) log_p += log_lambda - math::ln(static_cast<double>(j));
    sum += math::exp(log_p) * math::pow(1.0 - math::pow(keep, static_cast<double>(j)), b);
  }
  return sum;
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
