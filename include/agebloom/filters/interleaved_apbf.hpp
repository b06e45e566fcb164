// Age-partitioned filter in the interleaved, one-cache-line layout.
//
// The APBF's k + l slices (Age-Partitioned Bloom Filters, §5) become the lanes of one 64-byte
// line: 16 lanes of 32 bits (k + l <= 16) or 8 of 64. A key picks one line
// (from h1); in each physical lane j it has its own pattern of b bits, one in
// each of b parts of the lane (§6's partitioned blocks), drawn from h2 mixed
// with lane j's salt, so each physical slice keeps its own hash function as
// in the APBF. Then
//   - an insert ORs the key's patterns into the k newest lanes of one line,
//   - a query runs Algorithm 1's jump-back scan over the lanes of one line,
//   - a generation shift clears one lane in every line.
// Window w = l·g and slack k·g as in the APBF.
//
// The model. The paper's recurrence F treats slices as independent; here they
// are not: every slice of a query's line holds the keys that chose that line,
// and adjacent slices share the keys of the generations they were both young
// in. (With slice-independent fills the model read 1.3-2.8x below measured.)
// Conditioned on N_t, the number of keys of generation t in the query's line
// (independent, Poisson(g / lines)), the lanes are independent: lane i holds
// L_i = Σ N_t over its generations and matches with (1 - (1 - b/B)^L_i)^b.
// So FP = E_N[F(k, l, match(L))], evaluated by Monte Carlo over a fixed
// sequence of 2^13 draws of N (deterministic; sampling error well under the
// tests' 15%), at the end of a generation (every slice as full as it gets).
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
#include "agebloom/filters/apbf.hpp"
#include "agebloom/filters/bulk_ops.hpp"
#include "agebloom/filters/lane_lines.hpp"

namespace agebloom {

// InterleavedApbfConfig::for_fpr's named parameters, read at the call site:
//   InterleavedApbfConfig::for_fpr(window, fpr, {.lane_bits = ...})
// (every structure's own, so a knob of one cannot be passed to another).
struct InterleavedApbfSizing {
  uint32_t lane_bits = 32;  // 32: 16 slices per line
  uint64_t capacity = 0;  // expected insertions per time window
};

// The one-line APBF's shape: what for_fpr() returns and
// InterleavedApbfFilter::create() builds.
struct InterleavedApbfConfig {
  Window window = Window::count(0);  // the window kept (count or time)
  uint32_t k = 0;           // lanes each insertion writes
  uint32_t l = 0;           // generations in the window; k + l <= lanes
  uint32_t b = 0;           // bits per lane per key, one per part: a power of two
  uint32_t lane_bits = 32;  // 32 (16 lanes) or 64 (8 lanes)
  uint64_t lines = 0;       // 64-byte lines
  uint64_t generation = 0;  // g: insertions per generation (count windows)
  uint64_t capacity = 0;    // expected insertions per window (time windows)

  // Stream samples model_fpr() averages over: a time window's generations
  // hold random numbers of keys, so its FP is estimated, not closed form.
  static constexpr uint32_t kModelSamples = 1u << 13;

  constexpr uint32_t lanes() const noexcept { return lane_bits ? 512 / lane_bits : 0; }  // lanes per 512-bit line
  constexpr uint32_t slices() const noexcept { return k + l; }  // k + l
  constexpr bool operator==(const InterleavedApbfConfig&) const = default;  // field by field
  // log2 of the bits per part of a lane (lane_bits / b): the width of each
  // part's offset field of h2.
  constexpr uint32_t log2_part_bits() const noexcept {
    return b && lane_bits ? static_cast<uint32_t>(__builtin_ctz(lane_bits / b)) : 0;
  }
  constexpr uint64_t generation_length() const noexcept { return agebloom::generation_length(window, l, generation); }  // insertions (count) or ticks (time) per generation
  // Expected insertions per generation (generation_load() above).
  constexpr double generation_load() const noexcept {
    return agebloom::generation_load(window, l, generation, capacity);
  }

  // The Errc of the first field out of range, or ok.
  constexpr Status validate() const noexcept {
    if (Status s = window.validate(); !s) return s;
    if (lane_bits != 32 && lane_bits != 64) return Errc::block_size_invalid;
    if (k == 0 || k > lanes()) return Errc::k_out_of_range;
    if (l == 0 || k + l > lanes()) return Errc::l_out_of_range;
    if (!is_pow2(b) || b > lane_bits / 2 || b * log2_part_bits() > 64) return Errc::bits_per_block_invalid;
    if (!window.is_time() && (generation == 0 || generation * l < window.span))
      return Errc::window_smaller_than_segments;
    if (lines == 0) return Errc::budget_too_small;
    if (lines > kMaxStructureBits / 512) return Errc::too_large;
    return Errc::ok;
  }

  // FP treating the slices as independent (what the paper's F assumes):
  // cheap, and the lower bound for_fpr starts its search from.
  constexpr double independent_fpr() const noexcept {
    double fill[32] = {};
    const double m = static_cast<double>(lines) * lane_bits, g = generation_load();
    for (uint32_t i = 0; i < slices(); ++i)
      fill[i] = bloom_math::partitioned_block_fpr(m, g * (i < k ? i + 1 : k), lane_bits, b);
    return ApbfConfig::scan_fpr(k, l, fill);
  }

  // E_N[F(match(L))] over Poisson line loads (see the header comment).
  constexpr double model_fpr() const noexcept {
    const double mu = generation_load() / static_cast<double>(lines);
    // match[L] for loads up to kMaxLoad; heavier lines (probability < 1e-12
    // at any mu this sizing reaches) count as matching everything.
    constexpr uint32_t kMaxLoad = 255;
    double match[kMaxLoad + 1] = {};
    const double keep = 1.0 - static_cast<double>(b) / lane_bits;
    double kept = 1.0;
    for (uint32_t L = 0; L <= kMaxLoad; ++L, kept *= keep) match[L] = math::pow(1.0 - kept, b);
    // Poisson CDF for inverse-transform sampling.
    double cdf[kMaxLoad + 1] = {};
    double p = math::exp(-mu), acc = 0.0;
    for (uint32_t n = 0; n <= kMaxLoad; ++n) {
      acc += p;
      cdf[n] = acc;
      p *= mu / (n + 1);
    }
    const uint32_t gens = slices() + k;  // generations touching some slice
    uint64_t rng = 0x1dea'5eed'0000'0001ULL;
    double sum = 0.0;
    for (uint32_t s = 0; s < kModelSamples; ++s) {
      uint32_t n_gen[48] = {};
      for (uint32_t t = 0; t < gens; ++t) {
        const double u = static_cast<double>(mix64(rng += 0x9e3779b97f4a7c15ULL) >> 11) * 0x1p-53;
        uint32_t n = 0;
        while (n < kMaxLoad && u > cdf[n]) ++n;
        n_gen[t] = n;
      }
      // Logical slice i holds generations i .. i - min(i+1, k) + 1 counted
      // back from the newest (t = 0): the ones written while it was young.
      double fill[32] = {};
      for (uint32_t i = 0; i < slices(); ++i) {
        uint32_t load = 0;
        for (uint32_t t = (i + 1 > k ? i + 1 - k : 0); t <= i; ++t) load += n_gen[t];
        fill[i] = load > kMaxLoad ? 1.0 : match[load];
      }
      sum += ApbfConfig::scan_fpr(k, l, fill);
    }
    return sum / kModelSamples;
  }

  // Bits of memory per window item (per expected insertion for time windows).
  constexpr double bits_per_item() const noexcept {
    const uint64_t n = capacity ? capacity : window.span;
    return static_cast<double>(lines) * 512 / static_cast<double>(n ? n : 1);
  }

  // One step of for_fpr's growth under the correlated model: 4% more lines
  // (at least one).
  static constexpr uint64_t grown_lines(uint64_t lines) noexcept { return lines + lines / 25 + 1; }

  // Fewest lines meeting `fpr`, every lane used (l = lanes - k), g = ⌈W/l⌉:
  // (k, b) and a first line count from the cheap independent model, then
  // lines grow 4% a step until the correlated model meets the target.
  static constexpr Expected<InterleavedApbfConfig> for_fpr(Window window, double fpr, InterleavedApbfSizing sizing = {}) noexcept {
    const uint32_t lane_bits = sizing.lane_bits;
    const uint64_t capacity = sizing.capacity;
    if (Status s = window.validate(); !s) return s;
    if (!(fpr > 0.0 && fpr < 1.0)) return Errc::fpr_out_of_range;
    if (lane_bits != 32 && lane_bits != 64) return Errc::block_size_invalid;
    const uint64_t n = capacity ? capacity : (window.is_time() ? 0 : window.span);
    if (n == 0) return Errc::capacity_zero;
    Expected<InterleavedApbfConfig> best = Errc::too_large;
    for (uint32_t k = 1; k <= 512 / lane_bits / 2; ++k)
      for (uint32_t b = 1; b <= 8; b *= 2) {
        InterleavedApbfConfig c;
        c.window = window;
        c.k = k;
        c.l = 512 / lane_bits - k;
        c.b = b;
        c.lane_bits = lane_bits;
        c.capacity = n;
        c.generation = window.is_time() ? 0 : math::ceil_div(window.span, c.l);
        // Start the doubling at a quarter of the lines a plain Bloom filter
        // of the window would take: below any answer, and not so few that a
        // line's Poisson load (and the model's sums) become enormous.
        uint64_t lo = 0, hi = static_cast<uint64_t>(bloom_math::bits_for(static_cast<double>(n), fpr) / 2048) + 1;
        for (c.lines = hi; c.independent_fpr() > fpr && hi < (uint64_t{1} << 40); c.lines = hi) lo = hi, hi *= 2;
        if (c.independent_fpr() > fpr) continue;
        while (hi - lo > 1) {
          c.lines = lo + (hi - lo) / 2;
          (c.independent_fpr() <= fpr ? hi : lo) = c.lines;
        }
        c.lines = hi;
        if (c.validate() && (!best || c.lines < best->lines)) best = c;
      }
    if (!best) return best;
    // The first line count of the 4% steps from there (grown_lines) whose
    // correlated model meets the target. The model is monotone in lines (each
    // sample's line loads only fall as lines grow), so gallop over the steps
    // (1, 2, 4, ... ahead) and bisect between the last miss and the first
    // hit: the step a linear walk would stop at, in a few dozen model
    // evaluations even where the target lies far past the independent answer
    // (FPR 1e-30, window 1000: ~70 steps). No step within the size limit:
    // too_large.
    const uint64_t first = best->lines;
    uint64_t last = 0;  // the last step within the size limit
    for (uint64_t x = grown_lines(first); x <= kMaxStructureBits / 512; x = grown_lines(x)) ++last;
    auto lines_at = [&](uint64_t steps) {
      uint64_t x = first;
      for (uint64_t i = 0; i < steps; ++i) x = grown_lines(x);
      return x;
    };
    auto meets = [&](uint64_t steps) {
      best->lines = lines_at(steps);
      return best->model_fpr() <= fpr;
    };
    if (meets(0)) return best;
    uint64_t miss = 0, hit = 1;
    for (;; miss = hit, hit *= 2) {
      if (hit >= last) {
        hit = last;
        if (hit <= miss || !meets(hit)) return Errc::too_large;
        break;
      }
      if (meets(hit)) break;
    }
    best->lines = lines_at(math::bisect_smallest(miss, hit, meets));
    return best;
  }
};

// The one-line APBF over an arena, with Lane-wide lanes (the registry's
// "interleaved-apbf" is Lane = uint32_t): a handle; its lines live in the arena.
template <class Lane = uint32_t>
class InterleavedApbfFilter : public BulkOps<InterleavedApbfFilter<Lane>, 16> {
  static_assert(sizeof(Lane) == 8 || sizeof(Lane) == 4, "lanes of 64 or 32 bits");

 public:
  static constexpr uint32_t kLaneBits = sizeof(Lane) * 8;  // bits per lane
  static constexpr uint32_t kLanes = 512 / kLaneBits;  // lanes per line

  constexpr InterleavedApbfFilter() noexcept = default;  // empty: create() one

  // The arena create() carves for c, from any 64-byte aligned base (c's error if invalid).
  static constexpr Expected<size_t> bytes_needed(const InterleavedApbfConfig& c) noexcept {
    if (Status s = check(c); !s) return s;
    return Lines::template bytes_with<State>(c.lines);
  }

  // Validates c, carves the filter's state from arena and clears it; on error
  // the arena is left as it was.
  static Expected<InterleavedApbfFilter> create(const InterleavedApbfConfig& c, Arena& arena) noexcept {
    if (Status s = check(c); !s) return s;
    auto carved = Lines::template carve_with<State>(arena, c.lines);
    if (!carved) return carved.error();
    InterleavedApbfFilter f;
    f.cfg_ = c;
    f.state_ = carved->header;
    f.lines_ = carved->lines;
    f.state_->start(c.window.kind, c.generation_length());
    return f;
  }

  // Time windows: expires what ended by `now` (time_went_backwards, and no change,
  // if now is before the last now). Count windows: no-op. Call it before a burst.
  Status advance(uint64_t now) noexcept {
    return state_->schedule.advance(now, cfg_.slices(), [this] { shift(); });
  }

  // Whether h was inserted within the window (or is a false positive).
  bool contains(KeyHash h) const noexcept {
    const Line& line = lines_.of(h);
    return jump_back_scan(cfg_.k, cfg_.l, [&](uint32_t i) {
      const uint32_t j = physical(i);
      const Lane p = pattern(h, j);
      return (line.lane[j] & p) == p;
    });
  }

  // Records h as inserted now.
  void insert(KeyHash h) noexcept {
    if (state_->schedule.rotate_before_insert()) shift();
    ++state_->insertions;
    Line& line = lines_.of(h);
    for (uint32_t i = 0; i < cfg_.k; ++i) {
      const uint32_t j = physical(i);
      line.lane[j] |= pattern(h, j);
    }
  }

  // contains(h) then insert(h), in one pass: the dedup primitive.
  bool test_and_insert(KeyHash h) noexcept {
    const bool seen = contains(h);
    insert(h);
    return seen;
  }

  // Prefetches the lines h will touch first (the bulk forms call it ahead).
  void prefetch(KeyHash h) const noexcept { lines_.prefetch(h); }

  // Whether `image`, a saved copy of this filter's arena, holds a state this
  // filter can be in: dedup/snapshot.hpp asks before a load, since a crafted
  // image passes its checksum. Any bits will do; the header must keep this
  // filter's epoch schedule and name one of its slices.
  bool accepts_image(const ArenaImage& image) const noexcept {
    return state_->accepts_image(image, cfg_.slices());
  }
  const InterleavedApbfConfig& config() const noexcept { return cfg_; }  // the configuration it was created with
  uint64_t insertions() const noexcept { return state_->insertions; }  // insertions so far
  // Set bits (non-zero cells) over all of them (control plane: reads the whole filter).
  double fill_ratio() const noexcept { return lines_.fill_ratio(); }

 private:
  using Lines = LaneLines<Lane>;
  using Line = typename Lines::Line;
  using State = EpochRingHeader;  // core/window.hpp; `current`: the physical slice of logical slice 0 (the newest)

  static constexpr Status check(const InterleavedApbfConfig& c) noexcept {
    if (Status s = c.validate(); !s) return s;
    if (c.lane_bits != kLaneBits) return Errc::block_size_invalid;
    return Errc::ok;
  }

  uint32_t physical(uint32_t logical) const noexcept { return (state_->current + logical) % cfg_.slices(); }

  // Physical lane j's own hash: h2 mixed with the lane's salt.
  Lane pattern(KeyHash h, uint32_t j) const noexcept {
    bits::Pattern<1> p;
    bits::partitioned_pattern(mix64(h.h2 ^ kBlockSalts.salt[j]), cfg_.b, cfg_.log2_part_bits(), p);
    return static_cast<Lane>(p.mask[0]);
  }

  // The oldest lane becomes the newest, cleared in every line.
  void shift() noexcept {
    state_->current = (state_->current + cfg_.slices() - 1) % cfg_.slices();
    lines_.clear_lane(state_->current);
  }

  InterleavedApbfConfig cfg_{};
  State* state_ = nullptr;
  Lines lines_{};
};

}  // namespace agebloom
