// Rotating ring of N+1 Bloom filters (Continuous Bloom Filter (Surprenant), "Rotating Filters").
//
// Each filter covers W/N insertions (or TTL/N ticks); at each boundary the
// oldest is reset and becomes current; queries test all N+1; the extra filter
// is the overlap that keeps keys from expiring before the window ends. That is
// the guarded epoch filter of Guarded Epoch Bloom Filters with r = N, so the ring *is* a
// GuardedEpochFilter: one implementation, one set of tests for the shared
// invariant, plain (flat) or blocked filters alike.
//
// What the ring adds is its second rotation trigger: rotate also when the
// current filter reaches its capacity, "preserving the required error rate at
// the expense of a dynamic TTL". Under a rate above the planned one, a time
// window then keeps its FPR and shortens its memory instead of filling up:
// keys of the last TTL are guaranteed only while each TTL/N period brings at
// most capacity/N insertions.
#pragma once

#include "agebloom/filters/guarded_epoch.hpp"

namespace agebloom {

// The rotating ring is a guarded epoch filter configured by RotatingRing::config.
using RotatingRingFilter = GuardedEpochFilter;

// Builds the ring's GuardedEpochConfig (N + 1 rotating filters).
struct RotatingRing {
  // N+1 filters sized so that the ring's FP at the planned load is at most
  // `fpr`. `capacity`: insertions per window (required for time windows).
  // `rotate_at_capacity`: time windows also rotate after capacity/N insertions.
  static constexpr Expected<GuardedEpochConfig> config(Window window, uint32_t n, double fpr,
                                                       uint32_t block_bits = 0, uint64_t capacity = 0,
                                                       bool rotate_at_capacity = false) noexcept {
    auto c = GuardedEpochConfig::for_fpr(window, fpr, {.r = n, .block_bits = block_bits, .capacity = capacity});
    if (!c) return c;
    if (rotate_at_capacity && window.is_time())
      c->epoch_capacity = math::ceil_div(c->capacity, n);
    return c;
  }
};

}  // namespace agebloom
