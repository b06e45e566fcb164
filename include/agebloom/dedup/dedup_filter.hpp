// The dedup decision shared by dedup_fwd and agebloom-replay: a filter chosen
// by name over a count or time window, and the policy that turns its answer
// into a verdict.
//
//   insert-always:  every keyed packet is inserted; a packet is a duplicate if
//                   its key was inserted within the window ("suppress repeats
//                   within the window of the previous sighting").
//   insert-on-miss: only packets that pass are inserted ("pass at most one
//                   per window", the click-fraud default).
//
// Hosted code (lib/): it holds any registered structure (registry/) by value,
// and the filter itself lives in the caller's arena as everywhere else.
#pragma once

#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "agebloom/agebloom.hpp"
#include "agebloom/inference/block_timing_posterior.hpp"
#include "agebloom/inference/penalty.hpp"
#include "agebloom/model/planner.hpp"
#include "agebloom/registry/filter_config.hpp"

// Compiled in libagebloom: exported from the shared library, which hides
// everything else (core/export.h).
#pragma GCC visibility push(default)

namespace agebloom::dedup {

// A filter that places each key in one line it can name, and takes those
// lines back in its bulk test_and_insert (the one-line guarded epoch layouts):
// DedupFilter then locates a burst's keys once, when it requests their lines.
template <class F>
concept LocatesLines = requires(F& f, const KeyHash* h, void** kept, typename F::Line* const* at, size_t n,
                                 bool* out) {
  f.locate_burst(h, n, kept);  // kept[i] = h[i]'s line, requested
  f.test_and_insert_bulk_at(h, at, n, out);
};

// How a verdict updates the filter (the policies above).
enum class Policy : uint8_t { insert_always, insert_on_miss };

// "insert-always" or "insert-on-miss", as --policy spells them.
const char* policy_name(Policy p) noexcept;
// The policy --policy names; false (out untouched) for any other string.
bool parse_policy(std::string_view s, Policy& out) noexcept;

// How a verdict is reached:
//   filter:    the structure's yes/no (no false negatives in the window);
//   penalties: the inferential filter's minimum expected penalty per query
//              (Dautrich & Ravishankar, Sec. 2.6): suppress iff
//              $FP·(1 − P) <= $FN·P with P = P(I_x < w | R_x). Timing
//              filters (tbf, btbf) over count windows only.
enum class Decide : uint8_t { filter, penalties };

// What a time window does when a burst of distinct keys (an attack, a surge)
// drives its current epoch past the insertions it was sized for:
//   keep_window: the epoch lasts its time; every key of the window is kept,
//                the FPR rises above the model (reported: overloaded_epochs);
//   keep_fpr:    the epoch ends early once it holds its design load; the FPR
//                stays at the model, the window shrinks (reported:
//                early_rotations). The epoch filters only (guarded-epoch,
//                guarded-epoch-blocked, ring, interleaved); tlbf does this by
//                design, within its memory budget.
enum class FloodPolicy : uint8_t { keep_window, keep_fpr };

// One penalty-aware verdict, with what it expects to cost and what the
// plain filter would have said on the same state.
struct PenaltyVerdict {
  bool duplicate = false;         // suppress
  bool standard = false;          // the structure's own yes/no
  double posterior = 0.0;         // P(I_x < w | R_x)
  double expected_penalty = 0.0;  // of `duplicate` under the query's penalties
};

// What the user asks for, parsed at the edge (filter_options.hpp):
// `structure` empty asks the planner (lib/model) for the structure with the
// fewest bits per item that meets `fpr` over the window (for a time window:
// over `capacity` insertions) among the registry's auto candidates, the
// layouts measured fastest per packet: a dataplane's cost. A structure named asks for its best shape.
struct FilterSpec {
  std::optional<Structure> structure;  // nullopt: "auto"
  Window window = Window::count(0);  // --window N (count) or --ttl D (time, in ns)
  double fpr = 0.01;                 // target false-positive rate, in (0, 1); 0 with mem_bytes:
                                     // the lowest the memory holds (sizing by memory, --mem alone)
  uint64_t capacity = 0;  // expected insertions per time window; 0 with --ttl: unknown (auto plans tlbf,
                          // a named structure that needs one takes kDefaultTtlCapacity)
  uint64_t mem_bytes = 0;  // --mem: the filter's memory at most (tlbf: its budget); 0 = no limit
  FloodPolicy on_flood = FloodPolicy::keep_window;  // --on-flood (time windows)
  // The planner's limits, taken by every tool so that a plan agebloom-plan
  // prints is rebuilt exactly from the same options (planner.hpp).
  std::optional<double> max_npws;           // --max-npws
  std::optional<double> max_bits_per_item;  // --max-bits-per-item
  std::optional<double> max_accesses;       // --max-accesses (per query)
  std::optional<unsigned> block_bits;       // --block-bits: B of the blocked structures (default 512)
};

// Whether --mem is the budget of a rate-adaptive filter (tlbf named, or
// auto over a --ttl without --capacity) rather than a bound on the arena.
bool mem_is_budget(const FilterSpec& spec) noexcept;

// What DedupFilter::plan builds from `spec`, with the planner's figures
// (agebloom-plan prints them): `structure` empty plans among the auto
// candidates, or among all structures when none of those meets the target
// within the limits, and a registry row's size rule (StructureInfo::auto_over_bytes:
// interleaved-swept where the plan is interleaved over 4 MiB); mem_bytes is a limit, or with fpr 0 the input (the lowest FPR
// that fits); --on-flood keep-fpr sets the epochs' capacity trigger. A
// refusal keeps the planner's code (usage error, FPR out of reach, limits).
model::PlanResult plan_spec(const FilterSpec& spec);

// The capacity a named structure that needs one assumes for --ttl without --capacity.
inline constexpr uint64_t kDefaultTtlCapacity = 1'000'000;

// The name --filter takes for `spec.structure` ("auto" when empty).
const char* spec_name(const FilterSpec& spec) noexcept;

// Any registered structure planned from a FilterSpec, built in the caller's
// arena, and the dedup verdict over it. Plain data, nothing to free: a copy
// after create() is a view of the same filter state (docs/API.md), one
// writer at a time.
class DedupFilter {
 public:
  // Plans `spec`; on error returns a message naming the problem.
  static std::variant<DedupFilter, std::string> plan(const FilterSpec& spec);
  // For --filter auto: a line saying what auto chose and why, and the most
  // compact structure for the same window and FPR when it would take under
  // 80% of the memory ("" for a named structure, or when auto is the compact
  // one too). The tools print it at start, so a user sees the trade.
  static std::string auto_note(const FilterSpec& spec, const DedupFilter& chosen);
  // The filter of a ready configuration (a planner's Plan::config).
  explicit DedupFilter(const FilterConfig& config) : config_(config) {}
  DedupFilter() = default;  // an empty slot (a worker before its filter is made)

  // The arena create() needs, from any 64-byte aligned base.
  size_t bytes_needed() const noexcept { return config_.bytes_needed(); }
  // Creates the filter in `arena` (at least bytes_needed()). Message on error.
  std::string create(Arena& arena);

  // Whether `image` (a saved copy of this filter's arena, as a snapshot
  // holds it) is a state the structure can be in: its headers' indices,
  // counts and flags (each structure's accepts_image). A snapshot is checked
  // so before it is loaded (dedup/snapshot.hpp): its checksum catches
  // damage, not an image crafted and resealed.
  bool accepts_state(const ArenaImage& image) const noexcept {
    return std::visit([&](const auto& f) { return f.accepts_image(image); }, filter_);
  }

  // Time windows: expire what ended by `now`. Count windows: no-op.
  Status advance(uint64_t now) noexcept {
    return std::visit([&](auto& f) { return f.advance(now); }, filter_);
  }

  // The verdict for one keyed packet: true = duplicate (suppress).
  // One visit: the flood watch reads the concrete filter's schedule too.
  bool is_duplicate(KeyHash h, Policy policy) noexcept {
    return std::visit(
        [&](auto& f) {
          const uint64_t fill_before = flood_.design ? epoch_fill_of(f) : 0;
          bool dup;
          if (policy == Policy::insert_always) {
            dup = f.test_and_insert(h);
          } else {
            dup = f.contains(h);
            if (!dup) f.insert(h);
          }
          if (flood_.design) watch_flood_of(f, policy == Policy::insert_always || !dup ? 1 : 0, fill_before);
          return dup;
        },
        filter_);
  }
  // The verdicts of n keyed packets in arrival order: exactly those of n calls
  // of advance(now[i]) then is_duplicate(h[i], policy), with the filter lines of
  // later keys prefetched while earlier ones are probed (lib/dedup/dedup_burst.cpp).
  // now == nullptr: the caller advanced the filter already (one clock per burst);
  // otherwise now[0..n) must not decrease.
  void decide_burst(const KeyHash* h, const uint64_t* now, size_t n, Policy policy, bool* dup) noexcept {
    decide_burst(h, now, n, policy, dup, nullptr);
  }
  // The same, with the lines prefetch_burst(h, n, at) kept (at == nullptr: none).
  void decide_burst(const KeyHash* h, const uint64_t* now, size_t n, Policy policy, bool* dup,
                    void* const* at) noexcept;
  // Requests the filter lines (blocks, segments' words) that n keys will
  // touch, changing no state. A caller that keys the next burst before it
  // decides this one calls it as soon as the hashes are known, so the lines
  // arrive while other work runs instead of at the probe (dedup_fwd's
  // worker; docs/PERFORMANCE.md, "One burst in flight").
  void prefetch_burst(const KeyHash* h, size_t n) const noexcept {
    std::visit([&](const auto& f) {
      if constexpr (std::decay_t<decltype(f)>::kRequestsLines)  // bulk_ops.hpp: some ask for nothing
        for (size_t i = 0; i < n; ++i) f.prefetch(h[i]);
    }, filter_);
  }
  // prefetch_burst that also keeps where each key lives, for the filters
  // that place a key in one line (LocatesLines): at[i] is h[i]'s line. Handed
  // back to decide_burst with the same hashes, it spares locating each key a
  // second time (a multiply and a request, ~10 instructions per key;
  // docs/PERFORMANCE.md). at holds n entries; other filters leave it as it
  // is and decide_burst does not read it. Valid until the filter is created
  // again: a structure's lines never move, rotations included.
  void prefetch_burst(const KeyHash* h, size_t n, void** at) const noexcept {
    std::visit([&](const auto& f) {
      if constexpr (LocatesLines<std::decay_t<decltype(f)>>) {
        // The filter asks for the lines at L2's locality: decide_burst, a
        // burst later, asks for each again just before its probe, and L1
        // keeps the next burst's frames meanwhile (dedup_fwd with the PMD on
        // hugepages: 1.06-1.10 of 5tswap -> 1.01-1.05; docs/PERFORMANCE.md).
        f.locate_burst(h, n, at);
      } else if constexpr (std::decay_t<decltype(f)>::kRequestsLines) {
        for (size_t i = 0; i < n; ++i) f.prefetch(h[i]);
      }
    }, filter_);
  }
  // Whether h was inserted within the window (or is a false positive); no insertion.
  bool contains(KeyHash h) const noexcept {
    return std::visit([&](const auto& f) { return f.contains(h); }, filter_);
  }

  // Penalty-aware decisions (Decide::penalties). "" when `config` keeps
  // posteriors (the timing filters over a count window), else why not.
  static std::string posterior_support(const FilterConfig& config);
  // Prepares the posteriors (before or after create()), with D(j) for the
  // key stream (default: every insertion a distinct key). Message on error.
  std::string enable_posteriors(const inference::DistinctItems& distinct = {});
  bool has_posteriors() const noexcept { return posterior_.has_value(); }  // enable_posteriors() succeeded
  // P(I_x < w | R_x) for prior p_x; needs has_posteriors() and create().
  double posterior(KeyHash h, double prior) const noexcept;
  // The verdict minimising the expected penalty, then the policy's insertion
  // (insert-always: every key; insert-on-miss: the keys that pass).
  PenaltyVerdict decide_with_penalties(KeyHash h, Policy policy, double prior, inference::Penalties pen) noexcept;

  // The concrete filter, for code that wants its own loop over it.
  template <class F>
  decltype(auto) visit(F&& f) {
    return std::visit(static_cast<F&&>(f), filter_);
  }
  // The body the filter's hot paths run (isa.hpp); structures with one body
  // run the baseline.
  Isa isa() const noexcept {
    return std::visit([](const auto& f) {
      if constexpr (requires { f.isa(); }) return f.isa();
      else return Isa::baseline;
    }, filter_);
  }
  // The widest body they may use (create() allows every one the CPU has):
  // for benchmarks that show what a wider body buys.
  void use_isa(Isa widest) noexcept {
    std::visit([widest](auto& f) {
      if constexpr (requires { f.use_isa(widest); }) f.use_isa(widest);
    }, filter_);
  }

  const FilterConfig& config() const noexcept { return config_; }         // the planned configuration
  Structure structure() const noexcept { return config_.structure; }      // which registered structure
  std::string name() const { return agebloom::name(config_.structure); }  // its registry name
  // One line of parameters, e.g. "r=8 k=10 segment_bits=1803999".
  std::string parameters() const;
  // What the filter promises, in the window's own units (insertions, or
  // s/ms/us), for the tools' start line: the repeats always suppressed, how
  // long past the window a key may still be remembered (the slack bound of
  // the structure: an epoch, k generations, ...), and the model FPR; or
  // that there is no window guarantee (false negatives by design).
  std::string guarantee(Policy policy) const;
  // The slack bound: how far past the window a key may still be found, in
  // insertions (count windows) or ticks (time windows).
  uint64_t slack() const;
  double model_fpr() const noexcept { return config_.model_fpr(); }          // the structure's model FP
  double bits_per_item() const noexcept { return config_.bits_per_item(); }  // bits per window item
  // Set bits (or non-zero cells) over all of them: reads the whole filter.
  double fill_ratio() const noexcept;
  // What a structure keeps about itself, by name (empty for most): the
  // time-limited filter's slices, bits in use, generation target, measured
  // rate, shifts and budget saturations (shifts skipped: FPR above the model
  // meanwhile); the counting filter's ring overflows and saturated counters.
  std::vector<std::pair<std::string, double>> stats() const;
  // Budget saturations so far (time-limited filter; 0 for the others).
  uint64_t saturations() const noexcept;
  // Insertions whose counters will never be decremented (counting filter):
  // those that left a counter saturated, and those a time window's full hash
  // ring could not record. Their keys may outlive the window.
  struct Sticky {
    uint64_t saturated = 0;      // insertions that left one of their counters at its maximum
    uint64_t ring_overflows = 0; // insertions the full ring could not record
    uint64_t ring_slots = 0;     // what the ring holds: the insertions per window it was sized for
  };
  Sticky sticky() const noexcept;  // the counting filter's counts so far; zeros for the others
  // Flood watch (time windows of the epoch filters): epochs that took more
  // than their design load while keeping their time (keep-window), and
  // epochs ended early at it (keep-fpr). Exact however the verdicts were
  // asked for (one key, a burst on one clock, a burst of stamped keys).
  uint64_t overloaded_epochs() const noexcept { return flood_.overloaded; }
  // Epochs the capacity trigger ended before their time (keep-fpr).
  uint64_t early_rotations() const noexcept { return flood_.early; }
  // The insertions an epoch was sized for (capacity / r); 0 where no flood is watched.
  uint64_t design_insertions_per_epoch() const noexcept { return flood_.design; }
  // The window every key is kept for now, in the window's unit (insertions
  // or ticks): the configured span, or under keep-fpr, once epochs ended
  // early, the span of the last r epochs when it is shorter. Updated per
  // call or burst, like the counts above.
  uint64_t effective_window() const noexcept;

  // The current epoch's insertions (its schedule's fill; 0 for a structure
  // without epochs): a rotation is a call after which it is lower than its
  // value before plus the insertions made (perf/rotation_bench.cpp).
  uint64_t epoch_fill() const noexcept {
    return std::visit([](const auto& f) { return epoch_fill_of(f); }, filter_);
  }

 private:
  // Hosted bookkeeping beside the filter (not in its arena): the epoch each
  // insertion fell in, read from the structure's schedule.
  struct FloodWatch {
    uint64_t design = 0;        // insertions an epoch was sized for; 0: not watched
    uint64_t epoch_length = 0;  // ticks per epoch
    uint64_t epoch_start = 0;   // the watched epoch's start, as the schedule says
    uint64_t inserted = 0;      // insertions seen in it
    bool counted = false;       // its overload is counted already
    uint64_t overloaded = 0, early = 0;
    // keep-fpr: the starts of the last epochs (a ring, newest at `newest`),
    // for effective_window(); rotations are seen by the current segment.
    uint32_t r = 0, segment = 0, newest = 0, known = 0;
    uint32_t ring = 0;  // the segments `segment` cycles through: r + 1, or r + 2 with interleaved-swept's spare
    uint64_t last_now = 0;
    uint64_t starts[64] = {};  // r + 1 <= 64 segments (GuardedEpochConfig::kMaxSegments; interleaved: 16 lanes)
  };
  // After `inserted` insertions with no time advance between them, made from
  // an epoch that held fill_before (the schedule's count, read after the
  // last advance): the early rotations among them are exactly
  // (fill_before + inserted - fill now) / capacity, however many, since each
  // one restarts the count at 1 (EpochSchedule::rotate_before_insert).
  void watch_flood(uint64_t inserted, uint64_t fill_before) noexcept {
    std::visit([&](const auto& f) { watch_flood_of(f, inserted, fill_before); }, filter_);
  }
  // The same, of the concrete filter (inside a visit: no second one per key).
  template <class Filter>
  void watch_flood_of(const Filter& f, uint64_t inserted, uint64_t fill_before) noexcept {
    if constexpr (requires { f.epoch_schedule(); })
      watch_epochs(f.epoch_schedule(), f.current_segment(), inserted, fill_before);
  }
  void watch_epochs(const EpochSchedule& s, uint32_t segment, uint64_t inserted, uint64_t fill_before) noexcept;
  // The current epoch's insertion count (the schedule's fill), 0 without one,
  // of the concrete filter (inside a visit); epoch_fill() is the held one's.
  template <class Filter>
  static uint64_t epoch_fill_of(const Filter& f) noexcept {
    if constexpr (requires { f.epoch_schedule(); }) return f.epoch_schedule().fill;
    return 0;
  }

  FilterConfig config_;
  AnyFilter filter_;
  std::optional<inference::BlockTimingPosterior> posterior_;
  FloodWatch flood_;
};

// "500ms", "60s", "10m", "1h", "250us", "100ns", "1.5s" → nanoseconds.
// False on anything else (empty, negative, unknown unit, overflow).
bool parse_duration_ns(std::string_view s, uint64_t& out) noexcept;
// Nanoseconds in the largest unit up to seconds that keeps a value of at
// least 1: "10s", "600s", "11.25s", "50ms", "250us"; exact (a whole number of some unit, or ns),
// so that parse_duration_ns reads back the same value, unless `round` asks
// for four significant digits (for people).
std::string format_duration(uint64_t ns, bool round = false);

}  // namespace agebloom::dedup

#pragma GCC visibility pop
