// Timing and Block Timing Bloom filters (Dautrich & Ravishankar,
// "Inferential Time-Decaying Bloom Filters", EDBT 2013, Sec. 3; the TBF is
// Zhang & Guan's, the paper's [23]). One implementation: the TBF is the
// block size B = 1.
//
// m timers of bpt bits. A current timestamp T+ cycles through [0, T_Ω] and
// advances once per block of B insertions (count windows) or B ticks (time
// windows); b is what has passed since it last advanced. An insertion sets
// the key's k timers to T+. A timer's age λ is how often T+ advanced since;
// it has expired once λ >= ⌈(w − b)/B⌉ + 1 (Definition 9), and a query
// answers "seen" iff none of the key's timers has: no false negatives
// (Sec. 3.2.2: an expired timer proves I_x >= w). Expired timers must be
// marked (T_ε) before T+ comes round to their value again; with padding P,
// T_Ω = ⌈w/B⌉ + 1 + P leaves P + 1 steps for that, so a cursor checking
// m/(P+1) timers per step (m/(B(P+1)) per insertion, Sec. 3.1.3 and 3.2.3)
// marks every expired timer in time and no insertion scans the array. An
// idle gap of a time window catches up the sweep for the steps it skipped
// (at most one pass over the timers; a gap longer than the window clears
// them all).
//
// The model (a Bloom filter of m cells whose k timers must all have been
// touched by the last w + B insertions, the block's slack) is the FP of a
// key never inserted; the block also makes keys of the window's first block
// look live (Sec. 3.2.2, Figure 4), counted in that slack.
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

namespace agebloom {

// BlockTimingConfig::for_fpr's named parameters, read at the call site:
//   BlockTimingConfig::for_fpr(window, fpr, {.capacity = ...})
// (every structure's own, so a knob of one cannot be passed to another).
struct BlockTimingSizing {
  uint64_t capacity = 0;  // expected insertions per time window
  bool tbf = false;  // true: the plain timing filter (block of one insertion)
};

// A (block) timing filter's shape: what for_fpr() returns and
// BlockTimingFilter::create() builds.
struct BlockTimingConfig {
  Window window = Window::count(0);  // w insertions, or T ticks
  uint64_t capacity = 0;             // insertions per window (time windows: the model's load)
  uint32_t k = 0;  // hashes (timers) per key
  uint64_t timers = 0;               // m
  uint32_t bpt = 0;                  // bits per timer, 3..32
  uint64_t block = 1;                // B: insertions (or ticks) per timestamp step; 1 = the TBF
  uint64_t padding = 0;              // P

  static constexpr uint32_t kMaxK = 32;  // most hash functions per key
  constexpr bool operator==(const BlockTimingConfig&) const = default;  // field by field

  constexpr uint64_t load() const noexcept { return capacity ? capacity : (window.is_time() ? 0 : window.span); }  // insertions per window the model assumes
  // T_Ω = ⌈w/B⌉ + 1 + P; timers hold 0..T_Ω, and T_ε = T_Ω + 1 marks an expired one.
  constexpr uint64_t max_timestamp() const noexcept { return math::ceil_div(window.span, block ? block : 1) + 1 + padding; }
  constexpr uint64_t expired_value() const noexcept { return max_timestamp() + 1; }  // T_ε: the value of an expired timer
  // Timers a sweep step checks: every timer once per P + 1 steps.
  constexpr uint64_t sweep_per_step() const noexcept { return math::ceil_div(timers, padding + 1); }
  constexpr uint64_t words() const noexcept { return bits::words_for(timers * bpt) + 1; }  // +1: reads span two words

  // The Errc of the first field out of range, or ok.
  constexpr Status validate() const noexcept {
    if (Status s = window.validate(); !s) return s;
    if (k == 0 || k > kMaxK) return Errc::k_out_of_range;
    if (bpt < 3 || bpt > 32) return Errc::timer_bits_invalid;
    if (block == 0 || block > window.span) return Errc::block_invalid;
    if (padding > window.span) return Errc::padding_invalid;
    if (max_timestamp() + 1 >= (uint64_t{1} << bpt)) return Errc::timer_bits_invalid;  // T_ε must fit
    if (timers < k) return Errc::budget_too_small;
    if (timers > kMaxStructureBits / bpt) return Errc::too_large;
    if (window.is_time() && capacity == 0) return Errc::capacity_zero;
    return Errc::ok;
  }

  // A never-inserted key passes when each of its k timers was touched by
  // one of the last w + B − 1 insertions (the worst case: b = B − 1, one
  // insertion before a step; w + B for a time window's block of ticks).
  constexpr double model_fpr() const noexcept {
    return bloom_math::fpr(static_cast<double>(timers), static_cast<double>(load() + block_load()), k);
  }
  // Bits of memory per window item (per expected insertion for time windows).
  constexpr double bits_per_item() const noexcept {
    return static_cast<double>(timers * bpt) / static_cast<double>(load() ? load() : 1);
  }
  // Insertions one block holds (time windows: at the planned rate).
  constexpr double block_load() const noexcept {
    if (!window.is_time()) return static_cast<double>(block);
    return static_cast<double>(load()) * static_cast<double>(block) / static_cast<double>(window.span);
  }

  // Sizing (Sec. 5.1.2's defaults): bpt = k (at least 3); B the smallest
  // block whose T_Ω fits in bpt bits; P the smallest padding that keeps the
  // sweep at <= k timers per insertion (which in turn asks for a larger B);
  // m and k the Bloom optimum for the FPR at the load w + B. block == 1
  // asks for the TBF: bpt then follows from T_Ω.
  // The BTBF of m = `timers` timers and k hashes shaped as for_fpr() does
  // (bpt = k, at least 3; then B and P): the paper's experiments size it so,
  // from a memory budget (Sec. 5.1.2-5.1.3), not from a target FPR.
  static constexpr Expected<BlockTimingConfig> with_timers(Window window, uint64_t timers, uint32_t k,
                                                           uint64_t capacity = 0) noexcept {
    if (Status s = window.validate(); !s) return s;
    if (k == 0 || k > kMaxK) return Errc::k_out_of_range;
    BlockTimingConfig c;
    c.window = window;
    c.capacity = capacity ? capacity : (window.is_time() ? 0 : window.span);
    c.timers = timers;
    c.k = k;
    c.shape_blocks();
    if (Status s = c.validate(); !s) return s;
    return c;
  }

  // bpt = k (at least 3), then the smallest P with the sweep at <= k timers
  // per insertion: m <= k·B(P)·(P + 1) with B(P) = ⌈w/(steps − P)⌉ the
  // block whose T_Ω fits in bpt bits, which grows with P, so a bisection over
  // [0, steps − 1] finds it.
  constexpr void shape_blocks() noexcept {
    bpt = k < 3 ? 3 : (k > 32 ? 32 : k);
    const uint64_t steps = (uint64_t{1} << bpt) - 3;  // T_Ω + 2 values: ⌈w/B⌉ + P <= 2^bpt − 3
    auto block_for = [&](uint64_t p) { return math::ceil_div(window.span, steps - p); };
    auto sweep_ok = [&](uint64_t p) {
      return static_cast<double>(timers) <=
             static_cast<double>(k) * static_cast<double>(block_for(p)) * static_cast<double>(p + 1);
    };
    uint64_t p = 0;
    if (!sweep_ok(0)) p = sweep_ok(steps - 1) ? math::bisect_smallest(0, steps - 1, sweep_ok) : steps - 1;
    padding = p;
    block = block_for(p);
  }

  // The smallest m meeting fpr at the load w + B (a block's insertions are
  // live until its step ends), k optimal for it; tbf = true: the TBF's B = 1
  // with P ≈ m/k (Sec. 3.1.3).
  // Errors: fpr_out_of_range, capacity_zero, too_large.
  static constexpr Expected<BlockTimingConfig> for_fpr(Window window, double fpr, BlockTimingSizing sizing = {}) noexcept {
    const uint64_t capacity = sizing.capacity;
    const bool tbf = sizing.tbf;
    if (Status s = window.validate(); !s) return s;
    if (!(fpr > 0.0 && fpr < 1.0)) return Errc::fpr_out_of_range;
    BlockTimingConfig c;
    c.window = window;
    c.capacity = capacity ? capacity : (window.is_time() ? 0 : window.span);
    if (c.load() == 0) return Errc::capacity_zero;
    double n = static_cast<double>(c.load());
    for (int round = 0; round < 8; ++round) {  // B depends on m (through P), m on B (through the load)
      const double m = bloom_math::bits_for(n, fpr);
      if (!(m <= static_cast<double>(kMaxStructureBits / 32))) return Errc::too_large;
      c.timers = math::ceil_to_u64(m);
      c.k = bloom_math::optimal_k(m, n, kMaxK);
      if (c.timers < c.k) c.timers = c.k;
      if (tbf) {
        // B = 1: P ~ m/k (Sec. 3.1.3's rule of thumb), bpt from T_Ω.
        c.block = 1;
        c.padding = math::ceil_div(c.timers, c.k);
        if (c.padding > window.span) c.padding = window.span;
        uint32_t bpt = 3;
        while (bpt < 32 && c.max_timestamp() + 1 >= (uint64_t{1} << bpt)) ++bpt;
        c.bpt = bpt;
      } else {
        c.shape_blocks();
      }
      const double next = static_cast<double>(c.load()) + c.block_load();
      if (next <= n * 1.0001) break;
      n = next;
    }
    if (c.padding > window.span) c.padding = window.span;
    // The model at the load w + B must meet the target: grow m a little if rounding left it above.
    for (int i = 0; i < 64 && c.model_fpr() > fpr; ++i) c.timers += c.timers / 100 + 1;
    if (c.model_fpr() > fpr) return Errc::too_large;  // k <= 32 cannot reach it within the bounds
    if (Status s = c.validate(); !s) return s;
    return c;
  }
};

// What a query sees of a key's timers, all the inferential BTBF needs
// (Dautrich & Ravishankar, Sec. 4, Definitions 10 and 11): the age λ_x of
// the oldest timestamp in R_x, how many of the key's distinct timers hold it
// (c_x of r_x), and the position in the block. An expired timer makes λ_x
// infinite (kExpired): the key is certainly outside the window (Theorem 2).
struct TimerObservation {
  static constexpr uint64_t kExpired = ~uint64_t{0};  // λ_x of an expired timer: infinitely old
  uint64_t age = kExpired;  // λ_x
  uint32_t oldest = 0;      // c_x
  uint32_t timers = 0;      // r_x = |R_x|: the key's k probes, repeats counted once
  uint64_t in_block = 0;    // b: insertions since T+ last advanced
  uint64_t block = 1;       // B
  uint64_t window = 0;      // w
  uint64_t live_ages = 0;   // ⌈(w − b)/B⌉: the largest λ_x of a key still possibly in the window

  // The key is certainly outside the window (Theorem 2).
  constexpr bool expired() const noexcept { return age > live_ages; }
};

// The timing filter over an arena: a handle; its timers live in the arena.
class BlockTimingFilter : public BulkOps<BlockTimingFilter> {
 public:
  constexpr BlockTimingFilter() noexcept = default;  // empty: create() one

  // The arena create() carves for c, from any 64-byte aligned base (c's error if invalid).
  static constexpr Expected<size_t> bytes_needed(const BlockTimingConfig& c) noexcept {
    if (Status s = c.validate(); !s) return s;
    return ArenaLayout{}.add(sizeof(Header)).add(c.words() * 8).bytes();
  }

  // Validates c, carves the filter's state from arena and clears it; on error
  // the arena is left as it was.
  static Expected<BlockTimingFilter> create(const BlockTimingConfig& c, Arena& arena) noexcept {
    if (Status s = c.validate(); !s) return s;
    const size_t mark = arena.used();
    auto header = arena.carve_array<Header>(1);
    auto words = arena.carve_array<uint64_t>(c.words());
    if (!header || !words) {
      arena.rewind(mark);
      return Errc::arena_too_small;
    }
    BlockTimingFilter f;
    f.cfg_ = c;
    f.h_ = *header;
    f.words_ = *words;
    *f.h_ = Header{};
    f.h_->steps = EpochSchedule::make(WindowKind::time, c.block);
    // Every timer starts expired.
    for (uint64_t i = 0; i < c.timers; ++i) f.set(i, c.expired_value());
    return f;
  }

  // Time windows: T+ advances once per B ticks elapsed, the sweep catching
  // up for every step (a gap longer than the window expires everything).
  Status advance(uint64_t now) noexcept {
    if (!cfg_.window.is_time()) return Errc::ok;
    // The steps of B ticks that ended by now (core/window.hpp's schedule:
    // the first call anchors it; time going backwards changes nothing).
    auto elapsed = h_->steps.epochs_elapsed(now);
    if (!elapsed) return elapsed.error();
    const uint64_t steps = *elapsed;
    if (steps == 0) return Errc::ok;
    if (steps <= cfg_.padding) {  // a few steps: the incremental sweep keeps up
      for (uint64_t s = 0; s < steps; ++s) step();
      return Errc::ok;
    }
    // A longer gap: one pass marks every timer that will be expired after it
    // (before T+ jumps, so no true age wraps past T_Ω and looks young).
    const uint64_t limit = math::ceil_div(cfg_.window.span, cfg_.block) + 1;
    for (uint64_t i = 0; i < cfg_.timers; ++i) {
      const uint64_t t = get(i);
      if (t != cfg_.expired_value() && (steps >= limit || age(t) + steps >= limit)) set(i, cfg_.expired_value());
    }
    const uint64_t span = cfg_.max_timestamp() + 1;
    h_->current = (h_->current + steps % span) % span;
    return Errc::ok;
  }

  // Whether h was inserted within the window (or is a false positive).
  bool contains(KeyHash h) const noexcept {
    const uint64_t limit = expiry_age();
    for (uint32_t i = 0; i < cfg_.k; ++i)
      if (age(get(probe(h, i, cfg_.timers))) >= limit) return false;
    return true;
  }

  // The key's timers as the inference reads them (same reads as contains()).
  TimerObservation observe(KeyHash h) const noexcept {
    TimerObservation o;
    o.in_block = since_step();
    o.block = cfg_.block;
    o.window = cfg_.window.span;
    o.live_ages = expiry_age() - 1;
    // All k timer addresses first, their lines requested together: the
    // reads below then overlap instead of waiting one after another (the
    // inference needs every timer, where contains() may stop at the first
    // expired one).
    uint64_t at[BlockTimingConfig::kMaxK];
    for (uint32_t i = 0; i < cfg_.k; ++i) {
      at[i] = probe(h, i, cfg_.timers);
      bits::prefetch_read(words_ + at[i] * cfg_.bpt / 64);
    }
    uint64_t oldest = 0;
    for (uint32_t i = 0; i < cfg_.k; ++i) {
      const uint64_t t = at[i];
      bool repeat = false;
      for (uint32_t j = 0; j < i; ++j) repeat |= at[j] == t;
      if (repeat) continue;
      ++o.timers;
      const uint64_t a = age(get(t));
      if (a > oldest || o.oldest == 0) {
        oldest = a;
        o.oldest = 1;
      } else if (a == oldest) {
        ++o.oldest;
      }
    }
    o.age = oldest > o.live_ages ? TimerObservation::kExpired : oldest;
    return o;
  }

  // Records h as inserted now.
  void insert(KeyHash h) noexcept {
    for (uint32_t i = 0; i < cfg_.k; ++i) set(probe(h, i, cfg_.timers), h_->current);
    ++h_->insertions;
    if (!cfg_.window.is_time()) {
      sweep(math::ceil_div(cfg_.sweep_per_step(), cfg_.block));  // m/(B(P+1)) per insertion
      if (++h_->in_block == cfg_.block) {  // Sec. 3.2.1: T+ advances after a block's last insertion
        h_->in_block = 0;
        h_->current = next(h_->current);
      }
    }
  }
  // contains(h) then insert(h), in one pass: the dedup primitive.
  bool test_and_insert(KeyHash h) noexcept {
    const bool seen = contains(h);
    insert(h);
    return seen;
  }
  // Prefetches the lines h will touch first (the bulk forms call it ahead).
  void prefetch(KeyHash h) const noexcept {
    bits::prefetch_read(words_ + probe(h, 0, cfg_.timers) * cfg_.bpt / 64);
  }

  // Whether `image`, a saved copy of this filter's arena, holds a state this
  // filter can be in: dedup/snapshot.hpp asks before a load, since a crafted
  // image passes its checksum. Any timers will do (a value past T_ε reads
  // as expired); T+ must be a timestamp, the sweep's cursor a timer, a count
  // window's block under B insertions, the steps this filter's schedule.
  bool accepts_image(const ArenaImage& image) const noexcept {
    Header s;
    return image.read(h_, s) && s.current <= cfg_.max_timestamp() && s.cursor < cfg_.timers &&
           (cfg_.window.is_time() || s.in_block < cfg_.block) && h_->steps.accepts(s.steps);
  }

  const BlockTimingConfig& config() const noexcept { return cfg_; }  // the configuration it was created with
  uint64_t insertions() const noexcept { return h_->insertions; }  // insertions so far
  // Count windows: insertions before the one that completes this block
  // (0: b = B − 1, the most keys live at once, where model_fpr() is defined).
  uint64_t insertions_before_shift() const noexcept {
    return cfg_.window.is_time() ? 0 : cfg_.block - 1 - h_->in_block;
  }
  // Timers not expired (control plane: O(m)).
  double fill_ratio() const noexcept {
    uint64_t live = 0;
    for (uint64_t i = 0; i < cfg_.timers; ++i) live += age(get(i)) < expiry_age();
    return static_cast<double>(live) / static_cast<double>(cfg_.timers);
  }

 private:
  struct Header {
    uint64_t current = 0;      // T+
    uint64_t in_block = 0;     // count windows: b
    EpochSchedule steps{};     // time windows: steps of B ticks (start, latest tick)
    uint64_t cursor = 0;       // the sweep's next timer
    uint64_t insertions = 0;
  };

  uint64_t next(uint64_t t) const noexcept { return t == cfg_.max_timestamp() ? 0 : t + 1; }
  // b: insertions or ticks since T+ last advanced.
  uint64_t since_step() const noexcept {
    return cfg_.window.is_time() ? h_->steps.last_now - h_->steps.epoch_start : h_->in_block;
  }
  // λ >= ⌈(w − b)/B⌉ + 1 is expired (Definition 9).
  uint64_t expiry_age() const noexcept {
    const uint64_t b = since_step(), w = cfg_.window.span;
    return (w > b ? math::ceil_div(w - b, cfg_.block) : 0) + 1;
  }
  uint64_t age(uint64_t t) const noexcept {
    if (t == cfg_.expired_value()) return ~uint64_t{0};
    const uint64_t cur = h_->current, span = cfg_.max_timestamp() + 1;
    return cur >= t ? cur - t : cur + span - t;
  }
  // One timestamp step: T+ advances after the sweep has marked what the
  // new value would otherwise make look fresh.
  void step() noexcept {
    sweep(cfg_.sweep_per_step());
    h_->current = next(h_->current);
  }
  void sweep(uint64_t n) noexcept {
    const uint64_t limit = math::ceil_div(cfg_.window.span, cfg_.block) + 1;  // expired at any b
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t t = get(h_->cursor);
      if (t != cfg_.expired_value() && age(t) >= limit) set(h_->cursor, cfg_.expired_value());
      if (++h_->cursor == cfg_.timers) h_->cursor = 0;
    }
  }

  // Timer i: bpt bits at bit i·bpt, possibly across two words.
  uint64_t get(uint64_t i) const noexcept {
    const uint64_t bit = i * cfg_.bpt, w = bit / 64, s = bit % 64, mask = (uint64_t{1} << cfg_.bpt) - 1;
    uint64_t v = words_[w] >> s;
    if (s + cfg_.bpt > 64) v |= words_[w + 1] << (64 - s);
    return v & mask;
  }
  void set(uint64_t i, uint64_t v) noexcept {
    const uint64_t bit = i * cfg_.bpt, w = bit / 64, s = bit % 64, mask = (uint64_t{1} << cfg_.bpt) - 1;
    words_[w] = (words_[w] & ~(mask << s)) | (v << s);
    if (s + cfg_.bpt > 64) {
      const uint64_t hi = cfg_.bpt - (64 - s);
      const uint64_t hmask = (uint64_t{1} << hi) - 1;
      words_[w + 1] = (words_[w + 1] & ~hmask) | (v >> (64 - s));
    }
  }

  BlockTimingConfig cfg_{};
  Header* h_ = nullptr;
  uint64_t* words_ = nullptr;
};

}  // namespace agebloom
