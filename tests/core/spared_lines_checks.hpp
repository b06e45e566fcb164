// Checks shared by the fingerprint filters with a spare (pocket-epoch,
// queue-epoch): the same sizing and model (PocketEpochConfig::for_fpr,
// pocket_epoch_fpr), so the same measurements hold them to it.
//
// check_model_at_the_peak: FPR 5%, 1% and 0.1%, measured on fresh keys at the
// worst moment (every segment full, just before a rotation), within 15% of
// the model, and FPR 1% in at most 18 bits per item.
//
// steady_stream_fpr: six turns of the window of fresh keys through
// test_and_insert, ending at the peak; checks the spare's use (some, under
// `max_share` of operations; saturations at most `max_saturated` of them)
// and returns the measured FPR (its model is the caller's to compare).
//
// check_key_lives_until_its_segment_is_reused: Lemma 1's bounds at the edges.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>

#include "agebloom/agebloom.hpp"
#include "owned_filter.hpp"

template <class Filter, class Config, class Hash>
void check_model_at_the_peak(Hash&& key_hash) {
  namespace ab = agebloom;
  const uint64_t W = 1'000'000;
  auto one_pct = Config::for_fpr(ab::Window::count(W), 0.01);
  ASSERT_TRUE(one_pct) << one_pct.what();
  EXPECT_LE(one_pct->bits_per_item(), 18.0);
  for (double fpr : {0.05, 0.01, 0.001}) {
    auto c = Config::for_fpr(ab::Window::count(fpr == 0.01 ? W : W / 4), fpr);  // W/4: the sanitizer builds' time
    ASSERT_TRUE(c) << c.what();
    EXPECT_LE(c->model_fpr(), fpr);
    OwnedFilter<Filter> f(*c);
    const uint64_t full = c->segments() * c->epoch_length();  // the next insertion rotates
    for (uint64_t t = 0; t < full; ++t) f->insert(key_hash(t));
    ASSERT_EQ(f->current_segment(), c->r);
    uint64_t fp = 0;
    const uint64_t probes = static_cast<uint64_t>(2500 / c->model_fpr());  // ~2500 false positives: ±2% statistical
    for (uint64_t q = 0; q < probes; ++q) fp += f->contains(key_hash((uint64_t{1} << 50) + q));
    const double measured = static_cast<double>(fp) / static_cast<double>(probes);
    EXPECT_NEAR(measured / c->model_fpr(), 1.0, 0.15)
        << "FPR " << fpr << ": measured " << measured << ", model " << c->model_fpr();
    EXPECT_EQ(f->saturations(), 0u);
  }
}

template <class Filter, class Config, class Hash>
double steady_stream_fpr(const Config& c, double max_share, double max_saturated, Hash&& key_hash) {
  OwnedFilter<Filter> f(c);
  const uint64_t turn = c.segments() * c.epoch_length(), n = 6 * turn;
  uint64_t reads_before = 0;
  for (uint64_t t = 0; t < n; ++t) {
    if (t == 3 * turn) reads_before = f->spare_reads();
    f->test_and_insert(key_hash(t));
  }
  EXPECT_EQ(f->current_segment(), c.r);  // the next insertion rotates: the peak
  const double share = static_cast<double>(f->spare_reads() - reads_before) / static_cast<double>(3 * turn);
  EXPECT_GT(share, 0.0);  // the spare is in use at this load
  EXPECT_LT(share, max_share) << share;
  EXPECT_LE(static_cast<double>(f->saturations()), max_saturated * static_cast<double>(n)) << f->saturations();
  uint64_t fp = 0;
  const uint64_t probes = 400'000;
  for (uint64_t q = 0; q < probes; ++q) fp += f->contains(key_hash((uint64_t{1} << 50) + q));
  const double measured = static_cast<double>(fp) / static_cast<double>(probes);
  EXPECT_NEAR(measured / c.model_fpr(), 1.0, 0.15) << "measured " << measured << ", model " << c.model_fpr();
  return measured;
}

template <class Filter, class Config, class Hash>
void check_key_lives_until_its_segment_is_reused(Hash&& key_hash) {
  auto cfg = Config::for_fpr(agebloom::Window::count(700), 0.001);
  ASSERT_TRUE(cfg);
  OwnedFilter<Filter> f(*cfg);
  const agebloom::KeyHash k = key_hash(1u << 30);
  EXPECT_FALSE(f->test_and_insert(k));  // insertion 1: epoch 0
  const uint64_t life = cfg->segments() * cfg->epoch_length();
  uint64_t t = 1;
  for (; t < life; ++t) {
    f->insert(key_hash(t));
    ASSERT_TRUE(f->contains(k)) << t;
  }
  f->insert(key_hash(t));  // opens epoch r + 1: segment 0 is reused
  EXPECT_FALSE(f->contains(k));
}
