// What the GPU tests compare against, shared by the host emulation and the
// device tests: one packet through a CPU filter as dedup_fwd and
// agebloom-replay run it, and clocks for time-window streams.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "agebloom/agebloom.hpp"

namespace agebloom::gpu_test {

// Time windows (now != nullptr): advance to the packet's clock first. Then the
// policy's decision: insert-always is test_and_insert; insert-on-miss is
// contains, and an insert only of what was not seen.
template <class Filter>
bool cpu_decide(Filter& f, KeyHash k, const uint64_t* now, bool on_miss) {
  if (now != nullptr) {
    EXPECT_TRUE(f.advance(*now).ok());
  }
  if (!on_miss) return f.test_and_insert(k);
  if (f.contains(k)) return true;
  f.insert(k);
  return false;
}

// Clocks for a time window of `span` ticks: mostly steps of 0-3 ticks (so
// several packets share a tick), and now and then, one packet in `one_in`, an
// idle gap of more than the whole span (everything expires: catch-up), and
// `half_gaps` times as often one of half the span.
inline std::vector<uint64_t> clocks(size_t n, uint64_t span, uint64_t seed, uint64_t one_in, uint64_t half_gaps) {
  std::vector<uint64_t> t(n);
  std::mt19937_64 rng(seed);
  uint64_t now = 1'000'000;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t r = rng() % one_in;
    now += r == 0 ? span * 2 + rng() % span : r <= half_gaps ? span / 2 : rng() % 4;
    t[i] = now;
  }
  return t;
}

}  // namespace agebloom::gpu_test
