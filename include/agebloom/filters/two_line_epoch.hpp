// Guarded epoch filter whose keys straddle two adjacent cache lines: the
// fast layout at guarded-epoch memory.
//
// The one-line layout (interleaved_epoch.hpp) gives each of 8 segments a
// 64-bit lane of a line, so each segment is a blocked Bloom filter with
// B = 64: the variance of the keys per block costs it 27 bits per item at
// FPR 1%, against 15.9 for flat segments. Here a 64-byte line holds r + 1 <= 4
// segments as 128-bit lanes, and a key's block is lane j of two adjacent
// lines, x (from h1) and x + 1 (the last line wraps to the first): `half`
// distinct bits in line x's lane and `half` in line x + 1's. Blocks overlap
// (line x's lane serves the keys starting at x - 1 and at x), so a block's load
// averages three lines' Poisson counts instead of being one line's: at r = 3
// this reaches FPR 1% at 17.9 bits per item, with two adjacent lines read
// per query and written per insert, fetched together (measured against the
// one-line layout in docs/PERFORMANCE.md).
//
//   - a query reads lines x and x + 1 and tests both halves against every lane,
//   - an insert ORs the halves into the current segment's lanes,
//   - an epoch rotation clears one 128-bit lane in every line.
// Semantics are the guarded epoch filter's (Guarded Epoch Bloom Filters,
// Algorithm 1: r + 1 segments, epochs of ⌈W/r⌉; Lemma 1 and Prop. 1 hold
// unchanged). model_fpr() is Prop. 2 with each segment's FP computed for the
// overlapping blocks exactly (straddled_fpr below).
#pragma once

#include <cstddef>
#include <cstdint>

#include "agebloom/core/arena.hpp"
#include "agebloom/core/bits.hpp"
#include "agebloom/core/bloom_math.hpp"
#include "agebloom/core/error.hpp"
#include "agebloom/core/hash.hpp"
#include "agebloom/core/math.hpp"
#include "agebloom/core/window.hpp"
#include "agebloom/filters/bulk_ops.hpp"
#include "agebloom/filters/lane_lines.hpp"
#include "agebloom/filters/straddled_pattern.hpp"
#include "agebloom/filters/two_line_avx2.hpp"
#include "agebloom/filters/two_line_avx512.hpp"

namespace agebloom {

// TwoLineEpochConfig::for_fpr's named parameters, read at the call site:
//   TwoLineEpochConfig::for_fpr(window, fpr, {.r = 3})
struct TwoLineEpochSizing {
  uint32_t r = 3;         // live epochs (r + 1 <= 4 segments); 3: the fewest bits per item at 1%
  uint64_t capacity = 0;  // expected insertions per time window
};

namespace detail {
// C(n, r) for a 128-bit lane's n <= 128 bits and r <= 16 drawn, built once at
// compile time (straddled_fpr used to rebuild it in every call of a sizing
// search): the product c·(n − i)/(i + 1), exact while it fits 53 bits, and
// 0 where r > n.
struct LaneChoose {
  double c[129][17] = {};
};
inline constexpr LaneChoose kLaneChoose = [] {
  LaneChoose t;
  for (uint32_t n = 0; n <= 128; ++n)
    for (uint32_t r = 0; r <= 16; ++r) {
      double c = 1.0;
      for (uint32_t i = 0; i < r; ++i) c = c * (static_cast<double>(n) - i) / (i + 1);
      t.c[n][r] = c;
    }
  return t;
}();
}  // namespace detail

// The FP of one segment: lines of 128-bit lanes, `load` keys spread over
// `lines` starting lines, each key setting `half` distinct bits in its lane
// of line x and `half` in line x + 1. Line x's lane holds the bits of the
// N(x-1) + N(x) keys starting at x - 1 and x (N Poisson with mean
// λ = load / lines, independent), so
//   FP = Σ_b Pois(b) [Σ_a Pois(a) g(a + b)]²,
// b the keys starting at x (shared by both halves), a those at x - 1 (first
// half) or x + 1 (second half), and g(n) the probability that `half`
// distinct bits drawn at random are all set in a lane holding n keys. g is
// exact: the set-bit count after n keys is a Markov chain whose step adds a
// hypergeometric number of new bits. Tested against simulation
// (two_line_epoch_test).
constexpr double straddled_fpr(double lines, double load, uint32_t half) noexcept {
  if (load <= 0) return 0.0;
  if (!(lines > 0)) return 1.0;
  const double lambda = load / lines;
  // Past this load the lanes are nearly full (FP above 0.96 even for half = 1):
  // 1 is a safe overstatement, and it bounds the arrays below.
  constexpr double kMaxLambda = 256;
  if (!(lambda >= 0 && lambda <= kMaxLambda) || half == 0 || half > 16) return 1.0;
  constexpr uint32_t kBits = 128;
  // Poisson terms up to J (the mass past it is below 1e-20 for λ <= 256).
  double sigma = 1.0;
  while (sigma * sigma < lambda) sigma += 1.0;
  const uint32_t J = static_cast<uint32_t>(lambda + 12.0 * sigma + 16.0);
  constexpr uint32_t kMaxJ = 256 + 12 * 16 + 16;
  double pois[kMaxJ + 1] = {};
  pois[0] = math::exp(-lambda);
  for (uint32_t j = 1; j <= J; ++j) pois[j] = pois[j - 1] * lambda / j;
  // step[s][t]: the chance a key adds t new bits to a lane with s set.
  const auto& choose = detail::kLaneChoose.c;
  const double all = choose[kBits][half];
  double step[kBits + 1][17] = {};
  for (uint32_t s = 0; s <= kBits; ++s)
    for (uint32_t t = 0; t <= half; ++t) step[s][t] = choose[kBits - s][t] * choose[s][half - t] / all;
  // g[n] for n = 0 .. 2J, from the distribution of set bits.
  double cover[kBits + 1] = {};  // P(half drawn bits all set | s set)
  for (uint32_t s = half; s <= kBits; ++s) cover[s] = choose[s][half] / all;
  double g[2 * kMaxJ + 1] = {};
  double dist[kBits + 1] = {}, next[kBits + 1] = {};
  dist[0] = 1.0;
  for (uint32_t n = 0; n <= 2 * J; ++n) {
    double covered = 0.0;
    for (uint32_t s = half; s <= kBits; ++s) covered += dist[s] * cover[s];
    g[n] = covered;
    for (double& d : next) d = 0.0;
    for (uint32_t s = 0; s <= kBits; ++s)
      if (dist[s] > 1e-300)
        for (uint32_t t = 0; t <= half && s + t <= kBits; ++t) next[s + t] += dist[s] * step[s][t];
    for (uint32_t s = 0; s <= kBits; ++s) dist[s] = next[s];
  }
  double fp = 0.0;
  for (uint32_t b = 0; b <= J; ++b) {
    double side = 0.0;
    for (uint32_t a = 0; a <= J; ++a) side += pois[a] * g[a + b];
    fp += pois[b] * side * side;
  }
  return fp;
}

// The two-line guarded epoch's shape: what for_fpr() returns and
// TwoLineEpochFilter::create() builds.
struct TwoLineEpochConfig {
  static constexpr uint32_t kLanes = 4;       // 128-bit lanes per line: segments at most
  static constexpr uint32_t kLaneBits = 128;  // bits per lane

  Window window = Window::count(0);  // the window kept (count or time)
  uint32_t r = 3;         // live epochs; r + 1 <= 4 segments
  uint32_t half = 4;      // distinct bits per key in each of its two lines' lane (k = 2·half)
  uint64_t lines = 0;     // 64-byte lines (at least 2)
  uint64_t capacity = 0;  // expected insertions per window (time windows)
  uint64_t epoch_capacity = 0;  // time windows: an epoch also ends after this many insertions
                                // (--on-flood keep-fpr); 0 = time alone

  constexpr bool operator==(const TwoLineEpochConfig&) const = default;  // field by field
  constexpr uint32_t segments() const noexcept { return r + 1; }  // r + 1
  constexpr uint32_t k() const noexcept { return 2 * half; }  // bits per key per segment
  // Insertions (count) or ticks (time) per epoch: ℓ = ⌈span / r⌉.
  constexpr uint64_t epoch_length() const noexcept { return agebloom::epoch_length(window, r); }
  // Expected insertions one segment receives while current: items / r (or epoch_capacity).
  constexpr double epoch_load() const noexcept { return agebloom::epoch_load(window, r, capacity, epoch_capacity); }

  // The Errc of the first field out of range, or ok.
  constexpr Status validate() const noexcept {
    if (Status s = window.validate(); !s) return s;
    if (r == 0 || r >= kLanes) return Errc::segments_out_of_range;  // r + 1 segments (no wrap at r = 2^32 - 1)
    if (!window.is_time() && window.span < r) return Errc::window_smaller_than_segments;
    if (half == 0 || half > 16) return Errc::k_out_of_range;
    if (lines < 2) return Errc::budget_too_small;
    if (lines > kMaxStructureBits / 512) return Errc::too_large;
    return Errc::ok;
  }

  // Prop. 2 with each segment's FP for overlapping two-line blocks.
  constexpr double model_fpr() const noexcept {
    return math::any_of(straddled_fpr(static_cast<double>(lines), epoch_load(), half), segments());
  }
  // Bits of memory per window item (per expected insertion for time windows).
  constexpr double bits_per_item() const noexcept {
    const uint64_t n = capacity ? capacity : window.span;
    return static_cast<double>(lines) * 512 / static_cast<double>(n ? n : 1);
  }

  // Fewest lines (and the half for them) whose model FP is at most `fpr`.
  static constexpr Expected<TwoLineEpochConfig> for_fpr(Window window, double fpr,
                                                        TwoLineEpochSizing sizing = {}) noexcept {
    if (!(fpr > 0.0 && fpr < 1.0)) return Errc::fpr_out_of_range;
    TwoLineEpochConfig c;
    c.window = window;
    c.r = sizing.r;
    c.capacity = sizing.capacity ? sizing.capacity : (window.is_time() ? 0 : window.span);
    c.lines = 2;
    if (Status s = c.validate(); !s) return s;
    if (c.capacity == 0) return Errc::capacity_zero;
    // Lines with the best half for them: meets the target? The FP is
    // unimodal in half, and the best half moves little between the sizes the
    // search tries, so it climbs from the last one instead of trying all 16
    // (which made an unreachable target cost seconds).
    uint32_t last_half = 4;
    auto meets = [&](uint64_t lines) {
      if (lines < 2) return false;
      c.lines = lines;
      auto fp = [&](uint32_t half) {
        c.half = half;
        return c.model_fpr();
      };
      uint32_t half = last_half;
      double best = fp(half);
      for (int dir = 1; dir >= -1; dir -= 2) {
        for (int h = static_cast<int>(half) + dir; h >= 1 && h <= 16; h += dir) {
          const double p = fp(static_cast<uint32_t>(h));
          if (!(p < best)) break;
          best = p, half = static_cast<uint32_t>(h);
        }
      }
      c.half = last_half = half;
      return best <= fpr;
    };
    // From a flat filter's size for the per-segment target (a lower bound).
    const double start = bloom_math::bits_for(c.epoch_load(), math::root_complement(fpr, c.segments())) / kLaneBits;
    auto lines = fewest_lines(start < 2 ? 2 : start, meets);
    if (!lines) return lines.error();
    // The half for the size found, by every half (the climb's answer depends
    // on where it started; the scan's does not, and is at least as good).
    c.lines = *lines;
    double best = 2.0;
    uint32_t best_half = 1;
    for (uint32_t half = 1; half <= 16; ++half) {
      c.half = half;
      const double p = c.model_fpr();
      if (p < best) best = p, best_half = half;
    }
    c.half = best_half;
    if (!(best <= fpr)) return Errc::too_large;  // not reached: the climb's half met the target here
    return c;
  }
};

// The two-line guarded epoch filter over an arena: a handle; its lines live
// in the arena (64-bit words, two per 128-bit lane).
// Default bulk forms prefetch 8 keys ahead: 16 lines, as many as the
// line-per-segment filters keep in flight (bulk_ops.hpp).
class TwoLineEpochFilter : public BulkOps<TwoLineEpochFilter, 8> {
 public:
  constexpr TwoLineEpochFilter() noexcept = default;  // empty: create() one

  // The arena create() carves for c, from any 64-byte aligned base (c's error if invalid).
  static constexpr Expected<size_t> bytes_needed(const TwoLineEpochConfig& c) noexcept {
    if (Status s = c.validate(); !s) return s;
    return Lines::template bytes_with<State>(c.lines);
  }

  // Validates c, carves the filter's state from arena and clears it; on error
  // the arena is left as it was.
  static Expected<TwoLineEpochFilter> create(const TwoLineEpochConfig& c, Arena& arena) noexcept {
    if (Status s = c.validate(); !s) return s;
    auto carved = Lines::template carve_with<State>(arena, c.lines);
    if (!carved) return carved.error();
    TwoLineEpochFilter f;
    f.cfg_ = c;
    f.state_ = carved->header;
    f.lines_ = carved->lines;
    f.use_isa(Isa::avx512);
    f.state_->start(c.window.kind, c.epoch_length(), c.epoch_capacity);
    return f;
  }

  // Time windows: expires what ended by `now` (time_went_backwards, and no change,
  // if now is before the last now). Count windows: no-op. Call it before a burst.
  Status advance(uint64_t now) noexcept {
    return state_->schedule.advance(now, cfg_.segments(), [this] { rotate(); });
  }

  // Two adjacent lines read; lanes of unused segments (r + 1 < 4) stay zero
  // and cannot match a non-empty pattern.
  bool contains(KeyHash h) const noexcept {
    const auto pair = lines_.pair_of(h);
    return any_segment_covers(*pair.first, *pair.second, pattern(h));
  }

  // Records h as inserted now.
  void insert(KeyHash h) noexcept {
    if (state_->schedule.rotate_before_insert()) rotate();
    ++state_->insertions;
    const auto pair = lines_.pair_of(h);
    set(*pair.first, *pair.second, pattern(h), state_->current);
  }

  // contains(h) then insert(h), in one pass: the dedup primitive.
  bool test_and_insert(KeyHash h) noexcept {
    const StraddledPattern p = pattern(h);
    const auto pair = lines_.pair_of(h);
    const bool hit = any_segment_covers(*pair.first, *pair.second, p);
    if (state_->schedule.rotate_before_insert()) rotate();  // clears a lane, never this key's verdict
    ++state_->insertions;
    set(*pair.first, *pair.second, p, state_->current);
    return hit;
  }

  // The sequence of test_and_insert calls over h[0..n), in chunks of up to
  // kChunk keys: first both lines of every key are requested, then the keys
  // are probed in order with the epoch schedule consulted once per run that
  // fits in the current epoch. Same verdicts and state as the scalar calls.
  // A chunk of 64 (a benchmark burst whole, 3 KB of stack) against 32 cut
  // the AVX-512 body from ~11.7 to ~10.9 cycles per key at W = 1M and from
  // ~32 to ~27 at 64M: the second half's lines were no longer requested only
  // after the first half's probes (docs/PERFORMANCE.md).
  void test_and_insert_bulk(const KeyHash* h, size_t n, bool* out) noexcept {
    constexpr size_t kChunk = 64;
    typename Lines::Pair pair[kChunk];
#if AGEBLOOM_INTRINSICS_DISPATCH
    // The vector bodies' patterns, built for the chunk at once; on a line
    // boundary, so that the AVX-512 builder's 64-byte stores never straddle two.
    alignas(64) StraddledPattern pat[kChunk];
#endif
    for (size_t base = 0; base < n; base += kChunk) {
      const size_t m = n - base < kChunk ? n - base : kChunk;
      for (size_t i = 0; i < m; ++i) {
        const typename Lines::Pair lines = lines_.pair_of(h[base + i]);
        prefetch(lines);  // from registers: through pair[i] the compiler stored, then reloaded
        pair[i] = lines;
      }
#if AGEBLOOM_INTRINSICS_DISPATCH
      static_assert(kChunk <= two_line_avx512::kMaxBurst && kChunk <= two_line_avx2::kMaxBurst);
      if (isa_ == Isa::avx512) two_line_avx512::patterns(h + base, m, pat);
      else if (isa_ == Isa::avx2) two_line_avx2::patterns(h + base, m, pat);
#endif
      for_each_epoch_run(
          *state_, m, [&](size_t i) { out[base + i] = test_and_insert(h[base + i]); },
          [&](size_t i, size_t end, uint32_t current) {
#if AGEBLOOM_INTRINSICS_DISPATCH
            if (isa_ == Isa::avx512)
              return two_line_avx512::test_and_insert_run(pat + i, pair + i, end - i, current, out + base + i);
            if (isa_ == Isa::avx2)
              return two_line_avx2::test_and_insert_run(pat + i, pair + i, end - i, current, out + base + i);
#endif
            for (; i < end; ++i) {
              const StraddledPattern p = pattern(h[base + i]);
              out[base + i] = any_segment_covers(*pair[i].first, *pair[i].second, p);
              set(*pair[i].first, *pair[i].second, p, current);
            }
          });
    }
  }

  // Prefetches both lines h will touch (the bulk forms call it ahead).
  void prefetch(KeyHash h) const noexcept { prefetch(lines_.pair_of(h)); }

  // Which body test_and_insert_bulk runs: for half = 4, the widest of the
  // AVX-512 probe (two_line_avx512.hpp) and the AVX2 probe
  // (two_line_avx2.hpp) that the CPU has and `widest` allows, else the
  // baseline. create() allows them all. Every body gives the same verdicts
  // and state (tested); this switch exists for that test and for benchmarks.
  void use_isa(Isa widest) noexcept {
    isa_ = Isa::baseline;
#if AGEBLOOM_INTRINSICS_DISPATCH
    if (cfg_.half != 4) return;
    if (widest >= Isa::avx512 && cpu_has_avx512()) isa_ = Isa::avx512;
    else if (widest >= Isa::avx2 && cpu_has_avx2()) isa_ = Isa::avx2;
#else
    (void)widest;
#endif
  }
  Isa isa() const noexcept { return isa_; }  // the body test_and_insert_bulk runs

  // Whether `image`, a saved copy of this filter's arena, holds a state this
  // filter can be in: dedup/snapshot.hpp asks before a load, since a crafted
  // image passes its checksum. Any bits will do; the header must keep this
  // filter's epoch schedule and name one of its segments.
  bool accepts_image(const ArenaImage& image) const noexcept {
    return state_->accepts_image(image, cfg_.segments());
  }
  const TwoLineEpochConfig& config() const noexcept { return cfg_; }  // the configuration it was created with
  uint64_t insertions() const noexcept { return state_->insertions; }  // insertions so far
  // The epoch clock: when the current epoch began and how full it is (flood watch).
  const EpochSchedule& epoch_schedule() const noexcept { return state_->schedule; }
  uint32_t current_segment() const noexcept { return state_->current; }  // the segment taking insertions
  // Set bits over all of them (control plane: reads the whole filter).
  double fill_ratio() const noexcept { return lines_.fill_ratio(); }

 private:
  using Lines = LaneLines<uint64_t>;  // lane j of this layout is words 2j and 2j + 1
  using Line = Lines::Line;
  using State = EpochRingHeader;  // core/window.hpp; `current`: the segment being filled

  static void prefetch(const typename Lines::Pair& pair) noexcept {  // both lines, to write
    bits::prefetch_write(pair.first);
    bits::prefetch_write(pair.second);
  }

  StraddledPattern pattern(KeyHash h) const noexcept {
    return cfg_.half == 4 ? straddled_pattern4(h.h1, h.h2) : straddled_pattern_cold(h.h1, h.h2, cfg_.half);
  }

  // Does some segment hold both halves? Per lane, a & ~x and b & ~y (the
  // pattern's bits the lane lacks) are zero exactly when covered: 16-byte
  // operations, the four lanes' verdicts folded into one test.
  static bool any_segment_covers(const Line& x, const Line& y, const StraddledPattern& p) noexcept {
#if defined(__GNUC__) && !defined(__CUDACC__)
    using Vec = detail::U64x2;
    Vec a, b, miss[TwoLineEpochConfig::kLanes];
    __builtin_memcpy(&a, p.first, sizeof a);
    __builtin_memcpy(&b, p.second, sizeof b);
    for (uint32_t j = 0; j < TwoLineEpochConfig::kLanes; ++j) {
      Vec xa, yb;
      __builtin_memcpy(&xa, &x.lane[2 * j], sizeof xa);
      __builtin_memcpy(&yb, &y.lane[2 * j], sizeof yb);
      miss[j] = (a & ~xa) | (b & ~yb);  // the pattern's bits the lane lacks: two pandn
    }
    // {lane 0's miss, lane 1's miss} and {lane 2's, lane 3's}, each word the OR of its lane's two
    const Vec m01 = __builtin_shufflevector(miss[0], miss[1], 0, 2) | __builtin_shufflevector(miss[0], miss[1], 1, 3);
    const Vec m23 = __builtin_shufflevector(miss[2], miss[3], 0, 2) | __builtin_shufflevector(miss[2], miss[3], 1, 3);
    const Vec covered = (Vec)(m01 == 0) | (Vec)(m23 == 0);
    return (covered[0] | covered[1]) != 0;
#else
    bool hit = false;
    for (uint32_t j = 0; j < TwoLineEpochConfig::kLanes; ++j) {
      const uint64_t miss = ((x.lane[2 * j] & p.first[0]) ^ p.first[0]) | ((x.lane[2 * j + 1] & p.first[1]) ^ p.first[1]) |
                            ((y.lane[2 * j] & p.second[0]) ^ p.second[0]) |
                            ((y.lane[2 * j + 1] & p.second[1]) ^ p.second[1]);
      hit |= miss == 0;
    }
    return hit;
#endif
  }

  static void set(Line& x, Line& y, const StraddledPattern& p, uint32_t segment) noexcept {
#if defined(__GNUC__) && !defined(__CUDACC__)
    using Vec = detail::U64x2;
    Vec a, b, xa, yb;
    __builtin_memcpy(&a, p.first, sizeof a);
    __builtin_memcpy(&b, p.second, sizeof b);
    __builtin_memcpy(&xa, &x.lane[2 * segment], sizeof xa);
    __builtin_memcpy(&yb, &y.lane[2 * segment], sizeof yb);
    xa |= a, yb |= b;
    __builtin_memcpy(&x.lane[2 * segment], &xa, sizeof xa);
    __builtin_memcpy(&y.lane[2 * segment], &yb, sizeof yb);
#else
    x.lane[2 * segment] |= p.first[0];
    x.lane[2 * segment + 1] |= p.first[1];
    y.lane[2 * segment] |= p.second[0];
    y.lane[2 * segment + 1] |= p.second[1];
#endif
  }

  void rotate() noexcept {
    state_->current = (state_->current + 1) % cfg_.segments();
    lines_.clear_lane(2 * state_->current, 2);
  }

  TwoLineEpochConfig cfg_{};
  State* state_ = nullptr;
  Lines lines_{};
  Isa isa_ = Isa::baseline;  // the body test_and_insert_bulk runs
};

}  // namespace agebloom
