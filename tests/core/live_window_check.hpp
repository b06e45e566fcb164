// Checks shared by the guarded epoch line layouts (one-line, two-line).
//
// live_window_misses: the guarded epoch invariant, checked on a stream: random keys with repeats
// go through test_and_insert, and a key seen within the window (the last W
// insertions, or the last T ticks with random gaps, some longer than the
// window) must be reported present, both by the verdict of its repeat and by
// contains() on every live key every 211 insertions.
//
// check_bulk_matches_scalar: test_and_insert_bulk against the scalar calls,
// in one call over many rotations and in bursts of every size from 1 to 40
// (runs that start mid-epoch and straddle rotations): same verdicts, same
// counters, the same arena bytes.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <random>
#include <utility>
#include <vector>

#include "agebloom/agebloom.hpp"
#include "owned_filter.hpp"

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

template <class Filter, class Config, class Hash>
void check_bulk_matches_scalar(const Config& cfg, Hash&& hash) {
  ASSERT_TRUE(cfg.validate().ok());
  OwnedFilter<Filter> a(cfg), b(cfg), s(cfg), t(cfg);
  std::mt19937_64 rng(8);
  std::vector<agebloom::KeyHash> keys(20000);
  for (auto& k : keys) k = hash(rng() % 6000);
  std::vector<char> bulk(keys.size());
  b->test_and_insert_bulk(keys.data(), keys.size(), reinterpret_cast<bool*>(bulk.data()));
  uint64_t hits = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    const bool c = a->contains(keys[i]);
    ASSERT_EQ(a->test_and_insert(keys[i]), c);
    ASSERT_EQ(c, static_cast<bool>(bulk[i])) << "key " << i;
    hits += c;
  }
  EXPECT_GT(hits, keys.size() / 4);  // repeats inside the window: the verdicts are not all "new"
  EXPECT_EQ(a->insertions(), b->insertions());
  EXPECT_EQ(a->current_segment(), b->current_segment());
  EXPECT_EQ(a.state(), b.state());
  size_t at = 0;
  for (size_t burst = 1; at < keys.size(); burst = burst % 40 + 1) {
    const size_t len = std::min(burst, keys.size() - at);
    bool got[40];
    t->test_and_insert_bulk(&keys[at], len, got);
    for (size_t i = 0; i < len; ++i) ASSERT_EQ(got[i], s->test_and_insert(keys[at + i])) << "key " << at + i;
    at += len;
  }
  EXPECT_EQ(s->insertions(), t->insertions());
  EXPECT_EQ(s->current_segment(), t->current_segment());
  EXPECT_EQ(s.state(), t.state());
}
