// Minimum-penalty decisions from a posterior (Dautrich & Ravishankar,
// "Inferential Time-Decaying Bloom Filters", Sec. 2.6), and the checks of
// what a caller hands in: penalties and priors.
//
// A wrong "seen" costs $FP (a fresh click suppressed: the publisher loses
// it), a wrong "not seen" costs $FN (a repeated click paid for: the
// advertiser loses). With P = P(I_x < w | R_x) the expected penalty of
// answering "seen" is $FP·(1 − P) and of "not seen" $FN·P; the decision
// takes the smaller, per query, with that query's penalties.
//
// Freestanding, header-only.
#pragma once

#include <cstdint>

#include "agebloom/core/error.hpp"
#include "agebloom/core/math.hpp"

namespace agebloom::inference {

// True for a finite v > 0: what a penalty must be.
constexpr bool finite_positive(double v) noexcept { return v > 0.0 && v < math::kInf; }

// The per-query costs of the two wrong answers (Sec. 2.6).
struct Penalties {
  double fp = 1.0;  // $FP: answering "seen" for a key outside the window
  double fn = 1.0;  // $FN: answering "not seen" for a key inside it

  // penalty_invalid unless both are finite and positive (a zero or infinite cost
  // would make one answer free and the posterior irrelevant).
  constexpr Status validate() const noexcept {
    return finite_positive(fp) && finite_positive(fn) ? Status{} : Status{Errc::penalty_invalid};
  }
};

// p_x: the chance that the next insertion is key x (Sec. 2.3.1, Definition 6).
constexpr Status validate_prior(double p) noexcept {
  return p > 0.0 && p < 1.0 ? Status{} : Status{Errc::prior_invalid};
}

// The prior that says nothing about a key: the p_x under which it is as likely
// inside the window of w insertions as outside it, (1 − p)^w = 1/2 (eq. 5).
// What the tools use when the caller has no better figure (--prior).
constexpr double neutral_prior(uint64_t w) noexcept {
  return math::root_complement(0.5, static_cast<double>(w ? w : 1));
}

// decide()'s answer and what it is expected to cost.
struct Decision {
  bool seen = false;              // the answer: suppress as a repeat
  double expected_penalty = 0.0;  // of the answer given
};

// Sec. 2.6: "seen" iff $FP·(1 − P) <= $FN·P.
constexpr Decision decide(double posterior, Penalties pen) noexcept {
  const double if_seen = pen.fp * (1.0 - posterior);
  const double if_not = pen.fn * posterior;
  return if_seen <= if_not ? Decision{true, if_seen} : Decision{false, if_not};
}

}  // namespace agebloom::inference
