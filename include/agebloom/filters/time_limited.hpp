// Time-limited Bloom filter (Rodrigues, Shtul, Baquero, Almeida, "Time-limited
// Bloom Filter", ACM SAC 2023 and its extended version): an age-partitioned
// filter (Age-Partitioned Bloom Filters, Sec. 5) whose slices are stamped with
// time, so that it keeps "every key of the last T ticks" at whatever rate keys
// arrive. The paper's equations were lost in our copy; the algorithm below is
// the one docs/ALGORITHMS.md restates ("Time-limited Bloom filter").
//
// Slices, newest first (logical 0); the k newest take every insertion; slice i
// has m_i bits, c_i insertions and, once it has left the insertion window, the
// tick of its last insertion ts_i. cap(i) = ⌊ln2 · m_i⌋: the insertions that
// bring it to half full.
//   - Shift counter (Sec. 6.2, Eq. 4-5): after a shift, g = min over the k
//     active slices of ⌈(cap(i) − c_i)/(k − i)⌉; every insertion decrements it;
//     the insertion after it reached 0 shifts first. A generation also ends
//     after T/l ticks (not in the paper: it bounds how long keys of a
//     generation that a rate drop made long stay in the active slices).
//   - Shift (Sec. 6.1, 6.3): the target generation from the measured rate,
//     g* = ⌈g·(T/l)/Δt⌉ + 1; slices older than T retire (never below k+l);
//     the tail is kept when still live and non-empty (the filter grows by one
//     slice), else recycled; the new slice 0 is sized so that it is half full
//     as it leaves the insertion window, allowing for the older active slices
//     that force the next generations shorter (Eq. 7-8); its hash function is
//     slice 1's minus one (mod k), so the k active slices use k distinct ones.
//   - Query (Sec. 6.4): Algorithm 1's jump-back scan from slice (count − k);
//     a slice older than T is a miss, so keys expire with no insertion at all.
//     The active slices' tick is the last insertion's (each insertion writes
//     them all); an idle gap longer than T empties the filter.
// Count windows run the same algorithm on a clock that is the insertion count.
//
// Memory. Slices come from a slab of words inside the arena, sized at
// creation by a budget (total bits and a slice-table size). Slices are born
// at the head and retire from the tail, so the slab is a circular FIFO: no
// fragmentation, nothing allocated on the data path. When a shift cannot get
// its new slice (the budget or the table is full of live slices), the shift
// is skipped and its insertion goes into the active slices beyond their
// design capacity: every key of the last T ticks is still reported (no false
// negative), the FPR rises above the model and saturations() counts the
// skipped shifts; the next shifts retry as old slices expire.
//
// The reference implementation's defects, avoided: ticks are full-precision
// caller units (no millisecond truncation), Δt = 0 is one tick, g >= 1, the
// capacity arithmetic is signed, a recycled slice is cleared whole, and
// nothing is allocated after create().
#pragma once

#include <cstddef>
#include <cstdint>

#include "agebloom/core/arena.hpp"
#include "agebloom/core/bits.hpp"
#include "agebloom/core/error.hpp"
#include "agebloom/core/hash.hpp"
#include "agebloom/core/math.hpp"
#include "agebloom/core/window.hpp"
#include "agebloom/filters/apbf.hpp"
#include "agebloom/filters/bulk_ops.hpp"

namespace agebloom {

// TimeLimitedConfig::for_fpr's named parameters, read at the call site:
//   TimeLimitedConfig::for_fpr(window, fpr, {.capacity = ...})
// (every structure's own, so a knob of one cannot be passed to another).
struct TimeLimitedSizing {
  uint64_t capacity = 0;  // expected insertions per window: the first generation
  uint64_t budget_bits = 0;  // memory budget in bits; 0: 16 times the steady memory
  uint32_t max_slices = 0;  // slice table size; 0: derived from the budget
};

// The time-limited filter's shape: what its sizing returns and
// TimeLimitedFilter::create() builds.
struct TimeLimitedConfig {
  Window window = Window::count(0);  // the window kept (count or time)
  uint32_t k = 0;            // active slices (hash functions)
  uint32_t l = 0;            // generations per window; k + l slices at steady rate
  uint64_t capacity = 0;     // expected insertions per window: the initial generation (capacity / l)
  uint64_t budget_bits = 0;  // the slab: slice bits at most
  uint32_t max_slices = 0;   // the slice table

  static constexpr uint32_t kMaxK = 32;  // most hash functions per key
  static constexpr uint32_t kMaxSlices = 4096;  // most slices the table holds
  static constexpr uint64_t kDefaultCapacity = 10'000;  // insertions per window when the rate is unknown

  constexpr bool operator==(const TimeLimitedConfig&) const = default;  // field by field

  // The generation and slice size at `capacity` insertions per window: the
  // paper's steady state, g = capacity/l + 1, m = ⌈k·g/ln2⌉ in whole words.
  constexpr uint64_t steady_generation() const noexcept { return l ? capacity / l + 1 : 1; }
  constexpr uint64_t steady_slice_words() const noexcept {  // ⌈k·g/ln2⌉ bits in whole words
    const double m = static_cast<double>(k) * static_cast<double>(steady_generation()) / math::kLn2;
    const uint64_t words = bits::words_for(math::ceil_to_u64(m));
    return words < 1 ? 1 : words;
  }
  // Bits of the k + l slices at the steady state.
  constexpr uint64_t steady_bits() const noexcept { return (k + l) * steady_slice_words() * 64; }

  // The Errc of the first field out of range, or ok.
  constexpr Status validate() const noexcept {
    if (Status s = window.validate(); !s) return s;
    if (k == 0 || k > kMaxK) return Errc::k_out_of_range;
    if (l == 0 || l > ApbfConfig::kMaxL) return Errc::l_out_of_range;
    if (capacity < l) return capacity == 0 ? Errc::capacity_zero : Errc::capacity_too_small;
    if (max_slices < k + l || max_slices > kMaxSlices) return Errc::segments_out_of_range;
    if (budget_bits > kMaxStructureBits) return Errc::too_large;
    if (steady_slice_words() > kMaxStructureBits / 64 / (k + l)) return Errc::too_large;
    if (budget_bits < steady_bits()) return Errc::slice_budget_too_small;
    return Errc::ok;
  }

  // At a steady rate: the APBF recurrence (Age-Partitioned Bloom Filters,
  // Sec. 5.3) over k + l slices at the design point the sizing aims at: a
  // slice is half full (cap = ln2·m insertions) as it leaves the active
  // slices, so at the end of a generation active slice i is 1 − 2^{-(i+1)/k}
  // full and every older one 1/2.
  constexpr double model_fpr() const noexcept {
    double fill[kMaxK + ApbfConfig::kMaxL];
    for (uint32_t i = 0; i < k + l; ++i) fill[i] = i < k ? 1.0 - math::exp(-math::kLn2 * (i + 1) / k) : 0.5;
    return ApbfConfig::scan_fpr(k, l, fill);
  }
  // Bits per window item: the memory the filter takes (its slab, the whole
  // budget: a fixed arena) over `capacity` insertions per window. The planner
  // ranks structures on it, so the budget's headroom counts in full.
  constexpr double bits_per_item() const noexcept {
    return static_cast<double>(budget_bits) / static_cast<double>(capacity ? capacity : 1);
  }
  // The slab bits in use at a steady rate of `capacity` insertions per window.
  constexpr double steady_bits_per_item() const noexcept {
    return static_cast<double>(steady_bits()) / static_cast<double>(capacity ? capacity : 1);
  }

  // The reference implementation's (k, l) for FP 10^-e (e = 1..5; an FPR
  // between rows takes the stricter one) at a level that grows with the
  // capacity (level = ⌊log10 capacity⌋, 0..5): capacity 1000 at 1% is
  // k = 10, l = 25, 35 slices. Below 10^-5 the published APBF
  // parameterisation (k = ⌈log2 1/fpr⌉, the largest l <= 100 whose design FP
  // meets it). The table's design FP can sit a hair above its row (1.03% for
  // (10, 25)); the registry's planner hook trims l until the model meets the
  // target.
  static constexpr Expected<TimeLimitedConfig> for_fpr(Window window, double fpr, TimeLimitedSizing sizing = {}) noexcept {
    const uint64_t capacity = sizing.capacity;
    const uint64_t budget_bits = sizing.budget_bits;
    const uint32_t max_slices = sizing.max_slices;
    if (Status s = window.validate(); !s) return s;
    if (!(fpr > 0.0 && fpr < 1.0)) return Errc::fpr_out_of_range;
    TimeLimitedConfig c;
    c.window = window;
    c.capacity = capacity ? capacity : (window.is_time() ? kDefaultCapacity : window.span);
    constexpr uint8_t kTable[5][6][2] = {
        {{4, 3}, {5, 7}, {6, 14}, {7, 28}, {8, 56}, {8, 56}},
        {{7, 5}, {8, 8}, {9, 14}, {10, 25}, {11, 46}, {12, 88}},
        {{10, 7}, {11, 9}, {12, 14}, {13, 23}, {14, 40}, {15, 74}},
        {{14, 11}, {15, 15}, {16, 22}, {17, 36}, {18, 63}, {19, 117}},
        {{17, 13}, {18, 16}, {19, 22}, {20, 33}, {21, 54}, {22, 95}},
    };
    uint32_t level = 0;
    for (uint64_t n = c.capacity; n >= 10 && level < 5; n /= 10) ++level;
    // An FPR between rows takes the stricter row (2% is sized as 1%).
    const double e = -math::ln(fpr) / math::ln(10.0);
    const uint32_t row = e <= 1.0 ? 1 : static_cast<uint32_t>(math::ceil_to_u64(e - 1e-9));
    if (row <= 5) {
      c.k = kTable[row - 1][level][0];
      c.l = kTable[row - 1][level][1];
    } else {
      auto p = ApbfConfig::for_fpr(Window::count(c.capacity), fpr, {.capacity = c.capacity});
      if (!p) return p.code();
      c.k = p->k;
      c.l = p->l;
    }
    if (c.l > 100) c.l = 100;  // the published range; the table's 117 is the exception
    return with_shape(window, c.k, c.l, capacity, budget_bits, max_slices);
  }

  // Explicit (k, l): the capacity (default as in for_fpr), a slice table of
  // 4(k + l) entries and a budget unless given (below).
  static constexpr Expected<TimeLimitedConfig> with_shape(Window window, uint32_t k, uint32_t l, uint64_t capacity = 0,
                                                          uint64_t budget_bits = 0, uint32_t max_slices = 0) noexcept {
    if (Status s = window.validate(); !s) return s;
    TimeLimitedConfig c;
    c.window = window;
    c.k = k;
    c.l = l;
    c.capacity = capacity ? capacity : (window.is_time() ? kDefaultCapacity : window.span);
    if (k == 0 || k > kMaxK) return Errc::k_out_of_range;
    if (l == 0 || l > ApbfConfig::kMaxL) return Errc::l_out_of_range;
    if (capacity == 0 && c.capacity < l) c.capacity = l;  // a default never falls below one per generation
    c.max_slices = max_slices ? max_slices : (4 * (c.k + c.l) < kMaxSlices ? 4 * (c.k + c.l) : kMaxSlices);
    // Default budget: a time window gets room for the rate to grow 16-fold
    // over `capacity`; a count window's clock is the insertion count, so its
    // rate never changes and twice the steady memory covers the growth.
    const uint64_t headroom = window.is_time() ? 16 : 2;
    if (c.steady_slice_words() > kMaxStructureBits / 64 / (c.k + c.l) / headroom) return Errc::too_large;
    c.budget_bits = budget_bits ? budget_bits : headroom * c.steady_bits();
    if (Status s = c.validate(); !s) return s;
    return c;
  }
};

// The time-limited filter over an arena: a handle; its slice table and
// slices live in the arena, within the budget.
class TimeLimitedFilter : public BulkOps<TimeLimitedFilter, 0> {
 public:
  constexpr TimeLimitedFilter() noexcept = default;  // empty: create() one

  // The arena create() carves for c, from any 64-byte aligned base (c's error if invalid).
  static constexpr Expected<size_t> bytes_needed(const TimeLimitedConfig& c) noexcept {
    if (Status s = c.validate(); !s) return s;
    return ArenaLayout{}.add(sizeof(Header)).add(sizeof(Slice) * c.max_slices).add(c.budget_bits / 64 * 8).bytes();
  }

  // Validates `c`, carves the header, the slice table and the slab from
  // `arena`, and lays out k + l empty slices of the steady size. On error the
  // arena is left as it was.
  static Expected<TimeLimitedFilter> create(const TimeLimitedConfig& c, Arena& arena) noexcept {
    if (Status s = c.validate(); !s) return s;
    const size_t mark = arena.used();
    auto header = arena.carve_array<Header>(1);
    auto table = arena.carve_array<Slice>(c.max_slices);
    auto slab = arena.carve_array<uint64_t>(c.budget_bits / 64);
    if (!header || !table || !slab) {
      arena.rewind(mark);
      return Errc::arena_too_small;
    }
    TimeLimitedFilter f;
    f.cfg_ = c;
    f.h_ = *header;
    f.table_ = *table;
    f.slab_ = *slab;
    f.slab_words_ = c.budget_bits / 64;
    *f.h_ = Header{};
    f.h_->generation_target = c.steady_generation();
    // Oldest first, so that each new slice is the newest: logical i has hash
    // function i mod k, and slice 0's is slice 1's minus one as at a shift.
    const uint64_t words = c.steady_slice_words();
    for (uint32_t n = c.k + c.l; n-- > 0;) {
      const uint64_t off = f.allocate(words);
      f.push_newest(off, words, n % c.k);
    }
    f.h_->counter = f.shift_counter();
    return f;
  }

  // Time windows: the clock of the next operations (non-decreasing); an idle
  // gap longer than T empties the filter. Count windows: no-op.
  Status advance(uint64_t now) noexcept {
    if (!cfg_.window.is_time()) return Errc::ok;
    if (h_->started && now < h_->now) return Errc::time_went_backwards;
    h_->started = true;
    h_->now = now;
    if (h_->inserted && now - h_->last_insert > cfg_.window.span) expire_all();
    return Errc::ok;
  }

  // Whether h was inserted within the window (or is a false positive).
  bool contains(KeyHash h) const noexcept {
    const uint64_t now = clock();
    return jump_back_scan(cfg_.k, h_->count - cfg_.k, [&](uint32_t i) {
      const Slice& s = logical(i);
      return live(s, now) && bits::test(slab_ + s.offset, probe(h, s.hash, s.words * 64));
    });
  }

  // Records h as inserted now.
  void insert(KeyHash h) noexcept { (void)insert_impl<false>(h); }
  // contains(h) then insert(h), in one pass: the dedup primitive.
  bool test_and_insert(KeyHash h) noexcept { return insert_impl<true>(h); }

  // Prefetches the lines h will touch first (the bulk forms call it ahead).
  void prefetch(KeyHash h) const noexcept {
    for (uint32_t i = 0; i < cfg_.k; ++i) {
      const Slice& s = logical(i);
      bits::prefetch_read(slab_ + s.offset + probe(h, s.hash, s.words * 64) / 64);
    }
  }

  // Whether `image`, a saved copy of this filter's arena, holds a state this
  // filter can be in: dedup/snapshot.hpp asks before a load, since a crafted
  // image passes its checksum. Any bits and counters will do; the slice
  // table must be what allocate() and release_oldest() leave: k + l to
  // max_slices slices, each of at least a word of one of the k hashes,
  // inside the slab and holding no more keys than were inserted, laid oldest to newest each after the last, wrapping to
  // word 0 at most once (the `wrapped` flag says whether, and the wrapped
  // run ends at or before the oldest's start), the slab's head after the
  // newest, the words in use their sum.
  bool accepts_image(const ArenaImage& image) const noexcept {
    Header h;
    if (!image.read(h_, h) || !is_flag(h.wrapped) || !is_flag(h.started) || !is_flag(h.inserted)) return false;
    // A slice's count is at most the insertions, which stay far below 2^62:
    // Eq. 7-8's room (capacity - count - forced) then cannot overflow.
    if (h.insertions >= uint64_t{1} << 62) return false;
    const uint32_t m = cfg_.max_slices;
    if (h.count < cfg_.k + cfg_.l || h.count > m || h.newest >= m) return false;
    uint64_t end = 0, in_use = 0, tail = 0;
    bool wraps = false;
    for (uint32_t i = h.count; i-- > 0;) {  // oldest first
      Slice s;
      if (!image.read(table_, s, (h.newest + i) % m)) return false;
      if (s.words == 0 || s.hash >= cfg_.k || s.offset >= slab_words_ || s.words > slab_words_ - s.offset ||
          s.count < 0 || static_cast<uint64_t>(s.count) > h.insertions)
        return false;
      if (i == h.count - 1) {
        tail = s.offset;
      } else if (s.offset != end) {
        if (s.offset != 0 || wraps) return false;  // a gap, or a second wrap
        wraps = true;
      }
      end = s.offset + s.words;
      in_use += s.words;
    }
    uint8_t wrapped;
    __builtin_memcpy(&wrapped, &h.wrapped, 1);
    return wraps == (wrapped != 0) && (!wraps || end <= tail) && h.slab_head == end && h.words_in_use == in_use;
  }

  const TimeLimitedConfig& config() const noexcept { return cfg_; }  // the configuration it was created with
  uint64_t insertions() const noexcept { return h_->insertions; }  // insertions so far
  // Stats: what the budget holds now and how the filter follows the rate.
  uint32_t slices() const noexcept { return h_->count; }
  uint64_t bits_in_use() const noexcept { return h_->words_in_use * 64; }  // bits of the budget its slices use now
  uint64_t generation_target() const noexcept { return h_->generation_target; }  // g*
  // Insertions per tick over the last completed generation (0 before one).
  double measured_rate() const noexcept { return h_->rate; }
  uint64_t shifts() const noexcept { return h_->shifts; }  // generation shifts so far
  // Insertions left in this generation: 0 = the next insertion shifts (the
  // end of a generation, where model_fpr() is defined).
  uint64_t insertions_before_shift() const noexcept { return h_->counter; }
  // Shifts skipped because the budget held only live slices (FPR above the model meanwhile).
  uint64_t saturations() const noexcept { return h_->saturations; }
  // Set bits (non-zero cells) over all of them (control plane: reads the whole filter).
  double fill_ratio() const noexcept {
    uint64_t set = 0;
    for (uint32_t i = 0; i < h_->count; ++i) set += bits::popcount(slab_ + logical(i).offset, logical(i).words);
    return h_->words_in_use ? static_cast<double>(set) / static_cast<double>(h_->words_in_use * 64) : 0.0;
  }

 private:
  struct Slice {
    uint64_t offset;  // first word in the slab
    uint64_t words;   // m_i / 64
    int64_t count;    // c_i: insertions
    uint64_t ts;      // tick of its last insertion, once stamped (it left the active slices)
    uint32_t hash;    // which of the k hash functions (probe index)
    uint32_t stamped;
  };
  struct Header {
    uint64_t now = 0;              // time windows: the latest tick advance() saw
    uint64_t insertions = 0;
    uint64_t last_insert = 0;      // tick (count windows: index) of the latest insertion
    uint64_t counter = 0;          // insertions left in this generation
    uint64_t gen_insertions = 0;   // insertions in this generation
    uint64_t gen_start = 0;        // tick of this generation's first insertion
    uint64_t last_stamp = 0;       // tick of the previous generation's last insertion (its stamp)
    uint64_t generation_target = 1;  // g*
    double rate = 0.0;             // insertions per tick, last completed generation
    uint64_t shifts = 0;
    uint64_t saturations = 0;
    uint64_t slab_head = 0;        // the next word a new slice would take
    uint64_t words_in_use = 0;
    uint32_t count = 0;            // slices
    uint32_t newest = 0;           // table entry of logical slice 0
    bool wrapped = false;          // the slab's used region wraps past its end
    bool started = false;          // advance() has been called
    bool inserted = false;         // an insertion happened since creation or the last idle expiry
  };

  uint64_t clock() const noexcept { return cfg_.window.is_time() ? h_->now : h_->insertions; }
  // A slice answers while its last insertion is within the window of `now`
  // (the active slices' last insertion is the filter's).
  bool live(const Slice& s, uint64_t now) const noexcept {
    const uint64_t ts = s.stamped ? s.ts : h_->last_insert;
    return now - ts <= cfg_.window.span || ts > now;
  }
  const Slice& logical(uint32_t i) const noexcept { return table_[(h_->newest + i) % cfg_.max_slices]; }
  Slice& logical(uint32_t i) noexcept { return table_[(h_->newest + i) % cfg_.max_slices]; }
  Slice& oldest() noexcept { return logical(h_->count - 1); }
  static int64_t capacity_of(const Slice& s) noexcept {
    return static_cast<int64_t>(math::kLn2 * static_cast<double>(s.words * 64));
  }

  template <bool Test>
  bool insert_impl(KeyHash h) noexcept {
    const uint64_t now = clock();
    const bool time_up = cfg_.window.is_time() && h_->gen_insertions > 0 &&
                         now - h_->gen_start >= math::ceil_div(cfg_.window.span, cfg_.l);
    // The verdict is the filter's before this insertion, its shift included:
    // test_and_insert(h) == contains(h) then insert(h).
    bool seen = false;
    if constexpr (Test) seen = contains(h);
    if (h_->counter == 0 || time_up) shift(now);
    for (uint32_t i = 0; i < cfg_.k; ++i) {
      Slice& s = logical(i);
      bits::set(slab_ + s.offset, probe(h, s.hash, s.words * 64));
      ++s.count;
    }
    if (h_->gen_insertions == 0) h_->gen_start = now;
    if (!h_->inserted && h_->shifts == 0) h_->last_stamp = now;
    ++h_->gen_insertions;
    if (h_->counter) --h_->counter;
    h_->last_insert = now;
    h_->inserted = true;
    ++h_->insertions;
    return seen;
  }

  // Algorithm of docs/ALGORITHMS.md, "Time-limited Bloom filter", steps 1-6.
  // Every decision is made before anything changes, so a shift the budget
  // cannot take leaves the filter as it was (and loses no live key).
  void shift(uint64_t now) noexcept {
    const uint32_t k = cfg_.k, l = cfg_.l;
    // 1. The generation just completed: g insertions over Δt ticks, from the
    //    previous generation's last insertion to this one's (at least 1).
    //    g* is capped where k + l slices of its size would fill the budget: a
    //    burst at one instant measures an unbounded rate.
    const uint64_t g = h_->gen_insertions;
    const uint64_t dt = h_->last_insert > h_->last_stamp ? h_->last_insert - h_->last_stamp : 1;
    const double span = static_cast<double>(cfg_.window.span);  // T, or W insertions on the count clock
    const uint64_t share = slab_words_ / (k + l);                // words a slice may take at most
    const double g_max = math::kLn2 * static_cast<double>(share * 64) / k;
    double target = static_cast<double>(math::ceil_to_u64(static_cast<double>(g) * (span / l) / static_cast<double>(dt))) + 1.0;
    if (g == 0) target = static_cast<double>(h_->generation_target);
    if (target > g_max) target = g_max;
    const uint64_t g_star = target < 1.0 ? 1 : static_cast<uint64_t>(target);
    // 2. Retire slices older than T from the tail, keeping at least k + l.
    while (h_->count > k + l && oldest().stamped && !live(oldest(), now)) release_oldest();
    // 3. Recycle the tail unless it is live and holds keys (then grow).
    const Slice& tail = oldest();
    const bool recycle = !(tail.count > 0 && live(tail, now));
    // 4. Size the new slice 0 (Eq. 7-8): the post-shift active slices j = 1..k-1
    //    are today's 0..k-2; generations they force shorter come first.
    int64_t forced = 0;
    uint32_t i = k;
    while (i > 1) {
      int64_t min_gen = INT64_MAX;
      uint32_t jmin = i - 1;
      for (uint32_t j = i - 1; j >= 1; --j) {
        const Slice& s = logical(j - 1);
        const int64_t room = capacity_of(s) - s.count - forced;
        const int64_t span_j = static_cast<int64_t>(i - j);
        int64_t gen = room <= 0 ? 0 : (room + span_j - 1) / span_j;
        if (gen <= min_gen) min_gen = gen, jmin = j;  // ties: the smallest j
      }
      if (static_cast<int64_t>(g_star) <= min_gen) break;
      forced += min_gen * static_cast<int64_t>(i - jmin);
      i = jmin;
    }
    const double want_bits = (static_cast<double>(forced) + static_cast<double>(i) * static_cast<double>(g_star)) / math::kLn2;
    uint64_t words = bits::words_for(math::ceil_to_u64(want_bits));
    const uint64_t min_words = bits::words_for(2 * k);
    if (words < min_words) words = min_words;
    if (words > share && share >= min_words) words = share;
    // 5. Room for it: the slab (after recycling the tail) and the table.
    const uint32_t after = h_->count - (recycle ? 1 : 0);
    uint64_t fits = after < cfg_.max_slices ? largest_allocation(recycle) : 0;
    if (fits < min_words) {  // only live slices left to give: skip the shift, keep every key
      ++h_->saturations;
      h_->counter = h_->generation_target;  // try again after another generation
      return;
    }
    if (words > fits) words = fits;  // a smaller slice: the FPR rises, no key is lost
    // Commit: the completed generation's stats, the stamp, the slices.
    h_->rate = static_cast<double>(g) / static_cast<double>(dt);
    h_->generation_target = g_star;
    Slice& leaving = logical(k - 1);
    leaving.stamped = 1;
    leaving.ts = h_->last_insert;
    h_->last_stamp = h_->last_insert;
    const uint32_t hash = (logical(0).hash + k - 1) % k;
    if (recycle) release_oldest();
    push_newest(allocate(words), words, hash);
    // 6. The next generation.
    h_->counter = shift_counter();
    h_->gen_insertions = 0;
    h_->gen_start = now;
    ++h_->shifts;
  }

  // Eq. 4-5: g = min over active i of ⌈(cap(i) − c_i)/(k − i)⌉, at least 1.
  uint64_t shift_counter() const noexcept {
    int64_t g = INT64_MAX;
    for (uint32_t i = 0; i < cfg_.k; ++i) {
      const Slice& s = logical(i);
      const int64_t left = capacity_of(s) - s.count, n = cfg_.k - i;
      const int64_t gi = left <= 0 ? 0 : (left + n - 1) / n;
      if (gi < g) g = gi;
    }
    return g < 1 ? 1 : static_cast<uint64_t>(g);
  }

  // An idle gap longer than T: every key has expired. Back to k + l clean slices.
  void expire_all() noexcept {
    while (h_->count > cfg_.k + cfg_.l) release_oldest();
    for (uint32_t i = 0; i < h_->count; ++i) {
      Slice& s = logical(i);
      bits::clear(slab_ + s.offset, s.words);
      s.count = 0;
      s.stamped = 0;
    }
    h_->counter = shift_counter();
    h_->gen_insertions = 0;
    h_->inserted = false;
  }

  // The slab as a circular FIFO: slices are allocated at the head and
  // released from the tail, so used words are one run (or two, wrapped).
  uint64_t tail_offset() const noexcept { return h_->count ? logical(h_->count - 1).offset : h_->slab_head; }
  // The most words one allocation could take now, recycling the tail first if asked.
  uint64_t largest_allocation(bool recycle_tail) const noexcept {
    if (h_->count == 0 || (recycle_tail && h_->count == 1)) return slab_words_;
    // With the tail recycled, the region it held is free too.
    const uint64_t tail = recycle_tail ? logical(h_->count - 2).offset : tail_offset();
    const bool wrapped = recycle_tail && h_->wrapped && tail < tail_offset() ? false : h_->wrapped;
    if (!wrapped) {
      const uint64_t at_end = slab_words_ - h_->slab_head;
      return at_end > tail ? at_end : tail;
    }
    return tail - h_->slab_head;
  }
  uint64_t allocate(uint64_t words) noexcept {
    uint64_t off;
    if (h_->count == 0) {
      h_->slab_head = 0;
      h_->wrapped = false;
    }
    if (h_->wrapped || h_->slab_head + words <= slab_words_) {
      off = h_->slab_head;  // wrapped: the free run is [head, tail); the caller checked the fit
    } else {
      off = 0;  // wrap: the words left at the end wait until the tail passes them
      h_->wrapped = true;
    }
    h_->slab_head = off + words;
    h_->words_in_use += words;
    bits::clear(slab_ + off, words);
    return off;
  }
  void push_newest(uint64_t off, uint64_t words, uint32_t hash) noexcept {
    h_->newest = (h_->newest + cfg_.max_slices - 1) % cfg_.max_slices;
    Slice& s = table_[h_->newest];
    s = Slice{off, words, 0, 0, hash, 0};
    ++h_->count;
  }
  void release_oldest() noexcept {
    const uint64_t off = oldest().offset;
    h_->words_in_use -= oldest().words;
    --h_->count;
    if (h_->count == 0) {
      h_->slab_head = 0;
      h_->wrapped = false;
    } else if (h_->wrapped && tail_offset() < off) {
      h_->wrapped = false;  // the tail wrapped too: used words are one run again
    }
  }

  TimeLimitedConfig cfg_{};
  Header* h_ = nullptr;
  Slice* table_ = nullptr;
  uint64_t* slab_ = nullptr;
  uint64_t slab_words_ = 0;
};

}  // namespace agebloom
