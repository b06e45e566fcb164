// Guarded epoch Bloom filter (Alpay & Sarıoğlu, "Guarded Epoch Bloom Filters for Sliding-Window Membership", arXiv 2606.19210).
//
// r+1 segments of s bits; the window W is cut into r epochs of ℓ = ⌈W/r⌉
// insertions (or ⌈T/r⌉ ticks for a time window T). Insertions go to the
// current segment; when an epoch ends, the next segment in cyclic order is
// cleared and becomes current. The extra (guard) segment is what makes the
// live-window invariant exact:
//   - Lemma 1: every key of the last W insertions is in an uncleared segment
//     (retained history >= rℓ >= W), so live false negatives are impossible;
//   - Prop. 1: nothing older than W + ℓ survives because of rotation.
// A query tests the same k positions in every segment (§2) and answers true
// if one segment holds them all. FP ≈ 1 - (1 - (1 - e^{-kℓ/s})^k)^{r+1} (Prop. 2).
//
// Blocked variant (§2, the paragraph after Proposition 1): h1 picks one block of B bits (the
// same block index in every segment), h2 the k bits inside it, so a segment
// probe touches one cache line for B = 512.
//
// State: a small header plus (r+1)·words_per_segment uint64_t, all carved
// from the caller's arena. The filter object is a trivially copyable handle
// onto that state: copies alias it (give one handle to one lcore).
#pragma once

#include <cstddef>
#include <cstdint>

#include "agebloom/core/arena.hpp"
#include "agebloom/core/bits.hpp"
#include "agebloom/core/bloom_math.hpp"
#include "agebloom/core/error.hpp"
#include "agebloom/core/hash.hpp"
#include "agebloom/core/isa.hpp"
#include "agebloom/core/math.hpp"
#include "agebloom/core/placement.hpp"
#include "agebloom/core/window.hpp"
#include "agebloom/filters/bulk_ops.hpp"

namespace agebloom {

// GuardedEpochConfig::for_fpr's named parameters, read at the call site:
//   GuardedEpochConfig::for_fpr(window, fpr, {.r = ...})
// (every structure's own, so a knob of one cannot be passed to another).
struct GuardedEpochSizing {
  uint32_t r = 8;  // live epochs: r + 1 segments
  uint32_t block_bits = 0;  // 0: flat segments; 64, 128, 256 or 512: blocked
  uint64_t capacity = 0;  // expected insertions per time window (count windows: the window)
};

// A guarded epoch filter's shape (flat, or blocked when block_bits != 0):
// what for_fpr() returns and GuardedEpochFilter::create() builds.
struct GuardedEpochConfig {
  Window window = Window::count(0);  // the window kept (count or time)
  uint32_t r = 8;             // live epochs; the filter has r + 1 segments
  uint32_t k = 0;             // bits per key per segment
  uint64_t segment_bits = 0;  // s
  uint32_t block_bits = 0;    // 0: flat (paper layout); 64, 128, 256 or 512: blocked
  uint64_t capacity = 0;      // expected insertions per window: the model's load
                              // (defaults to W for count windows)
  uint64_t epoch_capacity = 0;  // time windows: an epoch also ends after this many
                                // insertions (the rotating ring's capacity trigger,
                                // rotating_ring.hpp); 0 = time alone. Ignored by
                                // count windows, whose epochs are counts already.

  static constexpr uint32_t kMaxK = 32;  // most hash functions per key
  static constexpr uint32_t kMaxSegments = 64;  // r + 1

  constexpr uint32_t segments() const noexcept { return r + 1; }  // r + 1
  constexpr bool operator==(const GuardedEpochConfig&) const = default;  // field by field

  // Insertions (count) or ticks (time) per epoch: ℓ = ⌈span / r⌉.
  constexpr uint64_t epoch_length() const noexcept { return agebloom::epoch_length(window, r); }
  // Expected insertions one segment receives while current: ℓ for count
  // windows, capacity / r for time windows.
  constexpr double epoch_load() const noexcept {
    // A count window's segment takes exactly ℓ = ⌈W/r⌉ insertions per epoch.
    if (!window.is_time() && (capacity == 0 || capacity == window.span)) return static_cast<double>(epoch_length());
    return agebloom::epoch_load(window, r, capacity, epoch_capacity);
  }

  // The Errc of the first field out of range, or ok.
  constexpr Status validate() const noexcept {
    if (Status s = window.validate(); !s) return s;
    if (r == 0 || r >= kMaxSegments) return Errc::segments_out_of_range;  // r + 1 segments (no wrap at r = 2^32 - 1)
    if (!window.is_time() && window.span < r) return Errc::window_smaller_than_segments;
    if (block_bits != 0 && (!is_pow2(block_bits) || block_bits < 64 || block_bits > 512))
      return Errc::block_size_invalid;
    if (k == 0 || k > kMaxK || (block_bits != 0 && k > block_bits)) return Errc::k_out_of_range;
    if (segment_bits < 64 || segment_bits < block_bits) return Errc::budget_too_small;
    if (segment_bits > kMaxStructureBits / segments()) return Errc::too_large;
    return Errc::ok;
  }

  // Where a key's bits go (core/placement.hpp): the CPU filter and the GPU
  // replay both take them from here.
  constexpr placement::Flat flat_placement() const noexcept { return {segment_bits}; }
  constexpr placement::Blocked blocked_placement() const noexcept {  // blocks per segment, log2 B
    return {block_bits ? segment_bits / block_bits : 0,
            block_bits ? static_cast<uint32_t>(__builtin_ctz(block_bits)) : 0};
  }

  // Model FP (Guarded Epoch Bloom Filters, Prop. 2; the blocked form replaces the per-segment
  // term by the blocked Bloom filter's FP at the same load).
  // Bits a segment really uses: blocked segments hold whole blocks only.
  constexpr uint64_t usable_segment_bits() const noexcept {
    return block_bits ? segment_bits / block_bits * block_bits : segment_bits;
  }

  // The model false-positive rate of this shape (its worst case over a window).
  constexpr double model_fpr() const noexcept {
    const double load = epoch_load();
    const double s = static_cast<double>(usable_segment_bits());
    const double seg = block_bits == 0 ? bloom_math::fpr(s, load, k)
                                       : bloom_math::blocked_fpr(s, load, k, block_bits);
    return math::any_of(seg, segments());
  }

  // Bits of memory per window item (per expected insertion for time windows).
  constexpr double bits_per_item() const noexcept {
    const uint64_t n = capacity ? capacity : window.span;
    return static_cast<double>(usable_segment_bits()) * segments() / static_cast<double>(n ? n : 1);
  }

  // The paper's framing: a budget of bits per live-window item (Table 1 uses
  // 14), split into r+1 segments, k optimal for the epoch load.
  static constexpr Expected<GuardedEpochConfig> for_bits_per_item(Window window, double bits_per_item,
                                                                  uint32_t r, uint32_t block_bits = 0,
                                                                  uint64_t capacity = 0) noexcept {
    GuardedEpochConfig c = base(window, r, block_bits, capacity);
    if (Status s = c.validate_shape(); !s) return s;
    if (!(bits_per_item > 0)) return Errc::budget_too_small;
    const double n = static_cast<double>(c.capacity);
    c.segment_bits = static_cast<uint64_t>(bits_per_item * n / c.segments());
    if (block_bits) c.segment_bits = c.segment_bits / block_bits * block_bits;
    c.k = bloom_math::optimal_k(static_cast<double>(c.segment_bits), c.epoch_load(), kMaxK);
    if (Status s = c.validate(); !s) return s;
    return c;
  }

  // Smallest segments whose model FP (Prop. 2) is at most `fpr`: the
  // per-segment target is f = 1 - (1 - fpr)^{1/(r+1)} (segments treated as
  // independent, as in the proposition), s and k start from the optimal plain
  // Bloom filter for f at load ℓ and grow until the model meets the target.
  static constexpr Expected<GuardedEpochConfig> for_fpr(Window window, double fpr, GuardedEpochSizing sizing = {}) noexcept {
    const uint32_t r = sizing.r;
    const uint32_t block_bits = sizing.block_bits;
    const uint64_t capacity = sizing.capacity;
    if (!(fpr > 0.0 && fpr < 1.0)) return Errc::fpr_out_of_range;
    GuardedEpochConfig c = base(window, r, block_bits, capacity);
    if (Status s = c.validate_shape(); !s) return s;
    const double load = c.epoch_load();
    const uint64_t unit = block_bits ? block_bits : 1;
    const uint64_t min_units = block_bits ? 1 : 64;
    const uint64_t max_units = kMaxStructureBits / c.segments() / unit;
    // Segments of `units` units with the best k for them: meets the target?
    auto meets = [&](uint64_t units) {
      c.segment_bits = units * unit;
      c.k = bloom_math::optimal_k(static_cast<double>(c.segment_bits), load, kMaxK);
      if (block_bits != 0 && c.k > block_bits) c.k = block_bits;
      return c.model_fpr() <= fpr;
    };
    const double f = math::root_complement(fpr, c.segments());
    double s = bloom_math::bits_for(load, f) / static_cast<double>(unit);
    // Bounded: 2% steps up from the plain Bloom filter's size for the
    // per-segment target (already within a few percent for flat segments),
    // at most 400 of them (a factor 2750), then a bisection down to the
    // smallest segment meeting the target.
    uint64_t fails = min_units - 1;
    for (int step = 0; step < 400; ++step, s *= 1.02) {
      if (!(s <= static_cast<double>(max_units))) return Errc::too_large;
      uint64_t units = math::ceil_to_u64(s);
      if (units < min_units) units = min_units;
      if (units <= fails) continue;
      if (!meets(units)) {
        fails = units;
        continue;
      }
      while (units / 2 > fails && meets(units / 2)) units /= 2;  // the start was generous
      meets(math::bisect_smallest(fails, units, meets));
      return c;
    }
    return Errc::too_large;  // k <= 32 left the target out of reach below the size limit
  }

 private:
  static constexpr GuardedEpochConfig base(Window window, uint32_t r, uint32_t block_bits,
                                           uint64_t capacity) noexcept {
    GuardedEpochConfig c;
    c.window = window;
    c.r = r;
    c.block_bits = block_bits;
    c.capacity = capacity ? capacity : (window.is_time() ? 0 : window.span);
    c.k = 1;
    c.segment_bits = block_bits > 64 ? block_bits : 64;
    return c;
  }
  constexpr Status validate_shape() const noexcept {
    if (Status s = window.validate(); !s) return s;
    if (capacity == 0) return Errc::capacity_zero;
    return validate();
  }
};

// The guarded epoch filter over an arena: a handle (config and pointers);
// its segments live in the arena. A copy is a view of the same state
// (docs/API.md: handles and threads); nothing to free.
class GuardedEpochFilter : public BulkOps<GuardedEpochFilter> {
 public:
  constexpr GuardedEpochFilter() noexcept = default;  // empty: create() one

  // The arena create() carves for c, from any 64-byte aligned base (c's error if invalid).
  static constexpr Expected<size_t> bytes_needed(const GuardedEpochConfig& c) noexcept {
    if (Status s = c.validate(); !s) return s;
    return ArenaLayout{}
        .add(sizeof(State))
        .add(words_per_segment(c) * sizeof(uint64_t) * c.segments())
        .bytes();
  }

  // Validates `c`, carves the state from `arena` and zeroes it. On error the
  // arena is left as it was.
  static Expected<GuardedEpochFilter> create(const GuardedEpochConfig& c, Arena& arena) noexcept {
    if (Status s = c.validate(); !s) return s;
    const size_t mark = arena.used();
    auto state = arena.carve_array<State>(1);
    const uint64_t seg_words = words_per_segment(c);
    auto words = arena.carve_array<uint64_t>(seg_words * c.segments());
    if (!state || !words) {
      arena.rewind(mark);
      return Errc::arena_too_small;
    }
    GuardedEpochFilter f;
    f.cfg_ = c;
    f.state_ = *state;
    f.words_ = *words;
    f.segment_words_ = seg_words;
    f.flat_ = c.flat_placement();
    f.blocked_ = c.blocked_placement();
    f.block_words_ = c.block_bits / 64;
    f.use_isa(Isa::avx512);
    f.state_->start(c.window.kind, c.epoch_length(), c.epoch_capacity);
    bits::clear(f.words_, seg_words * c.segments());
    return f;
  }

  // Time windows: rotates every epoch that ended by `now` (at most r+1
  // clears, however long the gap). Count windows: no-op. Call it before the
  // operations of a burst that happens at `now`.
  Status advance(uint64_t now) noexcept {
    return state_->schedule.advance(now, cfg_.segments(), [this] { rotate(); });
  }

  // Whether h was inserted within the window (or is a false positive).
  bool contains(KeyHash h) const noexcept {
    if (cfg_.block_bits == 0) {
      uint64_t pos[GuardedEpochConfig::kMaxK];
      flat_positions(h, pos);
      return flat_contains(pos);
    }
    return isa_ == Isa::avx2 ? blocked_query_avx2(h) : blocked_query(h);
  }

  // Records h as inserted now.
  void insert(KeyHash h) noexcept { (void)insert_impl<false>(h); }

  // The dedup primitive: one pass, one verdict. Equal to
  // `bool v = contains(h); insert(h); return v;`.
  bool test_and_insert(KeyHash h) noexcept { return insert_impl<true>(h); }

  // Prefetches the lines h will touch first (the bulk forms call it ahead;
  // a caller pipelining its own burst may too).
  void prefetch(KeyHash h) const noexcept {
    const uint64_t word = cfg_.block_bits ? blocked_.block(h) * block_words_ : flat_.bit(h, 0) / 64;
    for (uint32_t j = 0; j < cfg_.segments(); ++j) bits::prefetch_read(segment(j) + word);
  }
  // The line an insert of h writes first, in the segment taking insertions
  // now (BulkOps::insert_bulk asks for it alone: an insert reads no other
  // segment).
  void prefetch_insert(KeyHash h) const noexcept {
    const uint64_t word = cfg_.block_bits ? blocked_.block(h) * block_words_ : flat_.bit(h, 0) / 64;
    bits::prefetch_write(segment(state_->current) + word);
  }

  // insert(h[i]) for i < n in order. The flat layout writes k lines a key:
  // asking for all of them, each position computed once for the request and
  // kept for the insert D keys later (a ring of D keys' positions). Asking
  // for them through prefetch_insert() instead, positions computed twice,
  // made this 4.7 times as fast at W = 64M but 1.6 times as slow in the
  // caches (docs/PERFORMANCE.md, 2026-11-27). Blocked: BulkOps' form.
  void insert_bulk(const KeyHash* h, size_t n) noexcept {
    if (cfg_.block_bits != 0) return BulkOps::insert_bulk(h, n);
    constexpr size_t D = kPrefetchDistance;
    uint64_t pos[D][GuardedEpochConfig::kMaxK];
    auto request = [&](size_t i) {
      uint64_t* p = pos[i % D];
      flat_positions(h[i], p);
      // The segment taking insertions now: a rotation before key i is
      // reached makes this one request useless, never a result wrong.
      const uint64_t* seg = segment(state_->current);
      for (uint32_t j = 0; j < cfg_.k; ++j) bits::prefetch_write(seg + p[j] / 64);
    };
    for (size_t i = 0; i < n && i < D; ++i) request(i);
    for (size_t i = 0; i < n; ++i) {
      uint64_t* seg = advance_for_insert();
      const uint64_t* p = pos[i % D];
      for (uint32_t j = 0; j < cfg_.k; ++j) bits::set(seg, p[j]);
      if (i + D < n) request(i + D);  // into the slot key i just left
    }
  }

  // Which build of the blocked probe runs: AVX2 when the CPU has it and
  // `widest` allows it (create() allows it), else the baseline; the flat
  // layout has the baseline only. Both give the same verdicts and state
  // (tested); this switch exists for that test and for benchmarks.
  void use_isa(Isa widest) noexcept {
    isa_ = cfg_.block_bits != 0 && widest >= Isa::avx2 && cpu_has_avx2() ? Isa::avx2 : Isa::baseline;
  }
  Isa isa() const noexcept { return isa_; }  // the build of the probe that runs

  // Whether `image`, a saved copy of this filter's arena, holds a state this
  // filter can be in: dedup/snapshot.hpp asks before a load, since a crafted
  // image passes its checksum. Any bits will do; the header must keep this
  // filter's epoch schedule and name one of its segments.
  bool accepts_image(const ArenaImage& image) const noexcept {
    return state_->accepts_image(image, cfg_.segments());
  }
  const GuardedEpochConfig& config() const noexcept { return cfg_; }  // the configuration it was created with
  uint64_t insertions() const noexcept { return state_->insertions; }  // insertions so far
  // The epoch clock: when the current epoch began and how full it is (flood watch).
  const EpochSchedule& epoch_schedule() const noexcept { return state_->schedule; }
  uint32_t current_segment() const noexcept { return state_->current; }  // the segment taking insertions
  size_t state_bytes() const noexcept {  // the state in the arena
    return sizeof(State) + segment_words_ * sizeof(uint64_t) * cfg_.segments();
  }
  // Fraction of set bits over all segments (control plane: O(m)).
  double fill_ratio() const noexcept {
    const uint64_t total = segment_words_ * cfg_.segments();
    return static_cast<double>(bits::popcount(words_, total)) / (static_cast<double>(total) * 64);
  }

 private:
  using State = EpochRingHeader;  // core/window.hpp; `current`: the segment being filled

  static constexpr uint64_t words_per_segment(const GuardedEpochConfig& c) noexcept {
    // Blocked segments hold whole blocks only; flat ones round up to a word.
    return c.block_bits ? (c.segment_bits / c.block_bits) * (c.block_bits / 64)
                        : bits::words_for(c.segment_bits);
  }

  uint64_t* segment(uint32_t j) const noexcept { return words_ + j * segment_words_; }

  // Newest segment first: a recent duplicate, the common hit, ends the scan early.
  uint32_t nth_newest(uint32_t i) const noexcept {
    const uint32_t n = cfg_.segments();
    return (state_->current + n - i) % n;
  }

  void rotate() noexcept {
    state_->current = (state_->current + 1) % cfg_.segments();
    bits::clear(segment(state_->current), segment_words_);
  }

  // The same k positions in every segment (Guarded Epoch Bloom Filters, §2).
  void flat_positions(KeyHash h, uint64_t* pos) const noexcept {
    for (uint32_t i = 0; i < cfg_.k; ++i) pos[i] = flat_.bit(h, i);
  }
  bool flat_contains(const uint64_t* pos) const noexcept {
    for (uint32_t j = 0; j < cfg_.segments(); ++j) {
      const uint64_t* seg = segment(nth_newest(j));
      uint32_t i = 0;
      while (i < cfg_.k && bits::test(seg, pos[i])) ++i;
      if (i == cfg_.k) return true;
    }
    return false;
  }

  // Block from h1, in-block bits from h2 (independent halves).
  [[gnu::always_inline]] inline uint64_t blocked_pattern(KeyHash h, bits::Pattern<8>& p) const noexcept {
    for (uint32_t i = 0; i < cfg_.k; ++i) {
      const uint32_t bit = placement::Blocked::in_block(h.h2, i, blocked_.log2_block, kBlockSalts.salt);
      p.mask[bit / 64] |= uint64_t{1} << (bit % 64);
    }
    return blocked_.block(h);
  }
  [[gnu::always_inline]] inline bool blocked_contains(uint64_t block, const bits::Pattern<8>& p) const noexcept {
    for (uint32_t j = 0; j < cfg_.segments(); ++j) {
      const uint64_t* blk = segment(nth_newest(j)) + block * block_words_;
      uint64_t missing = 0;
      for (uint32_t w = 0; w < block_words_; ++w) missing |= p.mask[w] & ~blk[w];
      if (missing == 0) return true;
    }
    return false;
  }

  // Positions (or the block and its pattern) are computed once and serve
  // both the test and the insertion.
  template <bool Test>
  bool insert_impl(KeyHash h) noexcept {
    if (cfg_.block_bits == 0) {
      uint64_t pos[GuardedEpochConfig::kMaxK];
      flat_positions(h, pos);
      bool seen = false;
      if constexpr (Test) seen = flat_contains(pos);  // the verdict precedes this insertion's rotation
      uint64_t* seg = advance_for_insert();
      for (uint32_t i = 0; i < cfg_.k; ++i) bits::set(seg, pos[i]);
      return seen;
    }
    return isa_ == Isa::avx2 ? blocked_insert_avx2<Test>(h) : blocked_insert<Test>(h);
  }

  // The blocked paths, whole, so that the AVX2 wrappers below inline them
  // (isa.hpp): the eight-word pattern and its compare vectorise.
  [[gnu::always_inline]] inline bool blocked_query(KeyHash h) const noexcept {
    bits::Pattern<8> p;
    const uint64_t block = blocked_pattern(h, p);
    return blocked_contains(block, p);
  }
  template <bool Test>
  [[gnu::always_inline]] inline bool blocked_insert(KeyHash h) noexcept {
    bits::Pattern<8> p;
    const uint64_t block = blocked_pattern(h, p);
    bool seen = false;
    if constexpr (Test) seen = blocked_contains(block, p);
    uint64_t* blk = advance_for_insert() + block * block_words_;
    for (uint32_t w = 0; w < block_words_; ++w) blk[w] |= p.mask[w];
    return seen;
  }
  AGEBLOOM_TARGET_AVX2 bool blocked_query_avx2(KeyHash h) const noexcept { return blocked_query(h); }
  template <bool Test>
  AGEBLOOM_TARGET_AVX2 bool blocked_insert_avx2(KeyHash h) noexcept {
    return blocked_insert<Test>(h);
  }

  // Count windows rotate before the insertion that starts a new epoch.
  [[gnu::always_inline]] inline uint64_t* advance_for_insert() noexcept {
    if (state_->schedule.rotate_before_insert()) rotate();
    ++state_->insertions;
    return segment(state_->current);
  }

  GuardedEpochConfig cfg_{};
  State* state_ = nullptr;
  uint64_t* words_ = nullptr;
  uint64_t segment_words_ = 0;
  placement::Flat flat_{};
  placement::Blocked blocked_{};
  uint32_t block_words_ = 0;
  Isa isa_ = Isa::baseline;  // blocked probes take the AVX2 build of their body (isa.hpp)
};

}  // namespace agebloom
