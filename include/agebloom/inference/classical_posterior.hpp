// The inferential classical Bloom filter (Dautrich & Ravishankar,
// "Inferential Time-Decaying Bloom Filters", Sec. 2.4, Theorem 1): the
// posterior that x is among the n keys inserted into a plain Bloom filter,
// given whether all r_x of its bits are set.
//
// A set bit proves nothing; an unset one proves x absent. With the prior
// P(⊥) = (1 − p_x)^n that x was never among n insertions (eq. 3) and the
// filter's false-positive chance P_FP (eq. 1),
//   P(I_x < n | R_x) = 1 / (1 + (1 − p_x)^n·P_FP / (1 − (1 − p_x)^n))   if all set,  0 otherwise.
//
// Freestanding, header-only.
#pragma once

#include <cstdint>

#include "agebloom/core/math.hpp"

namespace agebloom::inference {

// eq. 1: the chance that all r distinct bits of a key never inserted were set
// by n insertions of k bits each into m bits.
constexpr double classical_false_positive(double m, uint32_t k, uint64_t n, uint32_t r) noexcept {
  const double untouched = math::exp(static_cast<double>(k) * static_cast<double>(n) * math::ln_one_minus(1.0 / m));
  return math::ipow(1.0 - untouched, r);
}

// Theorem 1 (eq. 13).
constexpr double classical_posterior(bool all_set, double false_positive, uint64_t n, double p) noexcept {
  if (!all_set) return 0.0;
  const double never = math::survive(p, n);  // P(⊥)
  const double ever = math::hit(p, n);
  if (!(ever > 0.0)) return 0.0;
  return 1.0 / (1.0 + never * false_positive / ever);
}

}  // namespace agebloom::inference
