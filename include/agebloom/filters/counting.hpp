// Counting Bloom filter with exact window deletion: the first baseline of
// the evaluation in Alpay & Sarıoğlu, "Guarded Epoch Bloom Filters for
// Sliding-Window Membership", §3 (the structures compared; §4, Table 1, its
// figures).
//
// m 4-bit counters, sixteen to a uint64_t word; a key increments its k
// counters (probe(h, i, m), scattered double hashing) and is present while all
// k are non-zero. Expiry is exact: a ring in the arena keeps the KeyHash of
// every live insertion, oldest first, and when one leaves the window its k
// counters are decremented again.
//   - count window W: the ring holds the last W hashes; the insertion that
//     would make it W + 1 first pops the oldest;
//   - time window T: each entry also keeps its tick (the last `now` given to
//     advance()); advance(now) pops every entry with now - tick > T.
// A key therefore answers false as soon as its last copy leaves the window,
// unless other live keys cover its k counters (an ordinary false positive).
//
// Two things trade exactness for never answering a live key false:
//   - a counter that reaches 15 saturates and is never decremented again
//     (its true count is unknown from then on): it is *sticky*, so stale
//     positives become possible, false negatives never. Insertions that leave
//     a counter saturated are counted (saturated_insertions());
//   - a time window's ring has a fixed number of slots (`ring`, by default
//     the capacity: the budget of expected insertions per T). An insertion
//     that finds it full of live entries still increments its counters but
//     cannot be recorded, so they are never decremented: sticky again,
//     counted in ring_overflows().
// A count window's ring never overflows: it holds exactly W.
//
// Sizing: m = ⌈-n ln f / ln²2⌉ counters and k = round(ln2 · m/n), clamped to
// 1..32, with n = capacity; the model is the plain Bloom filter's FP at load n
// (bloom_math::fpr). The counters only have to be non-zero where a Bloom
// filter's bits would be set, so the model is the same. At the optimal k a
// counter holds Poisson(ln 2) keys: it reaches 15 with probability ~10^-15.
//
// Memory, honestly: the ring costs 128 bits per slot (192 in a time window,
// with its tick), far more than the 4·m/n ≈ 38 bits per item of counters at
// f = 1%. bits_per_item() counts every byte create() carves (header, counters,
// ring, ticks). The paper's equal-memory comparison charges the counters alone
// (14 bits per live item buy 3.5 counters per item there, hence its 0.191 FPR);
// counter_bits_per_item() gives that figure.
//
// State: a header, the counter words, the ring (and its ticks), all carved
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
#include "agebloom/core/math.hpp"
#include "agebloom/core/window.hpp"
#include "agebloom/filters/bulk_ops.hpp"

namespace agebloom {

// The header a counting filter carves first in its arena. Public and plain,
// like EpochRingHeader, so that an arena image can be read elsewhere.
struct CountingHeader {
  uint64_t insertions;  // total insertions so far
  uint64_t head;                  // ring slot of the oldest live entry
  uint64_t size;                  // live entries in the ring
  uint64_t last_now;              // time windows: latest tick seen (entries are stamped with it)
  uint64_t saturated_insertions;  // insertions that left one of their counters at 15
  uint64_t ring_overflows;        // time windows: insertions the full ring could not record
  bool started;                   // time windows: the first advance() anchors the clock
};

// CountingConfig::for_fpr's named parameters, read at the call site:
//   CountingConfig::for_fpr(window, fpr, {.capacity = ...})
// (every structure's own, so a knob of one cannot be passed to another).
struct CountingSizing {
  uint64_t capacity = 0;  // expected insertions per time window
};

// The counting filter's shape: what for_fpr() returns and
// CountingFilter::create() builds.
struct CountingConfig {
  Window window = Window::count(0);  // the window kept (count or time)
  uint64_t capacity = 0;  // expected insertions per window: the model's load n
                          // (defaults to W for count windows; required for time windows)
  uint32_t k = 0;         // counters per key
  uint64_t cells = 0;     // m: 4-bit counters
  uint64_t ring = 0;      // hash-ring slots; 0: the window's own (W for a count window,
                          // capacity for a time window). A count window needs at least W
                          // (Errc::ring_too_small); a time window's may exceed the capacity
                          // to absorb bursts without overflowing, never fall below it.

  static constexpr uint32_t kMaxK = 32;  // most hash functions per key
  static constexpr uint32_t kCellBits = 4;  // bits per counter
  static constexpr uint32_t kCellsPerWord = 64 / kCellBits;  // counters per 64-bit word
  static constexpr uint32_t kSaturated = (1u << kCellBits) - 1;  // 15: sticky

  constexpr bool operator==(const CountingConfig&) const = default;  // field by field

  // The model's load: capacity, or W for a count window that left it 0.
  constexpr uint64_t load() const noexcept { return capacity ? capacity : (window.is_time() ? 0 : window.span); }
  constexpr uint64_t ring_slots() const noexcept { return ring ? ring : (window.is_time() ? capacity : window.span); }  // ring entries: one KeyHash per live insertion (default: the window's)
  // Bits one ring slot costs: a KeyHash, plus its tick in a time window.
  constexpr uint64_t slot_bits() const noexcept { return window.is_time() ? 192 : 128; }
  constexpr uint64_t words() const noexcept { return math::ceil_div(cells, kCellsPerWord); }  // 64-bit words of cells

  // The Errc of the first field out of range, or ok.
  constexpr Status validate() const noexcept {
    if (Status s = window.validate(); !s) return s;
    if (window.is_time() && capacity == 0) return Errc::capacity_zero;
    if (k == 0 || k > kMaxK) return Errc::k_out_of_range;
    if (cells < kCellsPerWord) return Errc::budget_too_small;  // at least one word of counters
    // Checked before any product, so none of the sizes below overflows.
    if (cells > kMaxStructureBits / kCellBits) return Errc::too_large;
    if ((!window.is_time() && window.span > kMaxStructureBits) || capacity > kMaxStructureBits ||
        ring > kMaxStructureBits)
      return Errc::too_large;
    if (ring_slots() < (window.is_time() ? capacity : window.span)) return Errc::ring_too_small;
    if (ring_slots() > (kMaxStructureBits - cells * kCellBits) / slot_bits()) return Errc::too_large;
    return Errc::ok;
  }

  // The plain Bloom filter's FP at load n: a counter is non-zero exactly
  // where a Bloom filter holding the live keys would have its bit set.
  constexpr double model_fpr() const noexcept {
    return bloom_math::fpr(static_cast<double>(cells), static_cast<double>(load()), k);
  }

  // Every byte create() carves, per window item: header, counters, ring (and
  // ticks), each rounded to its cache line as the arena rounds it.
  constexpr double bits_per_item() const noexcept {
    const uint64_t n = load();
    return static_cast<double>(carved_bytes()) * 8 / static_cast<double>(n ? n : 1);
  }
  // The counters alone per item (the paper's equal-memory framing).
  constexpr double counter_bits_per_item() const noexcept {
    const uint64_t n = load();
    return static_cast<double>(cells * kCellBits) / static_cast<double>(n ? n : 1);
  }

  // Bytes create() carves: the header, the counters, the ring (and its ticks
  // in a time window), each cache-line aligned (what bits_per_item() counts).
  constexpr uint64_t carved_bytes() const noexcept {
    uint64_t b = align_up(sizeof(CountingHeader), kCacheLine) + align_up(words() * 8, kCacheLine) +
                 align_up(ring_slots() * 16, kCacheLine);
    if (window.is_time()) b += align_up(ring_slots() * 8, kCacheLine);
    return b;
  }

  // Fewest counters whose model FP is at most `fpr`: start from the plain
  // Bloom filter's m = ⌈-n ln f / ln²2⌉ with k = round(ln2·m/n) (clamped to
  // 1..32). Rounding k leaves the model a hair above f at some targets (at
  // f = 1%: k = 7 for m/n = 9.585, FP 0.01003): then m grows in 2% steps until
  // the model meets f, and a bisection finds the smallest m that does. At most
  // 400 steps (a factor 2750): a target that k <= 32 cannot reach within
  // that, or within kMaxStructureBits with the ring, is Errc::too_large.
  static constexpr Expected<CountingConfig> for_fpr(Window window, double fpr, CountingSizing sizing = {}) noexcept {
    const uint64_t capacity = sizing.capacity;
    if (!(fpr > 0.0 && fpr < 1.0)) return Errc::fpr_out_of_range;
    if (Status s = window.validate(); !s) return s;
    CountingConfig c;
    c.window = window;
    c.capacity = capacity ? capacity : (window.is_time() ? 0 : window.span);
    if (c.capacity == 0) return Errc::capacity_zero;
    c.k = 1;
    c.cells = kCellsPerWord;
    if (Status s = c.validate(); !s) return s;  // the ring alone may be too large
    const double n = static_cast<double>(c.capacity);
    const uint64_t ring_bits = c.ring_slots() * c.slot_bits();
    const uint64_t max_cells = (kMaxStructureBits - ring_bits) / kCellBits;
    auto meets = [&](uint64_t cells) {
      c.cells = cells;
      c.k = bloom_math::optimal_k(static_cast<double>(cells), n, kMaxK);
      return c.model_fpr() <= fpr;
    };
    double m = bloom_math::bits_for(n, fpr);
    uint64_t fails = kCellsPerWord - 1;
    for (int step = 0; step < 400; ++step, m *= 1.02) {
      if (!(m <= static_cast<double>(max_cells))) return Errc::too_large;
      uint64_t cells = math::ceil_to_u64(m);
      if (cells < kCellsPerWord) cells = kCellsPerWord;
      if (cells <= fails) continue;
      if (!meets(cells)) {
        fails = cells;
        continue;
      }
      // The first m tried is the real-valued optimum, which no integer k
      // beats: if it meets the target it is the answer (up to rounding).
      if (step > 0) meets(math::bisect_smallest(fails, cells, meets));
      return c;
    }
    return Errc::too_large;
  }
};

// The counting filter over an arena: a handle; its counters and hash ring
// live in the arena.
class CountingFilter : public BulkOps<CountingFilter> {
 public:
  constexpr CountingFilter() noexcept = default;  // empty: create() one

  // The arena create() carves for c, from any 64-byte aligned base (c's error if invalid).
  static constexpr Expected<size_t> bytes_needed(const CountingConfig& c) noexcept {
    if (Status s = c.validate(); !s) return s;
    ArenaLayout l;
    l.add(sizeof(State)).add(c.words() * sizeof(uint64_t)).add(c.ring_slots() * sizeof(KeyHash));
    if (c.window.is_time()) l.add(c.ring_slots() * sizeof(uint64_t));
    return l.bytes();
  }

  // Validates `c`, carves the state from `arena` and zeroes the header and
  // the counters (ring slots are written before they are read). On error the
  // arena is left as it was.
  static Expected<CountingFilter> create(const CountingConfig& c, Arena& arena) noexcept {
    if (Status s = c.validate(); !s) return s;
    const size_t mark = arena.used();
    auto state = arena.carve_array<State>(1);
    auto words = arena.carve_array<uint64_t>(c.words());
    auto ring = arena.carve_array<KeyHash>(c.ring_slots());
    Expected<uint64_t*> ticks = static_cast<uint64_t*>(nullptr);
    if (c.window.is_time()) ticks = arena.carve_array<uint64_t>(c.ring_slots());
    if (!state || !words || !ring || !ticks) {
      arena.rewind(mark);
      return Errc::arena_too_small;
    }
    CountingFilter f;
    f.cfg_ = c;
    f.state_ = *state;
    f.words_ = *words;
    f.ring_ = *ring;
    f.ticks_ = *ticks;
    f.slots_ = c.ring_slots();
    *f.state_ = State{};
    bits::clear(f.words_, c.words());
    return f;
  }

  // Time windows: pops (and decrements the counters of) every entry with
  // now - tick > T; the work is that of the entries that expired, at most
  // the ring. The first call anchors the clock: entries inserted before it
  // are stamped with its tick. `now` below the last tick seen is
  // Errc::time_went_backwards and changes nothing. Count windows: no-op.
  Status advance(uint64_t now) noexcept {
    if (!cfg_.window.is_time()) return Errc::ok;
    State& s = *state_;
    if (!s.started) {
      s.started = true;
      for (uint64_t i = 0; i < s.size; ++i) ticks_[slot(i)] = now;
    } else if (now < s.last_now) {
      return Errc::time_went_backwards;
    }
    s.last_now = now;
    while (s.size != 0 && now - ticks_[s.head] > cfg_.window.span) pop();
    return Errc::ok;
  }

  // Whether h was inserted within the window (or is a false positive).
  bool contains(KeyHash h) const noexcept {
    uint64_t pos[CountingConfig::kMaxK];
    positions(h, pos);
    return all_nonzero(pos);
  }

  // Records h as inserted now.
  void insert(KeyHash h) noexcept { (void)insert_impl<false>(h); }

  // The dedup primitive: one pass, one verdict. Equal to
  // `bool v = contains(h); insert(h); return v;`.
  bool test_and_insert(KeyHash h) noexcept { return insert_impl<true>(h); }

  // Prefetches the word of the key's first counter (the bulk forms call it ahead).
  void prefetch(KeyHash h) const noexcept {
    bits::prefetch_read(words_ + probe(h, 0, cfg_.cells) / CountingConfig::kCellsPerWord);
  }

  // Whether `image`, a saved copy of this filter's arena, holds a state this
  // filter can be in: dedup/snapshot.hpp asks before a load, since a crafted
  // image passes its checksum. Any counters will do; the ring's head must be
  // one of its slots and its live entries no more than it (a count window's
  // no more than the window).
  bool accepts_image(const ArenaImage& image) const noexcept {
    State s;
    if (!image.read(state_, s) || !is_flag(s.started)) return false;
    const uint64_t most = cfg_.window.is_time() || cfg_.window.span > slots_ ? slots_ : cfg_.window.span;
    return s.head < slots_ && s.size <= most;
  }

  const CountingConfig& config() const noexcept { return cfg_; }  // the configuration it was created with
  uint64_t insertions() const noexcept { return state_->insertions; }  // insertions so far
  uint64_t saturated_insertions() const noexcept { return state_->saturated_insertions; }  // insertions that found a counter at its maximum
  uint64_t ring_overflows() const noexcept { return state_->ring_overflows; }  // insertions the hash ring could not hold
  uint64_t live_entries() const noexcept { return state_->size; }  // entries the ring holds
  // Counter i (0..cells), for inspection and tests.
  uint32_t counter(uint64_t i) const noexcept { return get(i); }
  size_t state_bytes() const noexcept { return static_cast<size_t>(cfg_.carved_bytes()); }  // the state in the arena
  // Fraction of non-zero counters (control plane: O(m)).
  double fill_ratio() const noexcept {
    uint64_t n = 0;
    for (uint64_t w = 0; w < cfg_.words(); ++w) n += static_cast<uint64_t>(__builtin_popcountll(nonzero(words_[w])));
    return static_cast<double>(n) / static_cast<double>(cfg_.cells);
  }

 private:
  using State = CountingHeader;
  static constexpr uint64_t kLowBits = 0x1111'1111'1111'1111ULL;  // bit 0 of every counter

  // Bit 0 of each counter of `w` set iff that counter is non-zero.
  static constexpr uint64_t nonzero(uint64_t w) noexcept {
    w |= w >> 1;
    w |= w >> 2;
    return w & kLowBits;
  }

  uint32_t get(uint64_t i) const noexcept {
    return static_cast<uint32_t>(words_[i / CountingConfig::kCellsPerWord] >> (i % CountingConfig::kCellsPerWord * 4)) &
           CountingConfig::kSaturated;
  }
  // +1, saturating: true if the counter is left at 15.
  bool increment(uint64_t i) noexcept {
    const uint32_t v = get(i);
    if (v == CountingConfig::kSaturated) return true;
    words_[i / CountingConfig::kCellsPerWord] += uint64_t{1} << (i % CountingConfig::kCellsPerWord * 4);
    return v + 1 == CountingConfig::kSaturated;
  }
  // -1, except on a saturated (sticky) counter; 0 cannot occur for a
  // recorded entry, and is left alone rather than wrapped.
  void decrement(uint64_t i) noexcept {
    const uint32_t v = get(i);
    if (v == 0 || v == CountingConfig::kSaturated) return;
    words_[i / CountingConfig::kCellsPerWord] -= uint64_t{1} << (i % CountingConfig::kCellsPerWord * 4);
  }

  void positions(KeyHash h, uint64_t* pos) const noexcept {
    for (uint32_t i = 0; i < cfg_.k; ++i) pos[i] = probe(h, i, cfg_.cells);
  }
  bool all_nonzero(const uint64_t* pos) const noexcept {
    for (uint32_t i = 0; i < cfg_.k; ++i)
      if (get(pos[i]) == 0) return false;
    return true;
  }

  // The ring slot of the i-th oldest entry.
  uint64_t slot(uint64_t i) const noexcept {
    const uint64_t j = state_->head + i;
    return j >= slots_ ? j - slots_ : j;
  }

  // The oldest entry leaves the window: its counters go down again.
  void pop() noexcept {
    uint64_t pos[CountingConfig::kMaxK];
    positions(ring_[state_->head], pos);
    for (uint32_t i = 0; i < cfg_.k; ++i) decrement(pos[i]);
    state_->head = slot(1);
    --state_->size;
  }

  // Positions are computed once and serve the test and the increments. The
  // verdict is taken before a count window pops its oldest entry, so a key
  // exactly W insertions old still answers true; the pop comes before the
  // increments, so a counter at 14 that loses and gains one stays exact.
  template <bool Test>
  bool insert_impl(KeyHash h) noexcept {
    uint64_t pos[CountingConfig::kMaxK];
    positions(h, pos);
    bool seen = false;
    if constexpr (Test) seen = all_nonzero(pos);
    State& s = *state_;
    if (!cfg_.window.is_time() && s.size == cfg_.window.span) pop();
    bool saturated = false;
    for (uint32_t i = 0; i < cfg_.k; ++i) saturated |= increment(pos[i]);
    s.saturated_insertions += saturated;
    ++s.insertions;
    if (s.size == slots_) {  // time window, ring full of live entries: sticky
      ++s.ring_overflows;
      return seen;
    }
    const uint64_t at = slot(s.size);
    ring_[at] = h;
    if (ticks_) ticks_[at] = s.last_now;
    ++s.size;
    return seen;
  }

  CountingConfig cfg_{};
  State* state_ = nullptr;
  uint64_t* words_ = nullptr;
  KeyHash* ring_ = nullptr;
  uint64_t* ticks_ = nullptr;  // time windows only
  uint64_t slots_ = 0;
};

}  // namespace agebloom
