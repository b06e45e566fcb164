// The one-line layout with a spare lane swept ahead ("interleaved-swept",
// InterleavedSweptConfig): the same verdicts as the plain layout of the same
// r, whatever the bursts, windows and idle gaps; no call clears more of the
// spare lane than its share of the epoch; and the bulk bodies agree.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "agebloom/agebloom.hpp"
#include "isa_bodies_check.hpp"
#include "owned_filter.hpp"

namespace ab = agebloom;
using ab::InterleavedEpochConfig;
using ab::InterleavedSweptConfig;
using ab::KeyHash;
using ab::Window;

namespace {
using Plain = OwnedFilter<ab::InterleavedEpochFilter<uint64_t>>;
using Swept = OwnedFilter<ab::InterleavedEpochFilter<uint64_t, true>>;
KeyHash key_hash(uint64_t key) { return ab::Hasher(0x5e7)(&key, sizeof key); }

// Feeds both filters the same bursts (bulk and one by one, lengths 1-80,
// keys from a space about the window's size so that many repeat) and, for a
// time window, the same clock with gaps of up to three epochs: every verdict
// must agree. Returns the hits seen (the test's own check that it probed).
uint64_t run_both(Plain& plain, Swept& swept, bool timed, uint64_t space, std::mt19937_64& rng) {
  std::vector<KeyHash> burst;
  bool a[80], b[80];
  uint64_t now = 1, hits = 0;
  const uint64_t epoch = plain->config().epoch_length();
  for (int round = 0; round < 4000; ++round) {
    if (timed) {
      now += rng() % 50 == 0 ? rng() % (3 * epoch) : rng() % (epoch / 20 + 1);
      EXPECT_TRUE(plain->advance(now));
      EXPECT_TRUE(swept->advance(now));
    }
    const size_t n = 1 + rng() % 80;
    burst.resize(n);
    for (KeyHash& h : burst) h = key_hash(rng() % space);
    const uint64_t form = rng() % 8;
    if (form == 0) {
      for (size_t i = 0; i < n; ++i) a[i] = plain->test_and_insert(burst[i]), b[i] = swept->test_and_insert(burst[i]);
    } else if (form == 1) {  // queries, then inserts (dedup's insert-on-miss path)
      for (size_t i = 0; i < n; ++i) {
        a[i] = plain->contains(burst[i]), b[i] = swept->contains(burst[i]);
        plain->insert(burst[i]), swept->insert(burst[i]);
      }
    } else if (form == 2) {  // lines located first, as DedupFilter's burst in flight
      void* at[80];
      swept->locate_burst(burst.data(), n, at);
      plain->test_and_insert_bulk(burst.data(), n, a);
      swept->test_and_insert_bulk_at(burst.data(), reinterpret_cast<ab::InterleavedEpochFilter<uint64_t, true>::Line* const*>(at), n, b);
    } else {
      plain->test_and_insert_bulk(burst.data(), n, a);
      swept->test_and_insert_bulk(burst.data(), n, b);
    }
    for (size_t i = 0; i < n; ++i) {
      if (a[i] != b[i]) {
        ADD_FAILURE() << "round " << round << " key " << i << ": plain " << a[i] << ", swept " << b[i];
        return hits;
      }
      hits += a[i];
    }
    // The lines swept so far are what SweptPace reads off the header (the
    // GPU replay restores the header from it, gpu/portable/epoch_plan.hpp).
    ab::SweptRingHeader head;
    std::memcpy(&head, swept.memory.data() + swept.offset, sizeof head);
    if (ab::SweptPace::of(swept->config()).swept(head) != head.swept) {
      ADD_FAILURE() << "round " << round << ": swept " << head.swept << ", the pace says "
                    << ab::SweptPace::of(swept->config()).swept(head);
      return hits;
    }
    // Queries alone too: contains() reads every lane but the spare.
    for (int q = 0; q < 4; ++q) {
      const KeyHash h = key_hash(rng() % (2 * space));
      if (plain->contains(h) != swept->contains(h)) {
        ADD_FAILURE() << "round " << round << ": contains differs";
        return hits;
      }
    }
  }
  return hits;
}
}  // namespace

// The spare lane holds an expired segment while it is cleared: a query that
// read it would say "seen" for keys the plain layout has forgotten, and a
// lane taken before it is clear would keep them. Neither shows: for every r
// the swept layout allows, count and time windows, its verdicts are the plain
// layout's with the same configuration.
TEST(InterleavedSwept, SameVerdictsAsThePlainLayout) {
  std::mt19937_64 rng(806);
  for (uint32_t r = 1; r <= 6; ++r)
    for (const bool timed : {false, true}) {
      const uint64_t W = 3000 + rng() % 4000;
      auto plain_cfg = timed ? InterleavedEpochConfig::for_fpr(Window::time(10000), 0.01,
                                                               {.lane_bits = 64, .r = r, .capacity = W})
                             : InterleavedEpochConfig::for_fpr(Window::count(W), 0.01, {.lane_bits = 64, .r = r});
      ASSERT_TRUE(plain_cfg) << plain_cfg.what();
      Plain plain(*plain_cfg);
      Swept swept{InterleavedSweptConfig(*plain_cfg)};
      const uint64_t hits = run_both(plain, swept, timed, 2 * W, rng);
      EXPECT_GT(hits, 1000u) << "r " << r << (timed ? " time" : " count");
      if (!timed) continue;
      // A time window whose epochs also end at their design load
      // (--on-flood keep-fpr: EpochSchedule's fill_cap).
      InterleavedEpochConfig capped = *plain_cfg;
      capped.epoch_capacity = (W + r - 1) / r;
      Plain plain_capped(capped);
      Swept swept_capped{InterleavedSweptConfig(capped)};
      EXPECT_GT(run_both(plain_capped, swept_capped, true, 2 * W, rng), 1000u) << "r " << r << " capped";
    }
}

// The point of the layout: an epoch's end clears nothing at once. In a count
// window each burst clears at most its insertions' share of the spare lane
// (lines / epoch length per insertion, rounded up, plus one), including the
// burst in which the epoch ends; the plain layout clears every line there.
TEST(InterleavedSwept, NoBurstClearsMoreThanItsShare) {
  auto cfg = InterleavedSweptConfig::for_fpr(Window::count(200000), 0.01);
  ASSERT_TRUE(cfg) << cfg.what();
  EXPECT_EQ(cfg->r, 6u);
  Swept f(*cfg);
  const uint64_t lines = cfg->lines, epoch = cfg->epoch_length();
  const double per_insertion = static_cast<double>(lines) / static_cast<double>(epoch);
  std::mt19937_64 rng(32);
  KeyHash burst[32];
  bool out[32];
  uint64_t rotations = 0, most = 0;
  for (uint64_t t = 0; t < 3 * 200000 / 32; ++t) {
    for (KeyHash& h : burst) h = key_hash(rng());
    const uint32_t spare = f->spare_lane();
    const uint64_t before = f->spare_lines_swept();
    f->test_and_insert_bulk(burst, 32, out);
    const bool rotated = f->spare_lane() != spare;
    rotations += rotated;
    const uint64_t cleared = rotated ? lines - before + f->spare_lines_swept() : f->spare_lines_swept() - before;
    most = cleared > most ? cleared : most;
    ASSERT_LE(cleared, static_cast<uint64_t>(std::ceil(32 * per_insertion)) + 2)
        << "burst " << t << (rotated ? " (rotating)" : "") << " of " << lines << " lines";
  }
  EXPECT_GE(rotations, 14u);  // 3 W insertions: about 18 epochs of W/6
  EXPECT_GT(most, 0u);
}

// A time window's sweep follows the clock (advance) as well as the
// insertions: halfway through a quiet epoch about half the spare lane is
// clear, and a rotation after an idle gap finishes what is left.
TEST(InterleavedSwept, TimeWindowsSweepWithTheClock) {
  auto cfg = InterleavedSweptConfig::for_fpr(Window::time(600000), 0.01, 0, 100000);
  ASSERT_TRUE(cfg) << cfg.what();
  Swept f(*cfg);
  const uint64_t epoch = cfg->epoch_length(), lines = cfg->lines;
  ASSERT_TRUE(f->advance(1));
  f->insert(key_hash(1));
  ASSERT_TRUE(f->advance(1 + epoch / 2));
  EXPECT_NEAR(static_cast<double>(f->spare_lines_swept()), lines / 2.0, lines * 0.01 + 2);
  const uint32_t spare = f->spare_lane();
  ASSERT_TRUE(f->advance(1 + 3 * epoch + epoch / 4));  // three epochs end: each rotation finishes its lane
  EXPECT_EQ(f->spare_lane(), (spare + 3) % 8);
  EXPECT_NEAR(static_cast<double>(f->spare_lines_swept()), lines / 4.0, lines * 0.01 + 2);
  EXPECT_TRUE(f->contains(key_hash(1)));  // inserted three epochs ago: still live at r = 6
  // Seven epochs on, its lane (0) is the spare: expired, and only its first
  // line swept, so the answer is the mask's.
  ASSERT_TRUE(f->advance(1 + 7 * epoch));
  EXPECT_EQ(f->spare_lane(), 0u);
  EXPECT_LE(f->spare_lines_swept(), 1u);
  ASSERT_NE(cfg->placement().line(key_hash(1)), 0u);  // its line is not the one swept
  EXPECT_FALSE(f->contains(key_hash(1)));
}

// The AVX2 probe with the spare lane masked off and the baseline body agree
// on every verdict and every byte of state, across epochs.
TEST(InterleavedSwept, Avx2BodyAgreesWithTheBaseline) {
  auto cfg = InterleavedSweptConfig::for_fpr(Window::count(5000), 0.01);
  ASSERT_TRUE(cfg);
  ASSERT_EQ(cfg->k, 8u);
  Swept wide(*cfg), base(*cfg);
  base->use_isa(ab::Isa::baseline);
  EXPECT_EQ(base->isa(), ab::Isa::baseline);
  if (!ab::cpu_has_avx2() || !AGEBLOOM_INTRINSICS_DISPATCH) GTEST_SKIP() << "this CPU (or build) has no AVX2 body to run";
  EXPECT_EQ(wide->isa(), ab::Isa::avx2);
  std::mt19937_64 rng(6);
  check_bodies_agree(wide, base, rng, [](std::mt19937_64& r) { return key_hash(r() % 12000); });
}

// A swept layout needs a lane besides its r + 1 live ones, and 64-bit lanes.
TEST(InterleavedSwept, InvalidShapesAreErrors) {
  EXPECT_EQ(InterleavedSweptConfig::for_fpr(Window::count(100000), 0.01, 7).code(), ab::Errc::segments_out_of_range);
  auto seven = InterleavedEpochConfig::for_fpr(Window::count(100000), 0.01, {.lane_bits = 64, .r = 7});
  ASSERT_TRUE(seven);
  using SweptFilter = ab::InterleavedEpochFilter<uint64_t, true>;
  EXPECT_EQ(SweptFilter::bytes_needed(InterleavedSweptConfig(*seven)).code(), ab::Errc::segments_out_of_range);
  auto narrow = InterleavedEpochConfig::for_fpr(Window::count(100000), 0.01, {.lane_bits = 32, .r = 6});
  ASSERT_TRUE(narrow);
  EXPECT_EQ(InterleavedSweptConfig(*narrow).validate().code(), ab::Errc::block_size_invalid);
  EXPECT_EQ(InterleavedSweptConfig::for_fpr(Window::time(1000), 0.01).code(), ab::Errc::capacity_zero);
  auto swept = InterleavedSweptConfig::for_fpr(Window::count(1'000'000), 0.01);
  ASSERT_TRUE(swept);
  EXPECT_NEAR(swept->bits_per_item(), 30.6, 0.3);  // docs/PERFORMANCE.md's figure
}
