// The one-cache-line guarded epoch layout: the guarded epoch invariants hold
// unchanged, its FPR model (blocked segments of lane width) matches
// measurement, and it sizes itself to a target.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "agebloom/agebloom.hpp"
#include "isa_bodies_check.hpp"
#include "live_window_check.hpp"
#include "owned_filter.hpp"

namespace ab = agebloom;
using ab::InterleavedEpochConfig;
using ab::KeyHash;
using ab::Window;

namespace {
template <class Lane>
using Owned = OwnedFilter<ab::InterleavedEpochFilter<Lane>>;
KeyHash key_hash(uint64_t key) { return ab::Hasher(0x11e)(&key, sizeof key); }

template <class Lane>
void check_live_window(uint32_t lane_bits, bool timed, std::mt19937_64& rng) {
  const uint32_t r = 1 + rng() % (512 / lane_bits - 1);
  const uint64_t W = r + rng() % 5000, T = 1000 + rng() % 50000;
  auto cfg = timed ? InterleavedEpochConfig::for_fpr(Window::time(T), 0.01, {.lane_bits = lane_bits, .r = r, .capacity = 3000})
                   : InterleavedEpochConfig::for_fpr(Window::count(W), 0.01, {.lane_bits = lane_bits, .r = r});
  ASSERT_TRUE(cfg) << cfg.what();
  Owned<Lane> f(*cfg);
  const uint64_t misses = live_window_misses(f.filter, timed, W, T, rng, key_hash);
  EXPECT_EQ(misses, 0u) << "lane " << lane_bits << " r=" << r << (timed ? " time" : " count");
}
}  // namespace

TEST(InterleavedEpoch, NoLiveFalseNegativesCountAndTime) {
  std::mt19937_64 rng(512);
  for (int trial = 0; trial < 8; ++trial) {
    check_live_window<uint64_t>(64, trial % 2, rng);
    check_live_window<uint32_t>(32, trial % 2, rng);
    check_live_window<ab::bits::Word128>(128, trial % 2, rng);
  }
}

template <class Lane>
void check_fpr_matches_model(uint32_t lane_bits) {
  for (double p : {0.05, 0.01, 0.001}) {
    const uint64_t W = 40000;
    auto cfg = InterleavedEpochConfig::for_fpr(Window::count(W), p, {.lane_bits = lane_bits});
    ASSERT_TRUE(cfg);
    EXPECT_LE(cfg->model_fpr(), p);
    Owned<Lane> f(*cfg);
    const uint64_t ell = cfg->epoch_length();
    const uint64_t per_epoch = static_cast<uint64_t>(300 / p);
    uint64_t t = 0, probes = 0, pos = 0, next = 1ULL << 50;
    for (uint32_t e = 0; e < 3 * cfg->segments(); ++e) {
      for (uint64_t i = 0; i < ell; ++i) f->insert(key_hash(t++));
      if (e < cfg->segments()) continue;  // every segment full once
      for (uint64_t q = 0; q < per_epoch; ++q, ++probes) pos += f->contains(key_hash(next++));
    }
    const double measured = static_cast<double>(pos) / probes;
    EXPECT_NEAR(measured / cfg->model_fpr(), 1.0, 0.15)
        << "lane " << lane_bits << " p=" << p << " k=" << cfg->k << " measured " << measured;
  }
}

TEST(InterleavedEpoch, MeasuredFprMatchesModel) {
  check_fpr_matches_model<uint64_t>(64);
  check_fpr_matches_model<ab::bits::Word128>(128);
}

// The price of one line per query, quantified: more bits per item than the
// flat paper layout at the same target (Table 3's B = 64 penalty).
TEST(InterleavedEpoch, CostsMoreBitsThanTheFlatLayout) {
  auto il = InterleavedEpochConfig::for_fpr(Window::count(1'000'000), 0.01, {.lane_bits = 64});
  auto flat = ab::GuardedEpochConfig::for_fpr(Window::count(1'000'000), 0.01, {.r = 7});
  ASSERT_TRUE(il && flat);
  EXPECT_GT(il->bits_per_item(), flat->bits_per_item());
  EXPECT_LT(il->bits_per_item(), 2.5 * flat->bits_per_item());
}

// Four 128-bit lanes: wider blocks, so the busy lines cost less FPR than in
// eight 64-bit lanes (27.2 bits per item at 1%); still more than the flat
// layout with as many segments (Prop. 2 with r = 3). The figures are the
// model's (docs/ALGORITHMS.md), the bounds loose enough for the sizing step.
TEST(InterleavedEpoch, WideLanesCostFewerBits) {
  const Window w = Window::count(1'000'000);
  auto narrow = InterleavedEpochConfig::for_fpr(w, 0.01, {.lane_bits = 64});
  auto wide = ab::Interleaved128Config::for_fpr(w, 0.01);
  auto flat = ab::GuardedEpochConfig::for_fpr(w, 0.01, {.r = 3});
  ASSERT_TRUE(narrow && wide && flat);
  EXPECT_EQ(wide->lane_bits, 128u);
  EXPECT_EQ(wide->r, 3u);
  EXPECT_EQ(wide->k, 8u);
  EXPECT_LT(wide->bits_per_item(), 0.8 * narrow->bits_per_item());
  EXPECT_GT(wide->bits_per_item(), flat->bits_per_item());
  EXPECT_NEAR(wide->bits_per_item(), 21.0, 0.3);
  EXPECT_LE(wide->model_fpr(), 0.01);
  // The model's FP grows by the blocks' load spread: one line fewer misses the target.
  InterleavedEpochConfig fewer = *wide;
  fewer.lines -= 1;
  EXPECT_GT(fewer.model_fpr(), 0.01);
}

// The 128-bit lane's pattern: b parts of 128/b bits, one bit in each, at the
// offset read from h2's field at j·64/b (bits.hpp), for every b.
TEST(InterleavedEpoch, WideLanePatternHasOneBitPerPart) {
  std::mt19937_64 rng(128);
  for (uint32_t b : {1u, 2u, 4u, 8u, 16u, 32u, 64u}) {
    const uint32_t span = 128 / b, stride = 64 / b;
    for (int trial = 0; trial < 2000; ++trial) {
      const uint64_t y = rng();
      const ab::bits::Word128 m = ab::bits::word128_pattern(y, b);
      ASSERT_EQ(ab::bits::popcount(m), static_cast<int>(b)) << b;
      for (uint32_t part = 0; part < b; ++part) {
        const uint32_t bit = part * span + static_cast<uint32_t>((y >> (part * stride)) & (span - 1));
        ASSERT_TRUE(((bit < 64 ? m.lo >> bit : m.hi >> (bit - 64)) & 1) != 0) << "b " << b << " part " << part;
      }
    }
  }
}

TEST(InterleavedEpoch, InvalidParametersAreErrors) {
  InterleavedEpochConfig c;
  c.window = Window::count(1000);
  c.k = 4;
  c.lines = 100;
  c.r = 7;
  EXPECT_TRUE(c.validate());
  c.lane_bits = 16;
  EXPECT_EQ(c.validate().code(), ab::Errc::block_size_invalid);
  c.lane_bits = 64;
  c.r = 8;  // 9 segments in 8 lanes
  EXPECT_EQ(c.validate().code(), ab::Errc::segments_out_of_range);
  c.r = 0;
  EXPECT_EQ(c.validate().code(), ab::Errc::segments_out_of_range);
  c.r = 7;
  c.k = 0;
  EXPECT_EQ(c.validate().code(), ab::Errc::k_out_of_range);
  c.k = 3;  // one bit per part: k must be a power of two
  EXPECT_EQ(c.validate().code(), ab::Errc::k_out_of_range);
  c.k = 64;
  EXPECT_EQ(c.validate().code(), ab::Errc::k_out_of_range);
  c.k = 4;
  c.lines = 0;
  EXPECT_EQ(c.validate().code(), ab::Errc::budget_too_small);
  c.lines = 100;
  c.window = Window::count(3);
  EXPECT_EQ(c.validate().code(), ab::Errc::window_smaller_than_segments);
  EXPECT_EQ(InterleavedEpochConfig::for_fpr(Window::count(1000), 0.0).code(), ab::Errc::fpr_out_of_range);
  EXPECT_EQ(InterleavedEpochConfig::for_fpr(Window::time(1000), 0.01).code(), ab::Errc::capacity_zero);
  // A config for 32-bit lanes is refused by the 64-bit filter.
  auto c32 = InterleavedEpochConfig::for_fpr(Window::count(1000), 0.01, {.lane_bits = 32});
  ASSERT_TRUE(c32);
  EXPECT_EQ(ab::InterleavedEpochFilter<uint64_t>::bytes_needed(*c32).code(), ab::Errc::block_size_invalid);
  // 128-bit lanes: four segments at most, k a power of two up to 64.
  auto wide = ab::Interleaved128Config::for_fpr(Window::count(1000), 0.01);
  ASSERT_TRUE(wide);
  EXPECT_TRUE(wide->validate());
  InterleavedEpochConfig w = *wide;
  w.r = 4;
  EXPECT_EQ(w.validate().code(), ab::Errc::segments_out_of_range);
  w.r = 3;
  w.k = 12;
  EXPECT_EQ(w.validate().code(), ab::Errc::k_out_of_range);
  w.k = 128;
  EXPECT_EQ(w.validate().code(), ab::Errc::k_out_of_range);
  EXPECT_EQ(ab::Interleaved128Config::for_fpr(Window::count(1000), 0.01, 4).code(), ab::Errc::segments_out_of_range);
  EXPECT_EQ(ab::Interleaved128Config::for_fpr(Window::time(1000), 0.01).code(), ab::Errc::capacity_zero);
  // Each lane width's filter refuses the other's config.
  EXPECT_EQ(ab::InterleavedEpochFilter<uint64_t>::bytes_needed(*wide).code(), ab::Errc::block_size_invalid);
  EXPECT_EQ(ab::InterleavedEpochFilter<ab::bits::Word128>::bytes_needed(*c32).code(), ab::Errc::block_size_invalid);
}

// The bulk form against the scalar calls (live_window_check.hpp), for every
// pattern the bulk path specialises (k = 4, 8, 16 in 64-bit lanes) and the
// generic one (k = 2, and 32-bit lanes).
template <class Lane>
void check_bulk_matches_scalar(InterleavedEpochConfig cfg) {
  SCOPED_TRACE("lane bits " + std::to_string(sizeof(Lane) * 8) + ", k " + std::to_string(cfg.k));
  ::check_bulk_matches_scalar<ab::InterleavedEpochFilter<Lane>>(cfg, key_hash);
}

TEST(InterleavedEpoch, OperationFormsAgree) {
  auto k8 = InterleavedEpochConfig::for_fpr(Window::count(3000), 0.05, {.lane_bits = 64});
  ASSERT_TRUE(k8);  // its shape; every k is checked below
  for (uint32_t k : {2u, 4u, 8u, 16u}) {
    InterleavedEpochConfig c = *k8;
    c.k = k;
    check_bulk_matches_scalar<uint64_t>(c);
  }
  auto c32 = InterleavedEpochConfig::for_fpr(Window::count(3000), 0.05, {.lane_bits = 32});
  ASSERT_TRUE(c32);
  check_bulk_matches_scalar<uint32_t>(*c32);
  auto c128 = ab::Interleaved128Config::for_fpr(Window::count(3000), 0.05);
  ASSERT_TRUE(c128);
  for (uint32_t k : {1u, 2u, 4u, 8u, 16u, 32u, 64u}) {  // k = 8 has its own bulk body
    InterleavedEpochConfig c = *c128;
    c.k = k;
    check_bulk_matches_scalar<ab::bits::Word128>(c);
  }
}

// The AVX2 probe (interleaved_avx2.hpp, chosen at create() for 64-bit lanes
// and k = 8) and the baseline body agree on every verdict and every byte of
// state, in bursts of every length that cross epochs, with keys that repeat;
// other shapes keep the baseline body.
TEST(InterleavedEpoch, Avx2BodyAgreesWithTheBaseline) {
  auto cfg = InterleavedEpochConfig::for_fpr(Window::count(5000), 0.01, {.lane_bits = 64});
  ASSERT_TRUE(cfg);
  ASSERT_EQ(cfg->k, 8u);
  Owned<uint64_t> wide(*cfg), base(*cfg);
  base->use_isa(ab::Isa::baseline);
  EXPECT_EQ(base->isa(), ab::Isa::baseline);
  if (!ab::cpu_has_avx2() || !AGEBLOOM_INTRINSICS_DISPATCH) GTEST_SKIP() << "this CPU (or build) has no AVX2 body to run";
  EXPECT_EQ(wide->isa(), ab::Isa::avx2);
  std::mt19937_64 rng(47);
  check_bodies_agree(wide, base, rng, [](std::mt19937_64& r) { return key_hash(r() % 12000); });
  InterleavedEpochConfig k4 = *cfg;
  k4.k = 4;
  Owned<uint64_t> other(k4);
  EXPECT_EQ(other->isa(), ab::Isa::baseline);
}

// The same for the 128-bit lanes' AVX2 probe (k = 8): verdicts and state
// byte for byte, in every lane as the current one.
TEST(InterleavedEpoch, Avx2BodyAgreesWithTheBaselineIn128BitLanes) {
  auto cfg = ab::Interleaved128Config::for_fpr(Window::count(5000), 0.01);
  ASSERT_TRUE(cfg);
  ASSERT_EQ(cfg->k, 8u);
  Owned<ab::bits::Word128> wide(*cfg), base(*cfg);
  base->use_isa(ab::Isa::baseline);
  EXPECT_EQ(base->isa(), ab::Isa::baseline);
  if (!ab::cpu_has_avx2() || !AGEBLOOM_INTRINSICS_DISPATCH) GTEST_SKIP() << "this CPU (or build) has no AVX2 body to run";
  EXPECT_EQ(wide->isa(), ab::Isa::avx2);
  std::mt19937_64 rng(128);
  check_bodies_agree(wide, base, rng, [](std::mt19937_64& r) { return key_hash(r() % 12000); });
  InterleavedEpochConfig k16 = *cfg;
  k16.k = 16;
  Owned<ab::bits::Word128> other(k16);
  EXPECT_EQ(other->isa(), ab::Isa::baseline);
}

namespace {
// locate_burst over bursts of every length up to 70 (eight-key groups and
// tails), with and without the AVX-512 body: every kept line is line_of's.
template <class Lane>
void check_locate_burst(const InterleavedEpochConfig& cfg, ab::Isa widest) {
  Owned<Lane> f(cfg);
  f->use_isa(widest);
  std::mt19937_64 rng(70);
  KeyHash h[70];
  void* at[70];
  for (size_t n = 0; n <= 70; ++n) {
    for (size_t i = 0; i < n; ++i) h[i] = key_hash(rng());
    f->locate_burst(h, n, at);
    for (size_t i = 0; i < n; ++i)
      ASSERT_EQ(at[i], static_cast<void*>(f->line_of(h[i]))) << "n " << n << " key " << i << " " << ab::isa_name(widest);
  }
}
}  // namespace

// DedupFilter keeps the lines locate_burst gives a burst and probes them a
// burst later: each must be the key's own line, in both bodies and every
// lane width.
TEST(InterleavedEpoch, LocateBurstKeepsEachKeysLine) {
  auto c64 = InterleavedEpochConfig::for_fpr(Window::count(100000), 0.01, {.lane_bits = 64});
  auto c32 = InterleavedEpochConfig::for_fpr(Window::count(100000), 0.01, {.lane_bits = 32});
  auto c128 = ab::Interleaved128Config::for_fpr(Window::count(100000), 0.01);
  ASSERT_TRUE(c64 && c32 && c128);
  for (const ab::Isa isa : {ab::Isa::avx512, ab::Isa::baseline}) {
    check_locate_burst<uint64_t>(*c64, isa);
    check_locate_burst<uint32_t>(*c32, isa);
    check_locate_burst<ab::bits::Word128>(*c128, isa);
  }
  if (!ab::cpu_has_avx512() || !AGEBLOOM_INTRINSICS_DISPATCH)
    GTEST_SKIP() << "this CPU (or build) has no AVX-512 body: the one-by-one form alone was checked";
}

#if AGEBLOOM_INTRINSICS_DISPATCH
// The AVX-512 body's line from two 32-bit products equals reduce()'s 64 x 64
// -> 128 product for line counts up to 2^32 - 1 and hashes at the extremes.
// It reads no line, so the counts need no memory behind them.
TEST(InterleavedEpoch, LocateBurstAvx512IsExactBelow2To32Lines) {
  if (!ab::cpu_has_avx512()) GTEST_SKIP() << "this CPU has no AVX-512";
  std::mt19937_64 rng(32);
  uint64_t pairs[2 * 64];
  void* at[64];
  alignas(64) static char base[64];
  for (const uint64_t count : {uint64_t{1}, uint64_t{3}, uint64_t{65536}, (uint64_t{1} << 20) + 7,
                               (uint64_t{1} << 32) - 1}) {
    for (size_t i = 0; i < 64; ++i) {
      const uint64_t edge[] = {0, ~uint64_t{0}, uint64_t{1} << 32, (uint64_t{1} << 32) - 1, uint64_t{1} << 63};
      pairs[2 * i] = i < 5 ? edge[i] : rng();
      pairs[2 * i + 1] = rng();
    }
    ASSERT_EQ(ab::lane_lines_avx512::locate_and_request(pairs, 64, count, base, at), 64u);
    for (size_t i = 0; i < 64; ++i)
      ASSERT_EQ(reinterpret_cast<uintptr_t>(at[i]), reinterpret_cast<uintptr_t>(base) + 64 * ab::reduce(pairs[2 * i], count))
          << "count " << count << " h1 " << pairs[2 * i];
  }
}
#endif
