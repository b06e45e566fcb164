// Stable Bloom filter (Deng & Rafiei, "Approximately detecting duplicates
// for streaming data using stable Bloom filters", SIGMOD 2006): the second
// baseline of the evaluation in Alpay & Sarıoğlu, "Guarded Epoch Bloom
// Filters for Sliding-Window Membership", §3 (§4, Table 1: FPR 0.1505, live
// FNR 0.19 at 14 bits per live item).
//
// m cells of d bits (d ∈ {1, 2, 4, 8}), Max = 2^d - 1, 64/d to a uint64_t
// word. Each insertion first decrements p cells by one, saturating at 0: a
// run of p adjacent cells (wrapping at m) from a pseudo-random start drawn
// from a splitmix64 state kept in the arena header; then it sets the key's k
// cells (probe(h, i, m)) to Max. A key is present while all k cells are
// non-zero. Old keys fade because their cells are decremented away; the
// filter never needs to know when a key was inserted, so it keeps no clock.
//
// The window is probabilistic, and there are FALSE NEGATIVES BY DESIGN: a
// live key's cell is decremented with probability p/m per insertion, so a
// key of any age may already be gone (and an old key may linger). The live
// false-negative rate is a measurement, not a guarantee (tests/core/
// stable_test.cpp reports it); use a guarded epoch filter where live keys
// must never be missed.
//
// Parameters from a target fp (ALGORITHMS.md, "Baselines", after Deng & Rafiei's
// parameter setting):
//   k = max(1, ⌈log2(1/fp)⌉ / 2)                  (integer division)
//   p = 1 / (((1 - fp^{1/k})^{-1/Max} - 1) · (1/k - 1/m))
//   zero fraction at the stable point: (1 / (1 + 1/(p·(1/k - 1/m))))^Max
//   FP = (1 - zero fraction)^k
// and the window fixes m: a set cell's expected life is Max·m/p insertions
// (Max decrements at p/m each), which we make 2·W, so that a key W insertions
// old has been decremented Max/2 times on average. p and m depend on each
// other; a bounded fixed-point iteration settles both. For a time window, W
// is the capacity: the insertions expected per T (the filter has no clock;
// advance() only checks that time does not go backwards).
//
// State: a small header and ⌈m/(64/d)⌉ uint64_t, carved from the caller's
// arena; the filter object is a trivially copyable handle onto it (copies
// alias it: give one handle to one lcore).
#pragma once

#include <cstddef>
#include <cstdint>

#include "agebloom/core/arena.hpp"
#include "agebloom/core/bits.hpp"
#include "agebloom/core/error.hpp"
#include "agebloom/core/hash.hpp"
#include "agebloom/core/math.hpp"
#include "agebloom/core/window.hpp"
#include "agebloom/filters/bulk_ops.hpp"

namespace agebloom {

namespace stable_detail {
// ln(1 + y) and e^x - 1 near zero, where the model and the sizing evaluate
// them for small targets: the direct forms lose every digit there (1 - fp^{1/k}
// rounds to 1). Series below 1e-4 (error < y^5), the direct form above
// (relative error ~1e-16 / y < 1e-12).
constexpr double log1p(double y) noexcept {
  if (y > -1e-4 && y < 1e-4) return y * (1.0 - y * (0.5 - y * (1.0 / 3 - y * 0.25)));
  return math::ln(1.0 + y);
}
constexpr double expm1(double x) noexcept {
  if (x > -1e-4 && x < 1e-4) return x * (1.0 + x * (0.5 + x * (1.0 / 6 + x / 24)));
  return math::exp(x) - 1.0;
}
}  // namespace stable_detail

// The header a stable filter carves first in its arena (public and plain,
// like EpochRingHeader).
struct StableHeader {
  uint64_t insertions;  // total insertions so far
  uint64_t rng;       // splitmix64 state: where the next run of decrements starts
  uint64_t last_now;  // time windows: latest tick seen
  bool started;       // time windows: advance() has been called
};

// StableConfig::for_fpr's named parameters, read at the call site:
//   StableConfig::for_fpr(window, fpr, {.capacity = ...})
// (every structure's own, so a knob of one cannot be passed to another).
struct StableSizing {
  uint64_t capacity = 0;  // expected insertions per time window
  uint32_t cell_bits = 4;  // bits per cell d: 1, 2, 4 or 8
};

// The stable filter's shape: what for_fpr() returns and
// StableFilter::create() builds.
struct StableConfig {
  Window window = Window::count(0);  // the window kept (count or time)
  uint64_t capacity = 0;    // W: insertions per window (defaults to the span of a count
                            // window; required for a time window: insertions per T)
  uint32_t cell_bits = 4;   // d: 1, 2, 4 or 8
  uint32_t k = 0;           // cells per key
  uint64_t cells = 0;       // m
  uint64_t decrements = 0;  // p: cells decremented per insertion, 1..m

  static constexpr uint32_t kMaxK = 32;  // most hash functions per key
  static constexpr uint32_t kDefaultCellBits = 4;  // d when none is given

  constexpr bool operator==(const StableConfig&) const = default;  // field by field

  // The cell widths a word packs without straddling: 1, 2, 4 or 8 bits.
  static constexpr bool valid_cell_bits(uint32_t d) noexcept { return d == 1 || d == 2 || d == 4 || d == 8; }
  // Max, and the cells a word holds (guarded: an invalid d answers 0 and 64
  // rather than shifting or dividing by it).
  constexpr uint32_t max_value() const noexcept { return valid_cell_bits(cell_bits) ? (1u << cell_bits) - 1 : 0; }
  constexpr uint64_t cells_per_word() const noexcept { return valid_cell_bits(cell_bits) ? 64 / cell_bits : 64; }  // the largest cell value
  constexpr uint64_t words() const noexcept { return math::ceil_div(cells, cells_per_word()); }  // 64-bit words of cells
  constexpr uint64_t load() const noexcept { return capacity ? capacity : (window.is_time() ? 0 : window.span); }  // insertions per window the model assumes

  // The Errc of the first field out of range, or ok.
  constexpr Status validate() const noexcept {
    if (Status s = window.validate(); !s) return s;
    if (window.is_time() && capacity == 0) return Errc::capacity_zero;
    if (!valid_cell_bits(cell_bits)) return Errc::cell_bits_invalid;
    if (k == 0 || k > kMaxK) return Errc::k_out_of_range;
    if (cells > kMaxStructureBits / cell_bits) return Errc::too_large;  // before any product
    // One word at least, and m > k: the model's 1/k - 1/m must be positive.
    if (cells * cell_bits < 64 || cells <= k) return Errc::budget_too_small;
    if (decrements == 0 || decrements > cells) return Errc::decrements_invalid;
    return Errc::ok;
  }

  // Expected insertions a cell set to Max survives: Max decrements, each
  // insertion hitting it with probability p/m.
  constexpr double cell_life() const noexcept {
    return static_cast<double>(max_value()) * static_cast<double>(cells) / static_cast<double>(decrements);
  }

  // The stable point's fraction of zero cells (Deng & Rafiei's stable-point
  // theorem): (1 / (1 + 1/(p·(1/k - 1/m))))^Max, the filter's fill after
  // enough insertions whatever the stream, since each insertion sets k cells
  // and clears on average p/Max.
  constexpr double zero_fraction() const noexcept {
    return math::exp(-static_cast<double>(max_value()) * stable_detail::log1p(1.0 / p_times_gap()));
  }

  // FP at the stable point: (1 - zero fraction)^k, with 1 - z computed as
  // -expm1(ln z) so that small FPs keep their digits.
  constexpr double model_fpr() const noexcept {
    if (cells <= k || decrements == 0) return 1.0;
    const double ln_z = -static_cast<double>(max_value()) * stable_detail::log1p(1.0 / p_times_gap());
    return math::ipow(-stable_detail::expm1(ln_z), k);
  }

  // Every byte create() carves (header and cell words, each rounded to its
  // cache line as the arena rounds it), per window item.
  constexpr double bits_per_item() const noexcept {
    const uint64_t n = load();
    return static_cast<double>(carved_bytes()) * 8 / static_cast<double>(n ? n : 1);
  }
  // Bytes create() carves: the header and the cells, cache-line aligned (what
  // bits_per_item() counts).
  constexpr uint64_t carved_bytes() const noexcept {
    return align_up(sizeof(StableHeader), kCacheLine) + align_up(words() * 8, kCacheLine);
  }

  // Sizes the filter for `fpr` with d-bit cells (see the top of this file):
  // k from the published rule; then p and m by a fixed-point iteration (at
  // most 16 rounds) of p = round(p(m)), m = ⌈2·W·p/Max⌉ (a cell life of 2W),
  // with m at least one word, more than k and at least p. Rounding p to the
  // nearest integer can leave the model a hair above fpr; p then grows by one
  // (and m with it) until it meets fpr: p >= the exact p(m) always does, so
  // one or two steps. Errors: fpr outside (0, 1); d not 1, 2, 4, 8; a time
  // window without capacity; a target whose rule gives k > 32 (fpr < 2^-64)
  // or whose m exceeds kMaxStructureBits: Errc::too_large.
  static constexpr Expected<StableConfig> for_fpr(Window window, double fpr, StableSizing sizing = {}) noexcept {
    const uint64_t capacity = sizing.capacity;
    const uint32_t cell_bits = sizing.cell_bits;
    static_assert(StableSizing{}.cell_bits == kDefaultCellBits, "one default d");
    if (!(fpr > 0.0 && fpr < 1.0)) return Errc::fpr_out_of_range;
    if (Status s = window.validate(); !s) return s;
    if (!valid_cell_bits(cell_bits)) return Errc::cell_bits_invalid;
    StableConfig c;
    c.window = window;
    c.cell_bits = cell_bits;
    c.capacity = capacity ? capacity : (window.is_time() ? 0 : window.span);
    if (c.capacity == 0) return Errc::capacity_zero;

    // ⌈log2(1/fp)⌉, with an exact power of two not pushed up by ln's last bit.
    const double lg = -math::ln(fpr) / math::kLn2;
    uint64_t bits = math::ceil_to_u64(lg);
    if (bits > 0 && lg - static_cast<double>(bits - 1) < 1e-9 * lg) --bits;
    const uint64_t k = bits / 2 < 1 ? 1 : bits / 2;
    if (k > kMaxK) return Errc::too_large;
    c.k = static_cast<uint32_t>(k);

    const double max = c.max_value();
    const double kd = static_cast<double>(k);
    const double n = static_cast<double>(c.capacity);
    // a = (1 - fp^{1/k})^{-1/Max} - 1, so that p = 1 / (a·(1/k - 1/m)).
    const double q = math::exp(math::ln(fpr) / kd);
    const double a = stable_detail::expm1(-stable_detail::log1p(-q) / max);
    if (!(a > 0)) return Errc::too_large;
    const uint64_t max_cells = kMaxStructureBits / cell_bits;
    const uint64_t min_cells = 64 / cell_bits > k ? 64 / cell_bits : k + 1;
    // m for a given p: a cell life of 2W, within the floors above. Doubles
    // first: 2·W·p may not fit in 64 bits.
    auto cells_for = [&](uint64_t p) -> uint64_t {
      const double m = 2.0 * n * static_cast<double>(p) / max;
      if (!(m <= static_cast<double>(max_cells))) return max_cells + 1;
      uint64_t cells = math::ceil_to_u64(m);
      if (cells < min_cells) cells = min_cells;
      if (cells < p) cells = p;
      return cells;
    };
    auto nearest = [](double x) -> uint64_t { return x < 1.0 ? 1 : static_cast<uint64_t>(x + 0.5); };

    const double p_inf = kd / a;  // p with 1/m = 0: where the iteration starts
    if (!(p_inf <= static_cast<double>(max_cells))) return Errc::too_large;
    uint64_t p = nearest(p_inf);
    for (int round = 0; round < 16; ++round) {
      const uint64_t m = cells_for(p);
      if (m > max_cells) return Errc::too_large;
      const uint64_t next = nearest(1.0 / (a * (1.0 / kd - 1.0 / static_cast<double>(m))));
      if (next == p) break;
      p = next;
    }
    for (int bump = 0; bump <= 64; ++bump, ++p) {
      c.decrements = p;
      c.cells = cells_for(p);
      if (c.cells > max_cells) return Errc::too_large;
      if (c.model_fpr() <= fpr) {
        if (Status s = c.validate(); !s) return s;
        return c;
      }
    }
    return Errc::too_large;
  }

 private:
  // p·(1/k - 1/m): the stable point's ratio of clearing to setting.
  constexpr double p_times_gap() const noexcept {
    return static_cast<double>(decrements) * (1.0 / static_cast<double>(k) - 1.0 / static_cast<double>(cells));
  }
};

// The stable filter over an arena: a handle; its cells live in the arena.
class StableFilter : public BulkOps<StableFilter> {
 public:
  constexpr StableFilter() noexcept = default;  // empty: create() one

  // The splitmix64 state a new filter starts from: fixed, so that two
  // filters of one config fed one stream hold the same bytes (the keys'
  // cells are already secret through the hash seed).
  static constexpr uint64_t kRngSeed = 0x5374'6162'6c65'4246ULL;  // "StableBF"

  // The arena create() carves for c, from any 64-byte aligned base (c's error if invalid).
  static constexpr Expected<size_t> bytes_needed(const StableConfig& c) noexcept {
    if (Status s = c.validate(); !s) return s;
    return ArenaLayout{}.add(sizeof(State)).add(c.words() * sizeof(uint64_t)).bytes();
  }

  // Validates `c`, carves the state from `arena` and zeroes it. On error the
  // arena is left as it was.
  static Expected<StableFilter> create(const StableConfig& c, Arena& arena) noexcept {
    if (Status s = c.validate(); !s) return s;
    const size_t mark = arena.used();
    auto state = arena.carve_array<State>(1);
    auto words = arena.carve_array<uint64_t>(c.words());
    if (!state || !words) {
      arena.rewind(mark);
      return Errc::arena_too_small;
    }
    StableFilter f;
    f.cfg_ = c;
    f.state_ = *state;
    f.words_ = *words;
    f.d_ = c.cell_bits;
    f.log2_per_word_ = static_cast<uint32_t>(__builtin_ctzll(c.cells_per_word()));
    f.max_ = c.max_value();
    f.low_bits_ = ~uint64_t{0} / c.max_value();  // bit 0 of every cell: 0x1111... for d = 4
    *f.state_ = State{};
    f.state_->rng = kRngSeed;
    bits::clear(f.words_, c.words());
    return f;
  }

  // The filter keeps no clock: time windows only check that `now` does not
  // go backwards (Errc::time_went_backwards, nothing changed). Count
  // windows: no-op.
  Status advance(uint64_t now) noexcept {
    if (!cfg_.window.is_time()) return Errc::ok;
    if (state_->started && now < state_->last_now) return Errc::time_went_backwards;
    state_->started = true;
    state_->last_now = now;
    return Errc::ok;
  }

  // Whether h's cells are all non-zero: recently inserted, or a false positive (no window
  // guarantee: decay may already have erased it, a false negative by design).
  bool contains(KeyHash h) const noexcept {
    uint64_t pos[StableConfig::kMaxK];
    positions(h, pos);
    return all_nonzero(pos);
  }

  // Records h as inserted now.
  void insert(KeyHash h) noexcept { (void)insert_impl<false>(h); }

  // The dedup primitive: one pass, one verdict. Equal to
  // `bool v = contains(h); insert(h); return v;`.
  bool test_and_insert(KeyHash h) noexcept { return insert_impl<true>(h); }

  // Prefetches the word of the key's first cell (the bulk forms call it ahead).
  void prefetch(KeyHash h) const noexcept { bits::prefetch_read(words_ + (probe(h, 0, cfg_.cells) >> log2_per_word_)); }

  // Whether `image`, a saved copy of this filter's arena, holds a state this
  // filter can be in: dedup/snapshot.hpp asks before a load, since a crafted
  // image passes its checksum. Any cells and clock will do; the flag must be one.
  bool accepts_image(const ArenaImage& image) const noexcept {
    State s;
    return image.read(state_, s) && is_flag(s.started);
  }

  const StableConfig& config() const noexcept { return cfg_; }  // the configuration it was created with
  uint64_t insertions() const noexcept { return state_->insertions; }  // insertions so far
  // Cell i (0..cells), for inspection and tests.
  uint32_t cell(uint64_t i) const noexcept { return get(i); }
  size_t state_bytes() const noexcept { return static_cast<size_t>(cfg_.carved_bytes()); }  // the state in the arena
  // Fraction of non-zero cells (control plane: O(m)); at the stable point,
  // 1 - zero_fraction().
  double fill_ratio() const noexcept {
    uint64_t n = 0;
    for (uint64_t w = 0; w < cfg_.words(); ++w) n += static_cast<uint64_t>(__builtin_popcountll(nonzero(words_[w])));
    return static_cast<double>(n) / static_cast<double>(cfg_.cells);
  }

 private:
  using State = StableHeader;

  // Bit 0 of each cell of `w` set iff that cell is non-zero: OR-folding
  // d bits down leaves bit 0 of a cell holding exactly that cell's bits.
  uint64_t nonzero(uint64_t w) const noexcept {
    for (uint32_t s = 1; s < d_; s <<= 1) w |= w >> s;
    return w & low_bits_;
  }

  uint32_t get(uint64_t i) const noexcept {
    const uint32_t shift = static_cast<uint32_t>(i & ((uint64_t{1} << log2_per_word_) - 1)) * d_;
    return static_cast<uint32_t>(words_[i >> log2_per_word_] >> shift) & max_;
  }
  void set_max(uint64_t i) noexcept {
    const uint32_t shift = static_cast<uint32_t>(i & ((uint64_t{1} << log2_per_word_) - 1)) * d_;
    words_[i >> log2_per_word_] |= static_cast<uint64_t>(max_) << shift;
  }

  // Cells [first, first + count) (within 0..m) lose one, saturating at 0, a
  // word at a time: subtracting 1 from every non-zero cell borrows nothing
  // across cells, so one subtraction of the non-zero cells' low bits does it.
  void decrement_run(uint64_t first, uint64_t count) noexcept {
    const uint64_t per_word = uint64_t{1} << log2_per_word_;
    uint64_t w = first >> log2_per_word_, off = first & (per_word - 1);
    while (count != 0) {
      const uint64_t n = count < per_word - off ? count : per_word - off;
      const uint64_t width = n * d_;
      const uint64_t range = (width == 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1) << (off * d_);
      words_[w] -= nonzero(words_[w]) & range;
      count -= n;
      off = 0;
      ++w;
    }
  }

  // p adjacent cells from a pseudo-random start, wrapping at m.
  void decrement_random_cells() noexcept {
    state_->rng += 0x9e3779b97f4a7c15ULL;  // splitmix64's step
    const uint64_t m = cfg_.cells, p = cfg_.decrements;
    const uint64_t start = reduce(mix64(state_->rng), m);
    if (p <= m - start) {
      decrement_run(start, p);
    } else {
      decrement_run(start, m - start);
      decrement_run(0, p - (m - start));
    }
  }

  void positions(KeyHash h, uint64_t* pos) const noexcept {
    for (uint32_t i = 0; i < cfg_.k; ++i) pos[i] = probe(h, i, cfg_.cells);
  }
  bool all_nonzero(const uint64_t* pos) const noexcept {
    for (uint32_t i = 0; i < cfg_.k; ++i)
      if (get(pos[i]) == 0) return false;
    return true;
  }

  // Positions are computed once and serve the test and the insertion; the
  // verdict precedes this insertion's decrements.
  template <bool Test>
  bool insert_impl(KeyHash h) noexcept {
    uint64_t pos[StableConfig::kMaxK];
    positions(h, pos);
    bool seen = false;
    if constexpr (Test) seen = all_nonzero(pos);
    decrement_random_cells();
    for (uint32_t i = 0; i < cfg_.k; ++i) set_max(pos[i]);
    ++state_->insertions;
    return seen;
  }

  StableConfig cfg_{};
  State* state_ = nullptr;
  uint64_t* words_ = nullptr;
  uint32_t d_ = 0;
  uint32_t log2_per_word_ = 0;
  uint32_t max_ = 0;
  uint64_t low_bits_ = 0;
};

}  // namespace agebloom
