// Age-partitioned Bloom filter (Shtul, Baquero, Almeida, arXiv 2001.03147,
// Age-Partitioned Bloom Filters).
//
// k + l slices of m bits in a circular buffer; logical slice 0 is the newest.
// An insertion sets one bit in each of the k newest slices; every g
// insertions (a generation) the slices age by one: the oldest is cleared and
// becomes the newest (§5.1). A key therefore lives in k consecutive slices that
// age together, and it is found while all k still exist: for l generations
// after its own, so the window is w = l·g with slack s = k·g (§5.2).
//
// g = ⌊m·ln2/k⌋ brings a slice to half full as it leaves the insertion
// window (k generations of g insertions), the design point of §5's fill
// ratios. Each *physical* slice keeps its own hash function (probe index =
// buffer position), so a slice keeps the same function through its life.
//
// Query: Algorithm 1, the jump-back scan for k consecutive hits starting at
// slice l (fewest expected accesses, §5.4).
//
// Blocked (APBBF, §6): each segment is instead a blocked Bloom filter of B-bit
// blocks, each block partitioned into b parts of B/b bits with exactly one bit
// set per part; a segment probe then touches one block (one cache line for
// B = 512, one word for B = 64). The recurrences hold with the segment's FP in
// place of the slice fill ratio, and g = S·ln2/(k·b) brings a segment of S
// bits to the same half-full design point.
#pragma once

#include <cstddef>
#include <cstdint>

#include "agebloom/core/arena.hpp"
#include "agebloom/core/bits.hpp"
#include "agebloom/core/bloom_math.hpp"
#include "agebloom/core/error.hpp"
#include "agebloom/core/hash.hpp"
#include "agebloom/core/math.hpp"
#include "agebloom/core/placement.hpp"
#include "agebloom/core/window.hpp"
#include "agebloom/filters/bulk_ops.hpp"

namespace agebloom {

// Algorithm 1 (Age-Partitioned Bloom Filters, §5.4): is there a run of k consecutive slices, of
// the k + l (logical index 0 = newest), that all hold the key? Start at slice
// l and walk towards older slices counting hits; on a miss jump k slices
// towards the newer end, carrying the hits just found (p), since a run that
// ends there needs only k - p more. `hit(i)` probes logical slice i.
template <class Hit>
constexpr bool jump_back_scan(uint32_t k, uint32_t l, Hit&& hit) noexcept {
  int64_t i = l, p = 0, c = 0;
  while (i >= 0) {
    if (hit(static_cast<uint32_t>(i))) {
      ++c;
      ++i;
      if (p + c == k) return true;
    } else {
      i -= k;
      p = c;
      c = 0;
    }
  }
  return false;
}

// A generation of an age-partitioned filter (one-line or not) over `window`
// with l generations per window: its length, insertions (count windows, g)
// or ticks (time windows, ⌈T/l⌉), and its expected load, for the models.
constexpr uint64_t generation_length(Window window, uint32_t l, uint64_t generation) noexcept {
  return window.is_time() ? math::ceil_div(window.span, l ? l : 1) : generation;
}
// Its expected load: g insertions for a count window, capacity / l for a
// time window (0 without a capacity).
constexpr double generation_load(Window window, uint32_t l, uint64_t generation, uint64_t capacity) noexcept {
  if (!window.is_time()) return static_cast<double>(generation);
  return l ? static_cast<double>(capacity) / l : 0.0;
}

// ApbfConfig::for_fpr's named parameters, read at the call site:
//   ApbfConfig::for_fpr(window, fpr, {.capacity = ...})
// (every structure's own, so a knob of one cannot be passed to another).
struct ApbfSizing {
  uint64_t capacity = 0;  // expected insertions per time window
};

// An APBF (or APBBF, block_bits != 0) shape: what the sizing functions
// return and ApbfFilter::create() builds.
struct ApbfConfig {
  Window window = Window::count(0);  // the window kept (count or time)
  uint32_t k = 0;           // slices each insertion writes
  uint32_t l = 0;           // generations in the window
  uint64_t slice_bits = 0;  // m
  uint64_t generation = 0;  // g: insertions per generation (count windows)
  uint64_t capacity = 0;    // expected insertions per window (time windows: the model's load)
  uint32_t block_bits = 0;      // 0: one bit per slice (APBF); 64..512: APBBF blocks of B bits
  uint32_t bits_per_block = 0;  // APBBF: b bits per block, one in each part of B/b bits

  static constexpr uint32_t kMaxK = 32;  // most hash functions per key
  static constexpr uint32_t kMaxL = 1024;  // most generations (the planner's search stops at 100)

  constexpr uint32_t slices() const noexcept { return k + l; }  // k + l
  constexpr bool operator==(const ApbfConfig&) const = default;  // field by field

  // Insertions (count) or ticks (time) per generation.
  constexpr uint64_t generation_length() const noexcept { return agebloom::generation_length(window, l, generation); }
  // Expected insertions per generation, for the model.
  constexpr double generation_load() const noexcept {
    return agebloom::generation_load(window, l, generation, capacity);
  }

  // The Errc of the first field out of range, or ok.
  constexpr Status validate() const noexcept {
    if (Status s = window.validate(); !s) return s;
    if (k == 0 || k > kMaxK) return Errc::k_out_of_range;
    if (l == 0 || l > kMaxL) return Errc::l_out_of_range;
    if (!window.is_time()) {
      if (window.span < l) return Errc::window_smaller_than_segments;
      // The window must fit in l generations: w = l·g (§5.2).
      if (generation == 0 || generation * l < window.span) return Errc::window_smaller_than_segments;
    }
    if (block_bits == 0) {
      if (bits_per_block != 0) return Errc::bits_per_block_invalid;
    } else {
      if (!is_pow2(block_bits) || block_bits < 64 || block_bits > 512) return Errc::block_size_invalid;
      // b parts of B/b bits, b·log2(B/b) hash bits: all from one 64-bit mix.
      if (!is_pow2(bits_per_block) || bits_per_block > block_bits ||
          bits_per_block * log2_part_bits() > 64)
        return Errc::bits_per_block_invalid;
    }
    if (slice_bits < 64 || slice_bits < block_bits) return Errc::budget_too_small;
    if (slice_bits > kMaxStructureBits / slices()) return Errc::too_large;
    return Errc::ok;
  }

  // Where a key's bits go in each slice (core/placement.hpp): the CPU filter
  // and the GPU replay both take them from here.
  constexpr placement::ApbfSlice placement() const noexcept {
    return {slice_bits, block_bits ? slice_bits / block_bits : 0, block_bits, bits_per_block, log2_part_bits()};
  }

  // log2 of the bits per part of a blocked slice's block (B/b; 0 unblocked):
  // the width of each part's field of h2.
  constexpr uint32_t log2_part_bits() const noexcept {
    return bits_per_block ? static_cast<uint32_t>(__builtin_ctz(block_bits / bits_per_block)) : 0;
  }
  // Bits a segment really uses: blocked segments hold whole blocks only.
  constexpr uint64_t usable_slice_bits() const noexcept {
    return block_bits ? slice_bits / block_bits * block_bits : slice_bits;
  }

  // FP at the end of a generation (every slice as full as it gets), by the
  // recurrence F of §5.3 with fill ratios from the actual load:
  // slice i < k holds (i+1)·g keys, older ones k·g. With g = m·ln2/k these
  // are 1 - 2^{-(i+1)/k}, which the paper linearises as (i+1)/(2k).
  constexpr double model_fpr() const noexcept {
    double fill[kMaxK + kMaxL];
    match_probabilities(fill);
    return scan_fpr(k, l, fill);
  }

  // The probability that logical slice i (0 = newest) matches a key it does
  // not hold, at the end of a generation: fill[0 .. slices()).
  constexpr void match_probabilities(double* fill) const noexcept {
    const double g = generation_load();
    const double m = static_cast<double>(usable_slice_bits());
    // APBBF: every slice's Poisson mixture over block loads j sums the same
    // terms (1 - (1 - b/B)^j)^b, so they are computed once, up to the
    // fullest slice's last j (or kTerms), not once per slice: the planner
    // evaluates this model ~10^5 times sizing every (k, l, b).
    constexpr uint64_t kTerms = 1024;
    double terms[kTerms];
    uint64_t count = 0;
    if (block_bits) {
      const double fullest = bloom_math::partitioned_block_lambda(m, g * k, block_bits);
      const uint64_t last = bloom_math::detail::poisson_last(fullest);
      count = last < kTerms ? last + 1 : kTerms;
      for (uint64_t j = 0; j < count; ++j) terms[j] = bloom_math::partitioned_block_term(j, block_bits, bits_per_block);
    }
    for (uint32_t i = 0; i < slices(); ++i) {
      if (i > k) {  // every slice past the insertion window holds k·g keys
        fill[i] = fill[k];
        continue;
      }
      const double keys = g * (i < k ? i + 1 : k);
      fill[i] = block_bits ? bloom_math::partitioned_block_fpr(m, keys, block_bits, bits_per_block, terms, count)
                           : 1.0 - math::exp(-keys / m);
    }
  }

  // F(a, i) of §5.3: the probability that a scan from slice i, holding a
  // consecutive hits, reaches k. F(a, i) = 1 if a = k; 0 if i > l + a;
  // else r_i F(a+1, i+1) + (1 - r_i) F(0, i+1). FP = F(0, 0).
  // Evaluated from i = k + l down to 0 keeping one row over a, in place:
  // row i's F(a) reads row i+1's F(a+1), not yet overwritten going up in a,
  // and F(0), kept aside. (The planner evaluates this ~10^5 times per full
  // plan: sizing every (k, l) of APBF and the structures built on it.)
  // Row k + l (a scan past the last slice) is F = 1 at a = k, 0 below: the
  // start; fill[] is read for the slices 0 .. k + l - 1 only.
  static constexpr double scan_fpr(uint32_t k, uint32_t l, const double* fill) noexcept {
    double f[kMaxK + 1] = {};
    f[k] = 1.0;
    for (int64_t i = static_cast<int64_t>(k + l) - 1; i >= 0; --i) {
      const double r = fill[i], f0 = f[0];
      // F(a, i) = 0 while i > l + a: for a < i - l.
      const int64_t reachable = i - static_cast<int64_t>(l);
      uint32_t a = 0;
      for (; a < k && static_cast<int64_t>(a) < reachable; ++a) f[a] = 0.0;
      for (; a < k; ++a) f[a] = r * f[a + 1] + (1.0 - r) * f0;
      f[k] = 1.0;
    }
    return f[0];
  }

  // The paper's design-point FP for (k, l): fill ratios (i+1)/(2k) for
  // i < k, 1/2 beyond (Table 2's "actual fp").
  static constexpr double design_fpr(uint32_t k, uint32_t l) noexcept {
    double fill[kMaxK + kMaxL + 1] = {};
    for (uint32_t i = 0; i < k + l + 1; ++i) fill[i] = i < k ? (i + 1) / (2.0 * k) : 0.5;
    return scan_fpr(k, l, fill);
  }

  // The published parameterisation (ALGORITHMS.md): k = ⌈-log2 fpr⌉, l the
  // largest l <= 100 with design FP <= fpr; then g = ⌈W/l⌉ so that the
  // window fits in l generations, and m = ⌈k·g/ln2⌉ so that a slice is half
  // full as it leaves the insertion window.
  static constexpr Expected<ApbfConfig> for_fpr(Window window, double fpr, ApbfSizing sizing = {}) noexcept {
    const uint64_t capacity = sizing.capacity;
    if (Status s = window.validate(); !s) return s;
    if (!(fpr > 0.0 && fpr < 1.0)) return Errc::fpr_out_of_range;
    ApbfConfig c;
    c.window = window;
    c.capacity = capacity ? capacity : (window.is_time() ? 0 : window.span);
    if (c.capacity == 0) return Errc::capacity_zero;
    const uint64_t k = published_k(fpr);
    if (k > kMaxK) return Errc::k_out_of_range;
    c.k = static_cast<uint32_t>(k);
    c.l = 0;
    for (uint32_t l = 1; l <= 100; ++l)
      if (design_fpr(c.k, l) <= fpr) c.l = l;
    if (c.l == 0) c.l = 1;  // k from ⌈-log2 fpr⌉ always admits l = 1 (FP <= 2^-k)
    return with_shape(window, c.k, c.l, c.capacity);
  }

  // The published parameterisation's k = ⌈log2 1/fpr⌉ (at least 1; may
  // exceed kMaxK for tiny FPRs: the caller decides).
  static constexpr uint64_t published_k(double fpr) noexcept {
    const uint64_t k = math::ceil_to_u64(-math::ln(fpr) / math::kLn2);
    return k ? k : 1;
  }

  // Explicit (k, l): g and m follow from the window as in for_fpr.
  static constexpr Expected<ApbfConfig> with_shape(Window window, uint32_t k, uint32_t l,
                                                   uint64_t capacity = 0) noexcept {
    if (Status s = window.validate(); !s) return s;
    ApbfConfig c;
    c.window = window;
    c.k = k;
    c.l = l;
    c.capacity = capacity ? capacity : (window.is_time() ? 0 : window.span);
    if (c.capacity == 0) return Errc::capacity_zero;
    if (k == 0 || k > kMaxK) return Errc::k_out_of_range;
    if (l == 0 || l > kMaxL) return Errc::l_out_of_range;
    const uint64_t g = math::ceil_div(c.capacity, l);
    c.generation = window.is_time() ? 0 : math::ceil_div(window.span, l);
    c.slice_bits = math::ceil_to_u64(static_cast<double>(k) * static_cast<double>(g) / math::kLn2);
    if (c.slice_bits < 64) c.slice_bits = 64;
    if (window.is_time()) c.generation = 0;
    if (Status s = c.validate(); !s) return s;
    return c;
  }

  // APBBF (§6): k + l segments, each a blocked Bloom filter of B-bit blocks
  // with b bits per block; g = ⌈W/l⌉ and segments of ⌈k·g·b/ln2⌉ bits
  // (rounded up to whole blocks) so they are half full as they age out.
  static constexpr Expected<ApbfConfig> blocked(Window window, uint32_t k, uint32_t l, uint32_t block_bits,
                                                uint32_t b, uint64_t capacity = 0) noexcept {
    auto c = with_shape(window, k, l, capacity);
    if (!c) return c;
    c->block_bits = block_bits;
    c->bits_per_block = b;
    if (block_bits == 0 || !is_pow2(block_bits)) return Errc::block_size_invalid;
    if (b == 0) return Errc::bits_per_block_invalid;
    const uint64_t g = math::ceil_div(c->capacity, l);
    c->slice_bits = align_up(
        math::ceil_to_u64(static_cast<double>(k) * static_cast<double>(g) * b / math::kLn2), block_bits);
    if (Status s = c->validate(); !s) return s;
    return c;
  }

  // The shape (k, l[, B, b]) sized by this structure's own model: the
  // smallest slices (whole blocks for APBBF) whose model_fpr() is at most
  // `fpr`. The search starts from the design point of with_shape()/blocked()
  // and brackets by doubling (bounded by the size limit), then bisects: at
  // most ~100 model evaluations.
  static constexpr Expected<ApbfConfig> sized(Window window, double fpr, uint32_t k, uint32_t l,
                                              uint32_t block_bits = 0, uint32_t b = 0,
                                              uint64_t capacity = 0) noexcept {
    if (!(fpr > 0.0 && fpr < 1.0)) return Errc::fpr_out_of_range;
    Expected<ApbfConfig> start =
        block_bits ? blocked(window, k, l, block_bits, b, capacity) : with_shape(window, k, l, capacity);
    if (!start) return start;
    ApbfConfig c = *start;
    const uint64_t unit = block_bits ? block_bits : 1;
    const uint64_t max_units = kMaxStructureBits / c.slices() / unit;
    auto meets = [&](uint64_t units) {
      c.slice_bits = units * unit;
      return c.model_fpr() <= fpr;
    };
    const uint64_t floor_units = block_bits ? 1 : 64;  // the smallest valid slice
    uint64_t lo = 0, hi = c.slice_bits / unit;           // invariant: hi meets, lo does not
    if (meets(hi)) {
      lo = hi / 2;
      while (lo >= floor_units && meets(lo)) hi = lo, lo /= 2;
      if (lo < floor_units) lo = floor_units - 1;
    } else {
      do {
        if (hi >= max_units) return Errc::too_large;
        lo = hi;
        hi = hi * 2 < max_units ? hi * 2 : max_units;
      } while (!meets(hi));
    }
    while (hi - lo > 1) {
      const uint64_t mid = lo + (hi - lo) / 2;
      (meets(mid) ? hi : lo) = mid;
    }
    c.slice_bits = hi * unit;
    if (Status s = c.validate(); !s) return s;
    return c;
  }

  // Bits of memory per window item (per expected insertion for time windows).
  constexpr double bits_per_item() const noexcept {
    const uint64_t n = capacity ? capacity : window.span;
    return static_cast<double>(usable_slice_bits()) * slices() / static_cast<double>(n ? n : 1);
  }
};

// The age-partitioned filter over an arena: a handle (config and pointers);
// its state lives in the arena. A copy is a view of the same state
// (docs/API.md: handles and threads); nothing to free.
class ApbfFilter : public BulkOps<ApbfFilter> {
 public:
  constexpr ApbfFilter() noexcept = default;  // empty: create() one

  // The arena create() carves for c, from any 64-byte aligned base (c's error if invalid).
  static constexpr Expected<size_t> bytes_needed(const ApbfConfig& c) noexcept {
    if (Status s = c.validate(); !s) return s;
    return ArenaLayout{}.add(sizeof(State)).add(bits::words_for(c.usable_slice_bits()) * 8 * c.slices()).bytes();
  }

  // Validates c, carves the filter's state from arena and clears it; on error
  // the arena is left as it was.
  static Expected<ApbfFilter> create(const ApbfConfig& c, Arena& arena) noexcept {
    if (Status s = c.validate(); !s) return s;
    const size_t mark = arena.used();
    auto state = arena.carve_array<State>(1);
    const uint64_t slice_words = bits::words_for(c.usable_slice_bits());
    auto words = arena.carve_array<uint64_t>(slice_words * c.slices());
    if (!state || !words) {
      arena.rewind(mark);
      return Errc::arena_too_small;
    }
    ApbfFilter f;
    f.cfg_ = c;
    f.state_ = *state;
    f.words_ = *words;
    f.slice_words_ = slice_words;
    f.place_ = c.placement();
    f.state_->start(c.window.kind, c.generation_length());
    bits::clear(f.words_, slice_words * c.slices());
    return f;
  }

  // Time windows: one shift per generation that ended by `now` (at most k+l).
  Status advance(uint64_t now) noexcept {
    return state_->schedule.advance(now, cfg_.slices(), [this] { shift(); });
  }

  // Whether h was inserted within the window (or is a false positive).
  bool contains(KeyHash h) const noexcept {
    return jump_back_scan(cfg_.k, cfg_.l, [&](uint32_t i) { return hit(h, i); });
  }

  // Records h as inserted now.
  void insert(KeyHash h) noexcept {
    begin_insert();
    for (uint32_t i = 0; i < cfg_.k; ++i) {
      const uint32_t phys = physical(i);
      if (cfg_.block_bits == 0) {
        bits::set(slice(phys), place_.bit(h, phys));
      } else {
        bits::Pattern<8> p;
        uint64_t* blk = block_pattern(h, phys, p);
        for (uint32_t w = 0; w < cfg_.block_bits / 64; ++w) blk[w] |= p.mask[w];
      }
    }
  }

  // insert(h[i]) for i < n in order. Unblocked, an insert writes k lines:
  // all are asked for, each bit computed once for the request and kept for
  // the insert D keys later (asking through prefetch_insert(), bits computed
  // twice, made this 3.9 times as fast at W = 64M but 1.9 times as slow in
  // the caches; docs/PERFORMANCE.md, 2026-11-27). A shift between the two
  // moves the newest slices, so such a key's bits are computed again.
  // Blocked: BulkOps' form.
  void insert_bulk(const KeyHash* h, size_t n) noexcept {
    if (cfg_.block_bits != 0) return BulkOps::insert_bulk(h, n);
    constexpr size_t D = kPrefetchDistance;
    struct Ahead {
      uint32_t current;                  // state_->current the bits were computed for
      uint64_t bit[ApbfConfig::kMaxK];   // bit index from words_, newest slice first
    } ahead[D];
    auto request = [&](size_t i) {
      Ahead& a = ahead[i % D];
      a.current = state_->current;
      for (uint32_t j = 0; j < cfg_.k; ++j) {
        const uint32_t phys = physical(j);
        a.bit[j] = phys * slice_words_ * 64 + place_.bit(h[i], phys);
        bits::prefetch_write(words_ + a.bit[j] / 64);
      }
    };
    for (size_t i = 0; i < n && i < D; ++i) request(i);
    for (size_t i = 0; i < n; ++i) {
      const Ahead& a = ahead[i % D];
      if (a.current != state_->current || state_->schedule.insertions_before_rotation() == 0) {
        insert(h[i]);
      } else {
        begin_insert();
        for (uint32_t j = 0; j < cfg_.k; ++j) bits::set(words_, a.bit[j]);
      }
      if (i + D < n) request(i + D);  // into the slot key i just left
    }
  }

  // contains(h) then insert(h), in one pass: the dedup primitive.
  bool test_and_insert(KeyHash h) noexcept {
    const bool seen = contains(h);
    insert(h);
    return seen;
  }

  // Prefetches the lines h will touch first (the bulk forms call it ahead;
  // a caller pipelining its own burst may too). Blocked (APBBF) only: the
  // slice Algorithm 1 probes first after each miss (l, l - k, ...: all of a
  // fresh key's probes at fill 1/2 but the runs after a hit) and the k
  // slices an insert sets. At W = 16M and 64M that took the blocked bulk
  // forms from ~1200-1500 to ~260-330 cycles per key, for up to 19% more
  // where the filter sits in the caches (W = 64K, 1M). The same requests left
  // unblocked APBF mixed: test_and_insert 16% faster at 64M, contains 9-16% and
  // everything at 1M 21-27% slower (docs/PERFORMANCE.md, 2026-11-27): so none.
  void prefetch(KeyHash h) const noexcept {
    if (cfg_.block_bits == 0) return;
    for (int64_t i = cfg_.l; i >= 0; i -= cfg_.k) request_block(h, static_cast<uint32_t>(i));
    for (uint32_t i = 0; i < cfg_.k; ++i)
      if (i > cfg_.l || (cfg_.l - i) % cfg_.k != 0) request_block(h, i);  // not asked above
  }
  // The lines an insert of h writes (BulkOps::insert_bulk asks for these
  // alone): the blocks of the k newest slices. Unblocked, none: the
  // unblocked insert_bulk above asks for its lines itself, its bits computed
  // once.
  void prefetch_insert(KeyHash h) const noexcept {
    if (cfg_.block_bits == 0) return;
    for (uint32_t i = 0; i < cfg_.k; ++i) request_block(h, i);
  }

  // Whether logical slice i (0 = newest) holds h's bit: what Algorithm 1
  // probes, exposed for inspection and tests.
  bool slice_holds(KeyHash h, uint32_t logical) const noexcept { return hit(h, logical); }

  // Whether `image`, a saved copy of this filter's arena, holds a state this
  // filter can be in: dedup/snapshot.hpp asks before a load, since a crafted
  // image passes its checksum. Any bits will do; the header must keep this
  // filter's epoch schedule and name one of its slices.
  bool accepts_image(const ArenaImage& image) const noexcept {
    return state_->accepts_image(image, cfg_.slices());
  }
  const ApbfConfig& config() const noexcept { return cfg_; }  // the configuration it was created with
  uint64_t insertions() const noexcept { return state_->insertions; }  // insertions so far
  // Set bits (non-zero cells) over all of them (control plane: reads the whole filter).
  double fill_ratio() const noexcept {
    const uint64_t total = slice_words_ * cfg_.slices();
    return static_cast<double>(bits::popcount(words_, total)) / (static_cast<double>(total) * 64);
  }

 private:
  using State = EpochRingHeader;  // core/window.hpp; `current`: the physical slice of logical slice 0 (the newest)

  uint32_t physical(uint32_t logical) const noexcept { return (state_->current + logical) % cfg_.slices(); }
  uint64_t* slice(uint32_t phys) const noexcept { return words_ + phys * slice_words_; }
  bool hit(KeyHash h, uint32_t logical) const noexcept {
    const uint32_t phys = physical(logical);
    return place_.holds(slice(phys), h, phys);
  }

  // APBBF: physical segment j's hash picks the block (multiply-shift of
  // the j-th double hash) and, mixed, the bit in each of the b parts.
  uint64_t* block_pattern(KeyHash h, uint32_t phys, bits::Pattern<8>& p) const noexcept {
    const uint64_t x = placement::ApbfSlice::slice_hash(h, phys);
    place_.pattern(x, p);
    return slice(phys) + place_.block(x) * (cfg_.block_bits / 64);
  }

  // Requests the block h's pattern reads in logical slice i (blocked only).
  void request_block(KeyHash h, uint32_t logical) const noexcept {
    const uint32_t phys = physical(logical);
    const uint64_t x = placement::ApbfSlice::slice_hash(h, phys);
    bits::prefetch_read(slice(phys) + place_.block(x) * (cfg_.block_bits / 64));
  }

  // Every insertion starts here: a count window's generation ends first.
  void begin_insert() noexcept {
    if (state_->schedule.rotate_before_insert()) shift();
    ++state_->insertions;
  }

  // The oldest slice (logical k+l-1) is cleared and becomes the newest.
  void shift() noexcept {
    state_->current = (state_->current + cfg_.slices() - 1) % cfg_.slices();
    bits::clear(slice(state_->current), slice_words_);
  }


  ApbfConfig cfg_{};
  State* state_ = nullptr;
  uint64_t* words_ = nullptr;
  uint64_t slice_words_ = 0;
  placement::ApbfSlice place_{};
};

}  // namespace agebloom
