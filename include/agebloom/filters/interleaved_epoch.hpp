// Guarded epoch filter in the interleaved, one-cache-line layout.
//
// The paper layouts keep each segment in its own array, so a query touches
// one line per segment. Here the segments' words for one line index are
// interleaved into one 64-byte line (8 lanes of 64 bits, 16 of 32, or 4 of
// 128: the registry's "interleaved" and "interleaved-128"): lane j
// of line x is segment j's block x, the "vertical layout" DPDK's vBF uses for
// its sets. A key picks one line (from h1) and a pattern inside a lane (from
// h2): the lane is partitioned into k parts with one bit in each (Age-Partitioned Bloom Filters,
// §6), so k is a power of two; then
//   - a query reads one line and tests the pattern against every lane,
//   - an insert ORs the pattern into the current segment's lane,
//   - an epoch rotation clears one lane in every line.
// Semantics are the guarded epoch filter's (Guarded Epoch Bloom Filters, Algorithm 1: r+1
// segments, epochs of ⌈W/r⌉, Lemma 1 and Prop. 1 hold unchanged), so the
// invariant tests are the same. The price is FPR: each segment is a blocked
// Bloom filter with B = lane bits, which is Table 3 of Age-Partitioned Bloom Filters, B = 64 row
// generalised; model_fpr() uses that blocked FP in Prop. 2.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "agebloom/core/arena.hpp"
#include "agebloom/core/bits.hpp"
#include "agebloom/core/bloom_math.hpp"
#include "agebloom/core/error.hpp"
#include "agebloom/core/hash.hpp"
#include "agebloom/core/math.hpp"
#include "agebloom/core/window.hpp"
#include "agebloom/filters/bulk_ops.hpp"
#include "agebloom/filters/interleaved_avx2.hpp"
#include "agebloom/filters/lane_lines.hpp"

namespace agebloom {

// InterleavedEpochConfig::for_fpr's named parameters, read at the call site:
//   InterleavedEpochConfig::for_fpr(window, fpr, {.lane_bits = ...})
// (every structure's own, so a knob of one cannot be passed to another).
struct InterleavedEpochSizing {
  uint32_t lane_bits = 64;  // 64: 8 segments per line, 32: 16, 128: 4
  uint32_t r = 0;  // live epochs; 0: every lane (lanes - 1)
  uint64_t capacity = 0;  // expected insertions per time window
};

// The one-line guarded epoch's shape: what for_fpr() returns and
// InterleavedEpochFilter::create() builds.
struct InterleavedEpochConfig {
  Window window = Window::count(0);  // the window kept (count or time)
  uint32_t r = 7;          // live epochs; r + 1 segments, at most lanes()
  uint32_t k = 0;          // bits per key inside its lane: one per part, a power of two
  uint64_t lines = 0;      // 64-byte lines
  uint32_t lane_bits = 64; // 64 (8 lanes per line), 32 (16 lanes) or 128 (4 lanes)
  uint64_t capacity = 0;   // expected insertions per window (time windows)
  uint64_t epoch_capacity = 0;  // time windows: an epoch also ends after this many insertions
                                // (--on-flood keep-fpr: a flood shortens the window, not the FPR);
                                // 0 = time alone

  constexpr uint32_t segments() const noexcept { return r + 1; }  // r + 1
  constexpr bool operator==(const InterleavedEpochConfig&) const = default;  // field by field
  constexpr uint32_t lanes() const noexcept { return lane_bits ? 512 / lane_bits : 0; }  // lanes per 512-bit line
  // Insertions (count) or ticks (time) per epoch: ℓ = ⌈span / r⌉.
  constexpr uint64_t epoch_length() const noexcept { return agebloom::epoch_length(window, r); }
  // Expected insertions one lane receives while current: items / r (or epoch_capacity).
  constexpr double epoch_load() const noexcept { return agebloom::epoch_load(window, r, capacity, epoch_capacity); }

  // The Errc of the first field out of range, or ok.
  constexpr Status validate() const noexcept {
    if (Status s = window.validate(); !s) return s;
    if (lane_bits != 64 && lane_bits != 32 && lane_bits != 128) return Errc::block_size_invalid;
    if (r == 0 || r >= lanes()) return Errc::segments_out_of_range;  // r + 1 segments (no wrap at r = 2^32 - 1)
    if (!window.is_time() && window.span < r) return Errc::window_smaller_than_segments;
    if (!is_pow2(k) || k > lane_bits / 2 || k * log2_part_bits() > 64) return Errc::k_out_of_range;
    if (lines == 0) return Errc::budget_too_small;
    if (lines > kMaxStructureBits / 512) return Errc::too_large;
    return Errc::ok;
  }

  // Where a key's bits go (core/placement.hpp; 64-bit lanes): the CPU
  // filter and the GPU replay both take them from here.
  constexpr placement::Lanes placement() const noexcept { return {lines, k}; }

  // log2 of the bits per part of a lane (lane_bits / k): the width of each
  // part's offset field of h2.
  constexpr uint32_t log2_part_bits() const noexcept {
    return k && lane_bits ? static_cast<uint32_t>(__builtin_ctz(lane_bits / k)) : 0;
  }

  // Prop. 2 with each segment a blocked Bloom filter of `lines` blocks of
  // lane_bits bits (its lane in every line), each partitioned into k parts.
  constexpr double model_fpr() const noexcept {
    const double seg =
        bloom_math::partitioned_block_fpr(static_cast<double>(lines) * lane_bits, epoch_load(), lane_bits, k);
    return math::any_of(seg, segments());
  }
  // Bits of memory per window item (per expected insertion for time windows).
  constexpr double bits_per_item() const noexcept {
    const uint64_t n = capacity ? capacity : window.span;
    return static_cast<double>(lines) * 512 / static_cast<double>(n ? n : 1);
  }

  // Fewest lines (and the k for them) whose model FP is at most `fpr`, for
  // r + 1 = lanes segments by default (all lanes used, the shortest epochs).
  static constexpr Expected<InterleavedEpochConfig> for_fpr(Window window, double fpr, InterleavedEpochSizing sizing = {}) noexcept {
    const uint32_t lane_bits = sizing.lane_bits;
    const uint32_t r = sizing.r;
    const uint64_t capacity = sizing.capacity;
    if (!(fpr > 0.0 && fpr < 1.0)) return Errc::fpr_out_of_range;
    InterleavedEpochConfig c;
    c.window = window;
    c.lane_bits = lane_bits;
    c.r = r ? r : (lane_bits ? 512 / lane_bits - 1 : 0);
    c.capacity = capacity ? capacity : (window.is_time() ? 0 : window.span);
    c.k = 1;
    c.lines = 1;
    if (Status s = c.validate(); !s) return s;
    if (c.capacity == 0) return Errc::capacity_zero;
    // Lines of the best k for them (a power of two): meets the target?
    auto meets = [&](uint64_t lines) {
      c.lines = lines;
      uint32_t best_k = 1;
      double best = 2.0;
      for (uint32_t k = 1; k <= lane_bits / 2 && k * static_cast<uint32_t>(__builtin_ctz(lane_bits / k)) <= 64;
           k *= 2) {
        c.k = k;
        const double p = c.model_fpr();
        if (p < best) best = p, best_k = k;
      }
      c.k = best_k;
      return best <= fpr;
    };
    // From a flat filter's size for the per-segment target (a lower bound).
    auto lines = fewest_lines(bloom_math::bits_for(c.epoch_load(), math::root_complement(fpr, c.segments())) / lane_bits, meets);
    if (!lines) return lines.error();
    meets(*lines);
    return c;
  }
};

// The wide one-line layout's shape (the registry's "interleaved-128"): four
// segments as 128-bit lanes, r = 3. The blocks are twice as wide as the
// 64-bit lanes', so the busy lines' excess load costs less FPR: 21.0 bits per
// item at FPR 1% against 27.2 (docs/ALGORITHMS.md, "One-cache-line layouts").
// The same fields as InterleavedEpochConfig; its own type so that the
// registry maps it to its own filter, InterleavedEpochFilter<bits::Word128>.
struct Interleaved128Config : InterleavedEpochConfig {
  constexpr Interleaved128Config() noexcept : InterleavedEpochConfig{.r = 3, .lane_bits = 128} {}  // no lines yet
  // c as this type (c.lane_bits should be 128: the filter's create() checks).
  constexpr explicit Interleaved128Config(const InterleavedEpochConfig& c) noexcept : InterleavedEpochConfig(c) {}

  // InterleavedEpochConfig::for_fpr with 128-bit lanes (r = 0: all four).
  static constexpr Expected<Interleaved128Config> for_fpr(Window window, double fpr, uint32_t r = 0,
                                                         uint64_t capacity = 0) noexcept {
    auto c = InterleavedEpochConfig::for_fpr(window, fpr, {.lane_bits = 128, .r = r, .capacity = capacity});
    if (!c) return c.error();
    return Interleaved128Config(*c);
  }
};

// The one-line layout without a rotation stall (the registry's
// "interleaved-swept"): 64-bit lanes, r = 6 live epochs, so r + 1 = 7 lanes
// are live and the eighth is a spare. An epoch rotation of the plain layout
// clears a whole lane at once, a store into every line of the filter, inside
// the one burst in which the epoch ends (8 ms at W = 2^26 on the machine of
// docs/PERFORMANCE.md, "Rotation stalls": frames lost at the NIC). Here the
// lane that expires becomes the spare: queries ignore it, and it is cleared a
// few lines per burst, in step with the epoch's insertions (or its time), so
// that it is clear when the next epoch takes it. Same verdicts as the plain
// layout with the same r (tested); 30.6 bits per item at FPR 1% against
// r = 7's 27.2, the price of the eighth lane.
struct InterleavedSweptConfig : InterleavedEpochConfig {
  constexpr InterleavedSweptConfig() noexcept : InterleavedEpochConfig{.r = 6} {}  // no lines yet
  // c as this type (c.r + 2 <= c.lanes(): validate() checks).
  constexpr explicit InterleavedSweptConfig(const InterleavedEpochConfig& c) noexcept : InterleavedEpochConfig(c) {}

  // The lanes the current one cycles through: the r + 1 live ones and the spare.
  constexpr uint32_t ring() const noexcept { return r + 2; }

  // InterleavedEpochConfig's, and a lane besides the r + 1 live ones for the sweep.
  constexpr Status validate() const noexcept {
    if (Status s = InterleavedEpochConfig::validate(); !s) return s;
    if (lane_bits != 64) return Errc::block_size_invalid;
    if (ring() > lanes()) return Errc::segments_out_of_range;
    return Errc::ok;
  }

  // InterleavedEpochConfig::for_fpr with 64-bit lanes and r = 6 (r = 0: 6).
  static constexpr Expected<InterleavedSweptConfig> for_fpr(Window window, double fpr, uint32_t r = 0,
                                                           uint64_t capacity = 0) noexcept {
    auto c = InterleavedEpochConfig::for_fpr(window, fpr, {.lane_bits = 64, .r = r ? r : 6, .capacity = capacity});
    if (!c) return c.error();
    const InterleavedSweptConfig swept(*c);
    if (Status s = swept.validate(); !s) return s;
    return swept;
  }
};

// The swept layout's header: the ring's, and how far the spare lane's sweep
// has come in this epoch.
struct SweptRingHeader : EpochRingHeader {
  uint64_t swept;             // lines of the spare lane cleared so far this epoch
  uint64_t epoch_insertions;  // `insertions` when this epoch began
};

// The sweep's pace: the spare lane's lines due after a share of the epoch.
// The filter sweeps to `after_insertions` after each insertion (a bulk
// call: after each chunk) and, in time windows, to `after_ticks` at each
// advance(), never back; both grow within an epoch, so the lines swept at
// any point are the larger of the two at the last insertion and the last
// advance. The GPU replay restores the header from that (gpu/portable/epoch_plan.hpp).
struct SweptPace {
  uint64_t lines = 0;          // of the filter: a lane's lines
  double per_insertion = 0.0;  // spare lines due per insertion into the epoch
  double per_tick = 0.0;       // time windows: spare lines due per tick of the epoch

  // All of the lane over the insertions an epoch expects (a count window's ℓ;
  // a time window's epoch load), and over a time window's epoch length.
  static constexpr SweptPace of(const InterleavedSweptConfig& c) noexcept {
    const double per_epoch = c.window.is_time() ? c.epoch_load() : static_cast<double>(c.epoch_length());
    SweptPace p;
    p.lines = c.lines;
    p.per_insertion = static_cast<double>(c.lines) / (per_epoch >= 1.0 ? per_epoch : 1.0);
    p.per_tick = c.window.is_time() ? static_cast<double>(c.lines) / static_cast<double>(c.epoch_length()) : 0.0;
    return p;
  }
  // The lines due after `share` lines' worth of the epoch: rounded up, at most all.
  constexpr uint64_t due(double share) const noexcept {
    return share >= static_cast<double>(lines) ? lines : static_cast<uint64_t>(share) + 1;
  }
  // The lines due after `in_epoch` insertions into the epoch.
  constexpr uint64_t after_insertions(uint64_t in_epoch) const noexcept {
    return due(static_cast<double>(in_epoch) * per_insertion);
  }
  // The lines due `in_epoch` ticks into a time window's epoch.
  constexpr uint64_t after_ticks(uint64_t in_epoch) const noexcept {
    return due(static_cast<double>(in_epoch) * per_tick);
  }
  // What the filter has swept by now in the epoch of h: the larger of the two
  // (a part the epoch has not seen yet counts 0: nothing inserted since it
  // began, or a time window never advanced).
  constexpr uint64_t swept(const SweptRingHeader& h) const noexcept {
    const uint64_t by_count = h.insertions > h.epoch_insertions ? after_insertions(h.insertions - h.epoch_insertions) : 0;
    const EpochSchedule& e = h.schedule;
    const uint64_t by_time = e.kind == WindowKind::time && e.started ? after_ticks(e.last_now - e.epoch_start) : 0;
    return by_count > by_time ? by_count : by_time;
  }
};

// The one-line guarded epoch filter over an arena, with Lane-wide lanes
// (the registry's "interleaved" is Lane = uint64_t, "interleaved-128" Lane =
// bits::Word128, "interleaved-swept" Lane = uint64_t with kSwept): a handle;
// its lines live in the arena. kSwept: a spare lane swept ahead of each
// rotation (InterleavedSweptConfig), where the plain layout clears a lane at once.
template <class Lane = uint64_t, bool kSwept = false>
class InterleavedEpochFilter : public BulkOps<InterleavedEpochFilter<Lane, kSwept>, 16> {
  static_assert(sizeof(Lane) == 16 || sizeof(Lane) == 8 || sizeof(Lane) == 4, "lanes of 128, 64 or 32 bits");
  static_assert(!kSwept || sizeof(Lane) == 8, "the swept layout has 64-bit lanes");
  static constexpr bool kWide = sizeof(Lane) == 16;  // 128-bit lanes: two words each

 public:
  static constexpr uint32_t kLaneBits = sizeof(Lane) * 8;  // bits per lane
  static constexpr uint32_t kLanes = 512 / kLaneBits;  // lanes per line

  constexpr InterleavedEpochFilter() noexcept = default;  // empty: create() one

  // The configuration this filter is built from.
  using Config = std::conditional_t<kSwept, InterleavedSweptConfig, InterleavedEpochConfig>;

  // The arena create() carves for c, from any 64-byte aligned base (c's error if invalid).
  static constexpr Expected<size_t> bytes_needed(const Config& c) noexcept {
    if (Status s = check(c); !s) return s;
    return Lines::template bytes_with<State>(c.lines);
  }

  // Validates c, carves the filter's state from arena and clears it; on error
  // the arena is left as it was.
  static Expected<InterleavedEpochFilter> create(const Config& c, Arena& arena) noexcept {
    if (Status s = check(c); !s) return s;
    auto carved = Lines::template carve_with<State>(arena, c.lines);
    if (!carved) return carved.error();
    InterleavedEpochFilter f;
    f.cfg_ = c;
    f.state_ = carved->header;
    f.lines_ = carved->lines;
    f.log2_part_ = c.log2_part_bits();
    f.use_isa(Isa::avx512);
    f.state_->start(c.window.kind, c.epoch_length(), c.epoch_capacity);
    if constexpr (kSwept) {
      f.state_->swept = 0;
      f.state_->epoch_insertions = 0;
      f.pace_ = SweptPace::of(c);
    }
    return f;
  }

  // Time windows: expires what ended by `now` (time_went_backwards, and no change,
  // if now is before the last now). Count windows: no-op. Call it before a burst.
  // The swept layout also clears the spare lane's lines that the time gone
  // in this epoch has made due.
  Status advance(uint64_t now) noexcept {
    const Status s = state_->schedule.advance(now, cfg_.segments(), [this] { rotate(); });
    if constexpr (kSwept)
      if (s && cfg_.window.is_time()) {
        const EpochSchedule& e = state_->schedule;
        sweep_to(pace_.after_ticks(e.last_now - e.epoch_start));
      }
    return s;
  }

  // One line read; lanes of unused segments (r + 1 < lanes) stay zero and
  // cannot match a non-empty pattern; the swept layout's spare lane is not read.
  bool contains(KeyHash h) const noexcept {
    return covers(lines_.of(h), pattern(h));
  }

  // Records h as inserted now.
  void insert(KeyHash h) noexcept {
    if (state_->schedule.rotate_before_insert()) rotate();
    ++state_->insertions;
    lines_.of(h).lane[state_->current] |= pattern(h);
    sweep_for_insertions();
  }

  // contains(h) then insert(h), in one pass: the dedup primitive.
  bool test_and_insert(KeyHash h) noexcept {
    const Lane mask = pattern(h);
    Line& line = lines_.of(h);
    const bool hit = covers(line, mask);
    if (state_->schedule.rotate_before_insert()) rotate();  // clears a lane, never this key's verdict
    ++state_->insertions;
    line.lane[state_->current] |= mask;
    sweep_for_insertions();
    return hit;
  }

  // The sequence of test_and_insert calls over h[0..n), in chunks of up to
  // kChunk keys: first every key's line is located and requested, then the
  // keys are probed in order with the epoch schedule consulted once per run
  // that fits in the current epoch (not once per key) and the current lane
  // held in a register. Same verdicts and state as the scalar calls. For
  // 64-bit lanes the pattern's part count is made a constant here, once per
  // call, so the probe loop builds it without a switch. Chunks of 64 (a
  // benchmark burst whole) against 32: ~33 to ~29 cycles per key at W = 64M,
  // the second half's lines requested before the first half's probes.
  void test_and_insert_bulk(const KeyHash* h, size_t n, bool* out) noexcept {
    with_parts([&]<uint32_t B>() { bulk_test_and_insert<B>(h, nullptr, n, out); });
  }

  // Prefetches the lines h will touch first (the bulk forms call it ahead).
  void prefetch(KeyHash h) const noexcept { lines_.prefetch(h); }

  // The line h lives in, for a caller that locates a burst's keys once: it
  // requests them when the hashes are known and hands them back to
  // test_and_insert_bulk_at, where test_and_insert_bulk would locate and
  // request each again (DedupFilter's burst in flight). Lines never move
  // after create(), so a pointer stays right across rotations.
  using Line = typename LaneLines<Lane>::Line;
  Line* line_of(KeyHash h) const noexcept { return &lines_.of(h); }  // h's line (what prefetch requests)
  // line_of(h[i]) to at[i] for i < n, each line requested (for writing, at
  // L2's locality): a burst's lines located and asked for at once, eight keys
  // at a time with AVX-512 when use_isa allows it.
  void locate_burst(const KeyHash* h, size_t n, void** at) const noexcept {
    lines_.locate_burst(h, n, at, locate_avx512_);
  }
  // test_and_insert_bulk for keys whose lines are known: line[i] ==
  // line_of(h[i]). Same verdicts and state.
  void test_and_insert_bulk_at(const KeyHash* h, Line* const* line, size_t n, bool* out) noexcept {
    with_parts([&]<uint32_t B>() { bulk_test_and_insert<B>(h, line, n, out); });
  }

  // Which body test_and_insert_bulk runs: for 64- and 128-bit lanes with k = 8, the
  // AVX2 probe (interleaved_avx2.hpp) when the CPU has it and `widest`
  // allows it, else the baseline; and whether locate_burst takes eight keys
  // at a time (AVX-512, when the CPU has it and `widest` allows it).
  // create() allows both. Every body gives the same verdicts, state and
  // lines (tested); this switch exists for those tests and for benchmarks.
  void use_isa(Isa widest) noexcept {
    isa_ = Isa::baseline;
    locate_avx512_ = widest >= Isa::avx512 && cpu_has_avx512();
#if AGEBLOOM_INTRINSICS_DISPATCH
    if ((std::is_same_v<Lane, uint64_t> || kWide) && cfg_.k == 8 && widest >= Isa::avx2 && cpu_has_avx2())
      isa_ = Isa::avx2;
#else
    (void)widest;
#endif
  }
  Isa isa() const noexcept { return isa_; }  // the body test_and_insert_bulk runs

  // Whether `image`, a saved copy of this filter's arena, holds a state this
  // filter can be in: dedup/snapshot.hpp asks before a load, since a crafted
  // image passes its checksum. Any bits will do; the header must keep this
  // filter's epoch schedule and name one of its lanes (the swept layout: of
  // its ring, having swept no more than a lane's lines, in an epoch that
  // began at or before its latest insertion).
  bool accepts_image(const ArenaImage& image) const noexcept {
    if constexpr (kSwept) {
      State saved;
      return image.read(state_, saved) && state_->accepts(saved, cfg_.ring()) && saved.swept <= cfg_.lines &&
             saved.epoch_insertions <= saved.insertions;
    } else {
      return state_->accepts_image(image, cfg_.segments());
    }
  }
  const Config& config() const noexcept { return cfg_; }  // the configuration it was created with
  uint64_t insertions() const noexcept { return state_->insertions; }  // insertions so far
  // The epoch clock: when the current epoch began and how full it is (flood watch).
  const EpochSchedule& epoch_schedule() const noexcept { return state_->schedule; }
  uint32_t current_segment() const noexcept { return state_->current; }  // the segment taking insertions
  // The swept layout: the lane no query reads, being cleared for the next
  // epoch, and how many of its lines are clear so far.
  uint32_t spare_lane() const noexcept requires kSwept { return spare_of(state_->current); }
  uint64_t spare_lines_swept() const noexcept requires kSwept { return state_->swept; }
  // Set bits (non-zero cells) over all of them (control plane: reads the whole filter).
  double fill_ratio() const noexcept { return lines_.fill_ratio(); }

 private:
  using Lines = LaneLines<Lane>;
  // core/window.hpp; `current`: the segment being filled (and the sweep's progress)
  using State = std::conditional_t<kSwept, SweptRingHeader, EpochRingHeader>;

  static constexpr Status check(const Config& c) noexcept {
    if (Status s = c.validate(); !s) return s;
    if (c.lane_bits != kLaneBits) return Errc::block_size_invalid;
    return Errc::ok;
  }

  // The swept layout's ring: r + 1 live lanes and the spare after the current one.
  // Without kSwept: kLanes, a lane no query masks.
  uint32_t spare_of(uint32_t current) const noexcept {
    if constexpr (kSwept) return current + 1 == cfg_.ring() ? 0 : current + 1;
    else return kLanes;
  }

  // Does a lane that queries read hold every bit of mask?
  bool covers(const Line& line, Lane mask) const noexcept {
    if constexpr (kSwept) return Lines::any_lane_covers_but(line, mask, spare_of(state_->current));
    else return Lines::any_lane_covers(line, mask);
  }

  // Clears the spare lane's lines up to `target` (the sweep never goes back).
  void sweep_to(uint64_t target) noexcept {
    if (target <= state_->swept) return;
    lines_.clear_lane_lines(spare_of(state_->current), state_->swept, target);
    state_->swept = target;
  }
  // The sweep in step with the epoch's insertions.
  void sweep_for_insertions() noexcept {
    if constexpr (kSwept)
      sweep_to(pace_.after_insertions(state_->insertions - state_->epoch_insertions));
  }

  // k bits of one lane, drawn from h2 (independent of the line from h1).
  // 64-bit lanes take the unrolled form; a 32-bit lane is the low half of
  // the pattern of a 64-bit word with twice the parts, so it is built as the
  // general partitioned pattern.
  Lane pattern(KeyHash h) const noexcept {
    if constexpr (sizeof(Lane) == 8) {
      return cfg_.placement().word(h);
    } else if constexpr (kWide) {
      return bits::word128_pattern(h.h2, cfg_.k);
    } else {
      bits::Pattern<1> p;
      bits::partitioned_pattern(h.h2, cfg_.k, log2_part_, p);
      return static_cast<Lane>(p.mask[0]);
    }
  }

  // B != 0: the pattern of B parts in a 64- or 128-bit lane, B fixed at compile time.
  template <uint32_t B>
  Lane pattern_of(KeyHash h) const noexcept {
    if constexpr (B != 0 && kWide) return bits::word128_pattern<B>(h.h2);
    else if constexpr (B != 0) return bits::word_pattern<B>(h.h2);
    else return pattern(h);
  }

  // body.template operator()<B>() with B the pattern's part count as a
  // constant where the bulk probe has a body for it, else B = 0 (built at run time).
  template <class Body>
  void with_parts(Body&& body) noexcept {
    if constexpr (sizeof(Lane) == 8) {
      switch (cfg_.k) {
        case 4: return body.template operator()<4>();
        case 8: return body.template operator()<8>();
        case 16: return body.template operator()<16>();
        default: break;
      }
    } else if constexpr (kWide) {
      if (cfg_.k == 8) return body.template operator()<8>();
    }
    body.template operator()<0>();
  }

  // at == nullptr: the lines are located and requested here, a chunk ahead
  // of its probes; else at[i] is h[i]'s line, requested by the caller.
  template <uint32_t B>
  void bulk_test_and_insert(const KeyHash* h, Line* const* at, size_t n, bool* out) noexcept {
    constexpr size_t kChunk = 64;
    Line* located[kChunk];
    for (size_t base = 0; base < n; base += kChunk) {
      const size_t m = n - base < kChunk ? n - base : kChunk;
      Line* const* line = at ? at + base : located;
      if (!at)
        for (size_t i = 0; i < m; ++i) {
          located[i] = &lines_.of(h[base + i]);
          bits::prefetch_write(located[i]);
        }
      for_each_epoch_run(
          *state_, m, [&](size_t i) { out[base + i] = test_and_insert(h[base + i]); },
          [&](size_t i, size_t end, uint32_t current) {
            // The swept layout's spare lane, which no query reads (plain: none).
            [[maybe_unused]] const uint32_t spare = spare_of(current);
#if AGEBLOOM_INTRINSICS_DISPATCH
            if constexpr (B == 8 && std::is_same_v<Lane, uint64_t>)
              if (isa_ == Isa::avx2)
                return interleaved_avx2::test_and_insert_run8<kSwept>(h + base + i, line + i, end - i, current, spare,
                                                                      out + base + i);
            if constexpr (B == 8 && kWide)
              if (isa_ == Isa::avx2)
                return interleaved_avx2::test_and_insert_run128(h + base + i, line + i, end - i, current, out + base + i);
#endif
            for (; i < end; ++i) {
              const Lane mask = pattern_of<B>(h[base + i]);
              if constexpr (kSwept) out[base + i] = Lines::any_lane_covers_but(*line[i], mask, spare);
              else out[base + i] = Lines::any_lane_covers(*line[i], mask);
              line[i]->lane[current] |= mask;
            }
          });
      sweep_for_insertions();  // the swept layout: the chunk's share of the spare lane
    }
  }

  // The plain layout clears the next segment's lane in every line here, at
  // once. The swept layout finishes its spare lane (nothing left when the
  // epoch's insertions or time kept pace), takes it as the new current lane,
  // and makes the oldest live lane the spare: it expires now, as the cleared
  // segment does in the plain layout.
  void rotate() noexcept {
    if constexpr (kSwept) {
      sweep_to(cfg_.lines);
      state_->current = spare_of(state_->current);
      state_->swept = 0;
      state_->epoch_insertions = state_->insertions;
    } else {
      state_->current = (state_->current + 1) % cfg_.segments();
      lines_.clear_lane(state_->current);
    }
  }

  Config cfg_{};
  SweptPace pace_{};  // kSwept: how fast the spare lane is swept
  State* state_ = nullptr;
  Lines lines_{};
  uint32_t log2_part_ = 0;
  Isa isa_ = Isa::baseline;  // the body test_and_insert_bulk runs
  bool locate_avx512_ = false;  // locate_burst eight keys at a time (use_isa)
};

}  // namespace agebloom
