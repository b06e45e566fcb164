// The guarded epoch invariant, checked on a stream: random keys with repeats
// go through test_and_insert, and a key seen within the window (the last W
// insertions, or the last T ticks with random gaps, some longer than the
// window) must be reported present, both by the verdict of its repeat and by
// contains() on every live key every 211 insertions. For the layouts that
// share the guarded epoch semantics (one-line, two-line).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <random>
#include <utility>

#include "agebloom/agebloom.hpp"

// Live keys the filter missed over the stream (0 is the invariant). `f` is
// a filter of a count window of W insertions, or a time window of T ticks
// sized for 3000 insertions per window (timed); `hash` turns a key into its KeyHash.
template <class Filter, class Hash>
uint64_t live_window_misses(Filter& f, bool timed, uint64_t W, uint64_t T, std::mt19937_64& rng, Hash&& hash) {
  std::deque<std::pair<uint64_t, uint64_t>> recent;  // (insertion time or count, key)
  uint64_t now = 0, misses = 0;
  const uint64_t n = timed ? 30000 : 10 * W + 10;
  for (uint64_t t = 0; t < n; ++t) {
    if (timed) {
      now += rng() % 150 == 0 ? rng() % (2 * T) : rng() % (T / 1000 + 2);
      EXPECT_TRUE(f.advance(now));
    }
    const uint64_t key = rng() % (timed ? 4000 : 2 * W);
    const uint64_t at = timed ? now : t, span = timed ? T : W;
    while (timed && !recent.empty() && at - recent.front().first > span) recent.pop_front();
    bool live = false;
    for (auto it = recent.rbegin(); it != recent.rend() && !live; ++it) live = it->second == key;
    const bool verdict = f.test_and_insert(hash(key));
    misses += live && !verdict;
    recent.emplace_back(at, key);
    while (!timed && recent.size() > span) recent.pop_front();
    if (t % 211 == 0)
      for (auto& [when, k] : recent) misses += !f.contains(hash(k));
  }
  return misses;
}
