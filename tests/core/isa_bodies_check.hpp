// Two filters of one configuration, one running a vector bulk body and one
// the baseline body (use_isa), fed the same bursts of 1 to 97 keys, which
// cross epochs: every verdict and every byte of state must agree. draw(rng)
// gives each key's hash (from a small key space, so keys repeat and hit).
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "agebloom/agebloom.hpp"
#include "owned_filter.hpp"

template <class Filter, class Draw>
void check_bodies_agree(OwnedFilter<Filter>& wide, OwnedFilter<Filter>& base, std::mt19937_64& rng, Draw draw) {
  std::vector<agebloom::KeyHash> burst;
  bool wide_out[97], base_out[97];
  uint64_t hits = 0;
  for (int round = 0; round < 3000; ++round) {
    const size_t n = 1 + rng() % 97;
    burst.resize(n);
    for (agebloom::KeyHash& h : burst) h = draw(rng);
    wide->test_and_insert_bulk(burst.data(), n, wide_out);
    base->test_and_insert_bulk(burst.data(), n, base_out);
    for (size_t i = 0; i < n; ++i) {
      ASSERT_EQ(wide_out[i], base_out[i]) << round << ", key " << i;
      hits += wide_out[i];
    }
  }
  EXPECT_GT(hits, 10000u);
  EXPECT_EQ(wide.state(), base.state());
}
