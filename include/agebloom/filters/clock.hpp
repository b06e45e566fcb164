// Continuous filter with a 4-bit clock (the Continuous Bloom Filter post,
// "Continuous Filter"; Surprenant, the Bloombroom gem).
//
// Cells of 4 bits: 0 = empty, 1..15 = the clock slot of the last write. The
// clock ticks every TTL/divisor (count windows: W/divisor insertions; time
// windows: T/divisor ticks) and its slot wraps over 1..15. An insertion
// writes the current slot into the key's k cells. A cell is a miss when 0 or
// when more than `divisor` ticks have passed since its slot; a key is seen
// when none of its k cells is a miss, so it lives between TTL and
// (1 + 1/divisor)·TTL (a tick of slack), never less: no false negatives.
// Insertions reset the expired cells they meet (the post's lazy reset).
//
// The original's flaw: a cell untouched for 15 ticks wraps round and looks
// fresh again. Here an amortised sweep fixes it: a cell has expired after
// divisor + 1 ticks and aliases after 15, which leaves 14 − divisor ticks to
// find it, so a cursor resets the expired cells among m/(14 − divisor) per
// tick (spread over the tick's insertions in a count window; at advance()
// for the ticks that passed in a time window, a whole pass after a gap).
//
// The model: a Bloom filter of m cells holding the keys of at most
// (1 + 1/divisor)·W insertions.
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

// ClockConfig::for_fpr's named parameters, read at the call site:
//   ClockConfig::for_fpr(window, fpr, {.capacity = ...})
// (every structure's own, so a knob of one cannot be passed to another).
struct ClockSizing {
  uint64_t capacity = 0;  // expected insertions per time window
  uint32_t divisor = 2;  // clock resolution: keys live up to (1 + 1/divisor) windows
};

// The continuous (clock) filter's shape: what for_fpr() returns and
// ClockFilter::create() builds.
struct ClockConfig {
  Window window = Window::count(0);  // the window kept (count or time)
  uint64_t capacity = 0;  // insertions per window (time windows: the model's load)
  uint32_t k = 0;  // hashes (cells) per key
  uint64_t cells = 0;     // m, 16 per word
  uint32_t divisor = 2;   // ticks per TTL

  // Most hash functions per key; the clock values a cell holds (1..15, 0 = empty).
  static constexpr uint32_t kMaxK = 32, kSlots = 15;
  constexpr bool operator==(const ClockConfig&) const = default;  // field by field

  constexpr uint64_t load() const noexcept { return capacity ? capacity : (window.is_time() ? 0 : window.span); }  // insertions per window the model assumes
  constexpr uint64_t tick_length() const noexcept { return math::ceil_div(window.span, divisor ? divisor : 1); }  // ticks (or insertions) per clock tick
  // Cells the sweep resets per tick: every cell once per 14 − divisor ticks.
  constexpr uint64_t sweep_per_tick() const noexcept { return math::ceil_div(cells, kSlots - 1 - divisor); }
  constexpr uint64_t words() const noexcept { return math::ceil_div(cells, 16); }  // 64-bit words of cells

  // The Errc of the first field out of range, or ok.
  constexpr Status validate() const noexcept {
    if (Status s = window.validate(); !s) return s;
    if (divisor == 0 || divisor > 7) return Errc::divisor_invalid;
    if (k == 0 || k > kMaxK) return Errc::k_out_of_range;
    if (cells < k || cells < 16) return Errc::budget_too_small;
    if (cells > kMaxStructureBits / 4) return Errc::too_large;
    if (window.is_time() && capacity == 0) return Errc::capacity_zero;
    if (!window.is_time() && window.span < divisor) return Errc::window_smaller_than_segments;
    return Errc::ok;
  }
  // The keys of up to (1 + 1/divisor)·W insertions are live at once.
  constexpr double model_fpr() const noexcept {
    const double live = static_cast<double>(load()) * (1.0 + 1.0 / divisor);
    return bloom_math::fpr(static_cast<double>(cells), live, k);
  }
  // Bits of memory per window item (per expected insertion for time windows).
  constexpr double bits_per_item() const noexcept {
    return static_cast<double>(cells * 4) / static_cast<double>(load() ? load() : 1);
  }

  // The smallest m meeting fpr at the load of TTL·(1 + 1/divisor) (keys live
  // up to 1.5 TTL for the default divisor 2), k optimal for it.
  static constexpr Expected<ClockConfig> for_fpr(Window window, double fpr, ClockSizing sizing = {}) noexcept {
    const uint64_t capacity = sizing.capacity;
    const uint32_t divisor = sizing.divisor;
    if (Status s = window.validate(); !s) return s;
    if (!(fpr > 0.0 && fpr < 1.0)) return Errc::fpr_out_of_range;
    ClockConfig c;
    c.window = window;
    c.divisor = divisor;
    c.capacity = capacity ? capacity : (window.is_time() ? 0 : window.span);
    if (c.load() == 0) return Errc::capacity_zero;
    const double live = static_cast<double>(c.load()) * (1.0 + 1.0 / (divisor ? divisor : 1));
    const double m = bloom_math::bits_for(live, fpr);
    if (!(m <= static_cast<double>(kMaxStructureBits / 4))) return Errc::too_large;
    c.cells = math::ceil_to_u64(m);
    if (c.cells < 16) c.cells = 16;
    c.k = bloom_math::optimal_k(static_cast<double>(c.cells), live, kMaxK);
    for (int i = 0; i < 64 && c.model_fpr() > fpr; ++i) c.cells += c.cells / 100 + 1;
    if (c.model_fpr() > fpr) return Errc::too_large;  // k <= 32 cannot reach it within the bounds
    if (Status s = c.validate(); !s) return s;
    return c;
  }
};

// The clock filter over an arena: a handle; its cells live in the arena.
class ClockFilter : public BulkOps<ClockFilter> {
 public:
  constexpr ClockFilter() noexcept = default;  // empty: create() one

  // The arena create() carves for c, from any 64-byte aligned base (c's error if invalid).
  static constexpr Expected<size_t> bytes_needed(const ClockConfig& c) noexcept {
    if (Status s = c.validate(); !s) return s;
    return ArenaLayout{}.add(sizeof(Header)).add(c.words() * 8).bytes();
  }

  // Validates c, carves the filter's state from arena and clears it; on error
  // the arena is left as it was.
  static Expected<ClockFilter> create(const ClockConfig& c, Arena& arena) noexcept {
    if (Status s = c.validate(); !s) return s;
    const size_t mark = arena.used();
    auto header = arena.carve_array<Header>(1);
    auto words = arena.carve_array<uint64_t>(c.words());
    if (!header || !words) {
      arena.rewind(mark);
      return Errc::arena_too_small;
    }
    ClockFilter f;
    f.cfg_ = c;
    f.h_ = *header;
    f.words_ = *words;
    *f.h_ = Header{};
    f.h_->ticks = EpochSchedule::make(c.window.kind, c.tick_length());
    bits::clear(f.words_, c.words());
    return f;
  }

  // Time windows: the ticks that passed, the sweep catching up for them (a
  // gap of 14 − divisor ticks or more: one pass clears every expired cell).
  Status advance(uint64_t now) noexcept {
    if (!cfg_.window.is_time()) return Errc::ok;
    // The ticks that ended by now (core/window.hpp's schedule: the first call
    // anchors it; time going backwards changes nothing).
    auto passed = h_->ticks.epochs_elapsed(now);
    if (!passed) return passed.error();
    const uint64_t ticks = *passed;
    if (ticks == 0) return Errc::ok;
    if (ticks < ClockConfig::kSlots - 1 - cfg_.divisor) {
      for (uint64_t t = 0; t < ticks; ++t) tick();
      return Errc::ok;
    }
    // Expire, before the clock jumps, every cell the jump would age past
    // divisor ticks (all of them once it is a whole window).
    for (uint64_t i = 0; i < cfg_.cells; ++i) {
      const uint32_t v = cell(i);
      if (v != 0 && (ticks > cfg_.divisor || elapsed(v) + ticks > cfg_.divisor)) put(i, 0);
    }
    h_->slot = static_cast<uint32_t>((h_->slot - 1 + ticks % ClockConfig::kSlots) % ClockConfig::kSlots + 1);
    return Errc::ok;
  }

  // Whether h was inserted within the window (or is a false positive).
  bool contains(KeyHash h) const noexcept {
    for (uint32_t i = 0; i < cfg_.k; ++i)
      if (expired(cell(probe(h, i, cfg_.cells)))) return false;
    return true;
  }

  // Records h as inserted now.
  void insert(KeyHash h) noexcept {
    if (!cfg_.window.is_time()) {
      // A count window's tick ends before the insertion that opens the next
      // one (as an epoch rotates before its first insertion): until then the
      // full tick's keys are live, the state the model describes.
      if (h_->ticks.rotate_before_insert()) h_->slot = h_->slot % ClockConfig::kSlots + 1;
      sweep(math::ceil_div(cfg_.sweep_per_tick(), cfg_.tick_length()));  // spread over the tick
    }
    for (uint32_t i = 0; i < cfg_.k; ++i) put(probe(h, i, cfg_.cells), h_->slot);
    ++h_->insertions;
  }
  // The post's lazy reset: an insertion clears the expired cells it meets
  // (the key's own are about to be rewritten anyway, so only the verdict
  // reads them); contains() stays read-only.
  bool test_and_insert(KeyHash h) noexcept {
    const bool seen = contains(h);
    insert(h);
    return seen;
  }
  // Prefetches the lines h will touch first (the bulk forms call it ahead).
  void prefetch(KeyHash h) const noexcept { bits::prefetch_read(words_ + probe(h, 0, cfg_.cells) / 16); }

  // Whether `image`, a saved copy of this filter's arena, holds a state this
  // filter can be in: dedup/snapshot.hpp asks before a load, since a crafted
  // image passes its checksum. Any cells will do; the clock must be one of
  // its slots 1..15, the sweep's cursor a cell, the ticks this filter's schedule.
  bool accepts_image(const ArenaImage& image) const noexcept {
    Header s;
    return image.read(h_, s) && s.slot >= 1 && s.slot < ClockConfig::kSlots + 1 && s.cursor < cfg_.cells &&
           h_->ticks.accepts(s.ticks);
  }

  const ClockConfig& config() const noexcept { return cfg_; }  // the configuration it was created with
  uint64_t insertions() const noexcept { return h_->insertions; }  // insertions so far
  // Set bits (non-zero cells) over all of them (control plane: reads the whole filter).
  double fill_ratio() const noexcept {
    uint64_t live = 0;
    for (uint64_t i = 0; i < cfg_.cells; ++i) live += !expired(cell(i));
    return static_cast<double>(live) / static_cast<double>(cfg_.cells);
  }
  // The clock's slot (1..15), for tests.
  uint32_t slot() const noexcept { return h_->slot; }

 private:
  struct Header {
    uint32_t slot = 1;       // current clock slot, 1..15
    EpochSchedule ticks{};   // insertions (count) or ticks (time) per clock tick: core/window.hpp
    uint64_t cursor = 0;
    uint64_t insertions = 0;
  };

  uint32_t elapsed(uint32_t v) const noexcept {
    return (h_->slot + ClockConfig::kSlots - v) % ClockConfig::kSlots;
  }
  bool expired(uint32_t v) const noexcept { return v == 0 || elapsed(v) > cfg_.divisor; }
  void tick() noexcept {
    sweep(cfg_.sweep_per_tick());
    h_->slot = h_->slot % ClockConfig::kSlots + 1;
  }
  // Resets expired cells under the cursor (the fix for the wrap-round).
  void sweep(uint64_t n) noexcept {
    for (uint64_t i = 0; i < n; ++i) {
      const uint32_t v = cell(h_->cursor);
      if (v != 0 && elapsed(v) > cfg_.divisor) put(h_->cursor, 0);
      if (++h_->cursor == cfg_.cells) h_->cursor = 0;
    }
  }
  uint32_t cell(uint64_t i) const noexcept { return static_cast<uint32_t>(words_[i / 16] >> (i % 16 * 4)) & 15u; }
  void put(uint64_t i, uint32_t v) noexcept {
    uint64_t& w = words_[i / 16];
    const uint32_t s = static_cast<uint32_t>(i % 16 * 4);
    w = (w & ~(uint64_t{15} << s)) | (uint64_t{v} << s);
  }

  ClockConfig cfg_{};
  Header* h_ = nullptr;
  uint64_t* words_ = nullptr;
};

}  // namespace agebloom
