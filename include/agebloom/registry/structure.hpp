// The registry of structures: every filter the library builds, by name, in
// one table, and for each the types and the sizing hook the rest of the
// project needs. dedup_fwd, agebloom-replay, agebloom-plan, the planner, the
// benchmarks and the GPU dispatch enumerate this table; none of them names a
// structure (testpmd's fwd_engines[] is the model).
//
// Adding a structure (docs/ARCHITECTURE.md, "Adding a structure"): its header
// in filters/, one enumerator, one row in kStructures, one StructureTraits
// specialisation below, and its own tests. The property suite
// (tests/core/structure_property_test.cpp) and the tools' golden tests pick it
// up from here.
//
// Freestanding like the rest of the core: plain data and templates, no
// strings, no allocation.
#pragma once

#include <cstddef>
#include <cstdint>

#include "agebloom/core/window.hpp"
#include "agebloom/filters/apbf.hpp"
#include "agebloom/filters/guarded_epoch.hpp"
#include "agebloom/filters/interleaved_apbf.hpp"
#include "agebloom/filters/interleaved_epoch.hpp"
#include "agebloom/filters/pocket_epoch.hpp"
#include "agebloom/filters/queue_epoch.hpp"
#include "agebloom/filters/rotating_ring.hpp"
#include "agebloom/filters/block_timing.hpp"
#include "agebloom/filters/clock.hpp"
#include "agebloom/filters/counting.hpp"
#include "agebloom/filters/stable.hpp"
#include "agebloom/filters/time_limited.hpp"
#include "agebloom/filters/two_line_epoch.hpp"

namespace agebloom {

// A registered structure, by its row in kStructures: the enumerators are in
// table order (registry_in_order() checks it), so a Structure is an index.
enum class Structure : uint8_t {
  guarded_epoch,
  guarded_epoch_blocked,
  apbf,
  apbbf,
  ring,
  interleaved,
  interleaved_apbf,
  tlbf,
  counting,
  stable,
  tbf,
  btbf,
  clock4,
  two_line,
  interleaved_128,
  pocket_epoch,
  queue_epoch,
  interleaved_swept,
};

// Which windows a structure keeps.
enum WindowKinds : uint8_t { kCountWindows = 1, kTimeWindows = 2, kBothWindows = 3 };

// One row of the registry: what the tools list and choose among
// (--filter NAME, --filter auto) without naming a structure.
struct StructureInfo {
  Structure id;          // the enumerator of this row
  const char* name;      // what --filter takes
  const char* paper;     // title and section it comes from
  uint8_t windows;       // WindowKinds
  const char* cost;      // memory touched per query
  const char* summary;   // one line
  bool gpu;              // the CUDA replay backend replays it (gpu/)
  bool false_negatives;  // inside the window, by design
  bool one_line;         // one cache line per query and per insert
  bool auto_candidate;   // what --filter auto chooses among in a dataplane: the layouts measured
                         // fastest per packet (docs/PERFORMANCE.md), the fewest bits per item of them
  bool rate_adaptive;    // keeps a time window at an unknown, varying rate (no --capacity needed):
                         // what a time window without a capacity is planned with
  bool auto_fallback;    // what --filter auto may fall back to when its candidates do not fit the
                         // limits (dedup_filter.cpp): every layout whose memory accesses say its cost
                         // per packet; not pocket-epoch or queue-epoch, which read 1.04-1.06 lines
                         // per operation but measured 2-5x two-line's cycles (docs/PERFORMANCE.md)
  // A size rule (rows without one leave these three at their defaults):
  // --filter auto takes this row in place of row auto_in_place_of where that
  // row's plan needs more than auto_over_bytes, if this row's plan fits the
  // same limits (dedup_filter.cpp, plan_spec; auto_over() below).
  uint64_t auto_over_bytes = 0;                           // 0: no size rule
  Structure auto_in_place_of = Structure::guarded_epoch;  // the row it replaces past that size
  const char* auto_over_why = nullptr;                    // what that row costs past it (auto's note)
};

// The registry: one row per structure, in enumerator order.
inline constexpr StructureInfo kStructures[] = {
    {Structure::guarded_epoch, "guarded-epoch", "Guarded Epoch Bloom Filters, Sec. 2 and Prop. 2", kBothWindows,
     "k probes x (r+1) segments", "r+1 segments, epochs of W/r, one guard epoch: the most compact", true, false,
     false, false, false, true},
    {Structure::guarded_epoch_blocked, "guarded-epoch-blocked", "Guarded Epoch Bloom Filters, Sec. 2 (blocked)",
     kBothWindows, "one 512-bit block x (r+1) segments", "guarded epoch with a block per segment probe", true,
     false, false, false, false, true},
    {Structure::apbf, "apbf", "Age-Partitioned Bloom Filters, Sec. 5 (Algorithm 1)", kBothWindows,
     "~k+ probes (jump-back scan)", "k+l slices aging by generations; fewest probes per query", true, false, false, false, false, true},
    {Structure::apbbf, "apbbf", "Age-Partitioned Bloom Filters, Sec. 6", kBothWindows, "~2-4 blocks",
     "APBF whose slices are blocked filters with b bits per block", true, false, false, false, false, true},
    {Structure::ring, "ring", "Bloom filters for unbounded streams: rotating filters", kBothWindows,
     "k probes x (N+1) filters",
     "N+1 rotating filters; with --ttl and --capacity also rotates when the current one is full", true, false,
     false, false, false, true},
    {Structure::interleaved, "interleaved", "Guarded Epoch Bloom Filters + APBF Sec. 6 (one-line layout)",
     kBothWindows, "one cache line", "guarded epoch with every segment's word of an index in one 64-byte line",
     true, false, true, true, false, true},
    {Structure::interleaved_apbf, "interleaved-apbf", "Age-Partitioned Bloom Filters, Sec. 5-6 (one-line layout)",
     kBothWindows, "one cache line", "APBF's k+l <= 16 slices as the lanes of one 64-byte line", false, false,
     true, false, false, true},
    {Structure::tlbf, "tlbf", "Time-limited Bloom Filter, Sec. 6 (slices stamped with time)", kBothWindows,
     "~k+ probes (jump-back scan)",
     "APBF whose slices carry time: keeps the last T at any rate, in a memory budget (--mem)", false, false, false,
     false, true, true},
    {Structure::counting, "counting", "Guarded Epoch Bloom Filters, Sec. 4 (its counting baseline)", kBothWindows,
     "k counters", "4-bit counters with exact window deletion: a ring of the window's hashes (baseline)", false,
     false, false, false, false, true},
    {Structure::stable, "stable", "Deng & Rafiei, Stable Bloom Filters (SIGMOD 2006)", kBothWindows, "k cells",
     "cells of d bits decayed at random: no window guarantee (baseline)", false, true, false, false, false, true},
    {Structure::tbf, "tbf", "Inferential Time-Decaying Bloom Filters, Sec. 3.1 (Timing Bloom Filter)", kCountWindows,
     "k timers", "timers stamped with the insertion count; padding spreads the expiry sweep", false, false, false,
     false, false, true},
    {Structure::btbf, "btbf", "Inferential Time-Decaying Bloom Filters, Sec. 3.2 (Block Timing Bloom Filter)",
     kBothWindows, "k timers", "one timestamp per block of B insertions (or ticks): bpt = k bits per timer", false,
     false, false, false, false, true},
    {Structure::clock4, "clock4", "Continuous Bloom Filter (Surprenant): the continuous filter", kBothWindows,
     "k 4-bit cells", "a 15-slot clock per cell ticking every TTL/2, swept so it cannot wrap; keys live TTL..1.5 TTL",
     false, false, false, false, false, true},
    {Structure::two_line, "two-line", "Guarded Epoch Bloom Filters, Sec. 2 (two-line layout)", kBothWindows,
     "two adjacent cache lines",
     "guarded epoch with 4 segments as 128-bit lanes; a key's bits straddle two adjacent lines", false, false, false,
     false, false, true},
    {Structure::interleaved_128, "interleaved-128", "Guarded Epoch Bloom Filters + APBF Sec. 6 (one-line layout, 128-bit lanes)",
     kBothWindows, "one cache line",
     "guarded epoch with 4 segments as 128-bit lanes of one 64-byte line: fewer bits than interleaved", false, false,
     true, false, false, true},
    {Structure::pocket_epoch, "pocket-epoch",
     "Guarded Epoch Bloom Filters, Sec. 2 + Prefix Filter (Even, Even, Morrison), Sec. 3-4 (epoch-tagged fingerprints)",
     kBothWindows, "one cache line (a spare line for ~4% of keys)",
     "guarded epoch of 12-bit fingerprints tagged with their epoch, 40 per 64-byte line: 17.7 bits at 1%, slow inserts",
     false, false, false, false, false, false},
    {Structure::queue_epoch, "queue-epoch",
     "Guarded Epoch Bloom Filters, Sec. 2 + Prefix Filter (Even, Even, Morrison), Sec. 3 (a spare; fingerprint queues)",
     kBothWindows, "one cache line (a spare line for ~6% of keys)",
     "guarded epoch of 12-bit fingerprints queued oldest first, 40 per 64-byte line: 17.7 bits at 1%",
     false, false, false, false, false, false},
    {Structure::interleaved_swept, "interleaved-swept",
     "Guarded Epoch Bloom Filters + APBF Sec. 6 (one-line layout, a spare lane swept ahead)", kBothWindows,
     "one cache line",
     "interleaved with r = 6 and a spare lane cleared a few lines per burst: no stall when an epoch ends",
     true, false, true, false, false, true,
     // From about 4 MiB on, the plain layout's whole-lane clear at a rotation
     // outlasts what a 1024-entry Rx ring holds at 14.88 Mpps, 69 us
     // (docs/PERFORMANCE.md, "Rotation stalls": 30-63 us measured at 3.4 MiB,
     // 0.23 ms at 13.6 MiB, 8 ms at 218 MiB).
     uint64_t{4} << 20, Structure::interleaved,
     "would clear a lane in every one of its lines in the burst where an epoch ends, a stall that drops frames "
     "at line rate"},
};
// How many structures are registered (the loops over the table stop here).
inline constexpr size_t kStructureCount = sizeof kStructures / sizeof kStructures[0];

// True when kStructures[i].id == i for every row: what lets info() index the
// table instead of searching it.
constexpr bool registry_in_order() noexcept {
  for (size_t i = 0; i < kStructureCount; ++i)
    if (static_cast<size_t>(kStructures[i].id) != i) return false;
  return true;
}
static_assert(registry_in_order(), "kStructures lists the structures in enumerator order");

// The registry row of s (an index, see registry_in_order()).
constexpr const StructureInfo& info(Structure s) noexcept { return kStructures[static_cast<size_t>(s)]; }
// The name --filter takes for s, e.g. "guarded-epoch".
constexpr const char* name(Structure s) noexcept { return info(s).name; }
// The windows a row keeps, as --list-filters and its JSON name them.
constexpr const char* windows_label(const StructureInfo& s) noexcept {
  return s.windows == kBothWindows ? "count+time" : s.windows == kTimeWindows ? "time" : "count";
}

// The row --filter auto takes in place of a plan of `planned` that needs
// `bytes` (StructureInfo::auto_over_bytes), or nullptr: the first row whose
// size rule names `planned` and is exceeded.
constexpr const StructureInfo* auto_over(Structure planned, uint64_t bytes) noexcept {
  for (const StructureInfo& row : kStructures)
    if (row.auto_over_bytes != 0 && row.auto_in_place_of == planned && bytes > row.auto_over_bytes) return &row;
  return nullptr;
}

// The structure whose name is s[0..n), or nullptr.
constexpr const StructureInfo* find_structure(const char* s, size_t n) noexcept {
  for (const StructureInfo& row : kStructures) {
    size_t i = 0;
    while (i < n && row.name[i] != '\0' && row.name[i] == s[i]) ++i;
    if (i == n && row.name[i] == '\0') return &row;
  }
  return nullptr;
}

// What the sizing hooks are asked: keep `window` with a model FPR of at most
// `fpr`. `capacity` is the insertions expected per window (required for time
// windows; count windows default to the span). `block_bits` is B for the
// blocked structures.
struct SizingRequest {
  Window window = Window::count(0);  // count or time window to keep
  double fpr = 0.01;          // target model FPR, in (0, 1)
  uint64_t capacity = 0;      // insertions per window; 0: a count window's span
  uint32_t block_bits = 512;  // B of the blocked structures (64, 128, 256 or 512)
  uint64_t memory_bytes = 0;  // a structure that manages a budget (tlbf) takes this much; 0 = its default

  // The insertions the model is sized for: capacity, else a count window's
  // span; 0 for a time window with no capacity (sizing then fails).
  constexpr uint64_t items() const noexcept { return capacity ? capacity : (window.is_time() ? 0 : window.span); }
};

// StructureTraits<S>: Config and Filter, and plan(request, emit), which calls
// emit(config) for each shape of the structure (r, (k, l), lanes, ...) sized
// by the structure's own model to meet request.fpr: ready configurations,
// built bit for bit as emitted. The planner (lib/model) ranks them.
template <Structure S>
struct StructureTraits;

namespace registry_detail {
// The guarded epoch shapes: r (or N) from 1 to the segment limit.
template <class Emit>
constexpr void plan_epochs(const SizingRequest& r, uint32_t block_bits, bool ring, Emit&& emit) {
  for (uint32_t n = 1; n < GuardedEpochConfig::kMaxSegments; ++n) {
    if (!r.window.is_time() && r.window.span < n) break;
    auto c = ring ? RotatingRing::config(r.window, n, r.fpr, block_bits, r.capacity, /*rotate_at_capacity=*/true)
                  : GuardedEpochConfig::for_fpr(r.window, r.fpr, {.r = n, .block_bits = block_bits, .capacity = r.capacity});
    if (c) emit(*c);
  }
}

// Why plan_epochs emitted nothing, when it is not the FPR: the shape itself
// refused at the easiest target (a block size the layout lacks, say).
constexpr Errc epochs_why(const SizingRequest& r, uint32_t block_bits) {
  auto c = GuardedEpochConfig::for_fpr(r.window, 0.5, {.r = 1, .block_bits = block_bits, .capacity = r.items() ? r.items() : 1});
  return c ? Errc::ok : c.code();
}

// The APBF shapes: k around the published ⌈log2 1/fpr⌉ (k0 - 2 .. k0 + 6,
// Age-Partitioned Bloom Filters Sec. 5.3), every l from 1 while the memory still falls (it is
// unimodal in l: more generations shorten each, until the scan's FP over
// more slices costs more bits than it saves; four steps past the best stop).
template <class Emit>
constexpr void plan_apbf(const SizingRequest& r, uint32_t k_from, uint32_t k_to, uint32_t block_bits, uint32_t b,
                         Emit&& emit) {
  for (uint32_t k = k_from; k <= k_to && k <= ApbfConfig::kMaxK; ++k) {
    double best = 0;
    uint32_t since_best = 0;
    for (uint32_t l = 1; l <= 100 && since_best < 4; ++l) {
      if (!r.window.is_time() && r.window.span < l) break;
      auto c = ApbfConfig::sized(r.window, r.fpr, k, l, block_bits, b, r.capacity);
      if (!c) {
        ++since_best;
        continue;
      }
      emit(*c);
      const double bits = c->bits_per_item();
      if (best == 0 || bits < best) best = bits, since_best = 0;
      else ++since_best;
    }
  }
}

}  // namespace registry_detail

// The guarded epoch filter, flat segments (Guarded Epoch Bloom Filters, Sec. 2).
template <>
struct StructureTraits<Structure::guarded_epoch> {
  // The configuration plan() emits, and the filter it builds.
  using Config = GuardedEpochConfig;
  using Filter = GuardedEpochFilter;  // the filter a Config builds
  // One shape per r = 1 .. kMaxSegments - 1, each sized by Prop. 2: more epochs
  // cost segments but shorten the stale tail (W + ℓ), so the planner ranks them.
  template <class Emit>
  static constexpr void plan(const SizingRequest& r, Emit&& emit) {
    registry_detail::plan_epochs(r, 0, false, emit);
  }
  // Why plan() emitted nothing (the planner's message).
  static constexpr Errc why(const SizingRequest& r) { return registry_detail::epochs_why(r, 0); }
};

// The guarded epoch filter with a B-bit block per segment probe (Sec. 2, blocked).
template <>
struct StructureTraits<Structure::guarded_epoch_blocked> {
  // The configuration plan() emits, and the filter it builds.
  using Config = GuardedEpochConfig;
  using Filter = GuardedEpochFilter;  // the filter a Config builds
  // One shape per r, with request.block_bits as B.
  template <class Emit>
  static constexpr void plan(const SizingRequest& r, Emit&& emit) {
    registry_detail::plan_epochs(r, r.block_bits, false, emit);
  }
  // Why plan() emitted nothing (the planner's message).
  static constexpr Errc why(const SizingRequest& r) { return registry_detail::epochs_why(r, r.block_bits); }
};

// The Age-Partitioned Bloom Filter (Sec. 5, Algorithm 1).
template <>
struct StructureTraits<Structure::apbf> {
  // The configuration plan() emits, and the filter it builds.
  using Config = ApbfConfig;
  using Filter = ApbfFilter;  // the filter a Config builds
  // k from two under the published ⌈log2 1/fpr⌉ to six over it, every useful l
  // for each (registry_detail::plan_apbf).
  template <class Emit>
  static constexpr void plan(const SizingRequest& r, Emit&& emit) {
    const uint64_t k = ApbfConfig::published_k(r.fpr);
    const uint32_t k0 = k > 64 ? 64 : static_cast<uint32_t>(k);  // the search range stops at kMaxK anyway
    registry_detail::plan_apbf(r, k0 > 2 ? k0 - 2 : 1, k0 + 6, 0, 0, emit);
  }
};

// The blocked APBF (Age-Partitioned Bloom Filters, Sec. 6): slices of
// B-bit blocks with b bits set per block.
template <>
struct StructureTraits<Structure::apbbf> {
  // The configuration plan() emits, and the filter it builds.
  using Config = ApbfConfig;
  using Filter = ApbfFilter;  // the filter a Config builds
  // k in 1..8 and b in 1, 2, 4, ... (Age-Partitioned Bloom Filters Sec. 6 explores k <= 8).
  template <class Emit>
  static constexpr void plan(const SizingRequest& r, Emit&& emit) {
    for (uint32_t b = 1; b < r.block_bits && b <= 32; b *= 2) {
      ApbfConfig shape;
      shape.block_bits = r.block_bits;
      shape.bits_per_block = b;
      if (b * shape.log2_part_bits() > 64) break;
      registry_detail::plan_apbf(r, 1, 8, r.block_bits, b, emit);
    }
  }
};

// Rotating filters: N + 1 filters turned by the window or, for a time window
// with a capacity, also when the current one is full (rotating_ring.hpp).
template <>
struct StructureTraits<Structure::ring> {
  // The configuration plan() emits (a guarded epoch shape), and the filter it builds.
  using Config = GuardedEpochConfig;
  using Filter = GuardedEpochFilter;  // the filter a Config builds
  // One shape per N, as guarded_epoch's r, with the capacity trigger on.
  template <class Emit>
  static constexpr void plan(const SizingRequest& r, Emit&& emit) {
    registry_detail::plan_epochs(r, 0, true, emit);
  }
  // Why plan() emitted nothing (the planner's message).
  static constexpr Errc why(const SizingRequest& r) { return registry_detail::epochs_why(r, 0); }
};

// Guarded epoch in the one-line layout: every segment's word of an index in
// one 64-byte line (interleaved_epoch.hpp).
template <>
struct StructureTraits<Structure::interleaved> {
  // The configuration plan() emits, and the filter it builds.
  using Config = InterleavedEpochConfig;
  using Filter = InterleavedEpochFilter<uint64_t>;  // the filter a Config builds
  // 64-bit lanes (8 segments): the dataplane's and the GPU's layout.
  template <class Emit>
  static constexpr void plan(const SizingRequest& r, Emit&& emit) {
    if (auto c = InterleavedEpochConfig::for_fpr(r.window, r.fpr, {.lane_bits = 64, .capacity = r.capacity})) emit(*c);
  }
};

// Guarded epoch in the one-line layout with a spare lane swept ahead of each
// rotation (interleaved_epoch.hpp, InterleavedSweptConfig).
template <>
struct StructureTraits<Structure::interleaved_swept> {
  // The configuration plan() emits, and the filter it builds.
  using Config = InterleavedSweptConfig;
  using Filter = InterleavedEpochFilter<uint64_t, true>;  // the filter a Config builds
  // r = 6: seven live lanes of eight (the most compact r with a spare).
  template <class Emit>
  static constexpr void plan(const SizingRequest& r, Emit&& emit) {
    if (auto c = InterleavedSweptConfig::for_fpr(r.window, r.fpr, 0, r.capacity)) emit(*c);
  }
};

// Guarded epoch in the one-line layout with four 128-bit lanes: every
// segment's 16 bytes of an index in one 64-byte line (interleaved_epoch.hpp).
template <>
struct StructureTraits<Structure::interleaved_128> {
  // The configuration plan() emits, and the filter it builds.
  using Config = Interleaved128Config;
  using Filter = InterleavedEpochFilter<bits::Word128>;  // the filter a Config builds
  // r = 3: all four lanes.
  template <class Emit>
  static constexpr void plan(const SizingRequest& r, Emit&& emit) {
    if (auto c = Interleaved128Config::for_fpr(r.window, r.fpr, 0, r.capacity)) emit(*c);
  }
};

// Guarded epoch of epoch-tagged fingerprints, a pocket dictionary per line
// (pocket_epoch.hpp).
template <>
struct StructureTraits<Structure::pocket_epoch> {
  // The configuration plan() emits, and the filter it builds.
  using Config = PocketEpochConfig;
  using Filter = PocketEpochFilter;  // the filter a Config builds
  // r = 7: eight tags, the smallest peak load (r + 1 epochs of W/r).
  template <class Emit>
  static constexpr void plan(const SizingRequest& r, Emit&& emit) {
    if (auto c = PocketEpochConfig::for_fpr(r.window, r.fpr, {.capacity = r.capacity})) emit(*c);
  }
};

// Guarded epoch of fingerprint queues, a pocket line's capacity without its
// sort (queue_epoch.hpp).
template <>
struct StructureTraits<Structure::queue_epoch> {
  // The configuration plan() emits, and the filter it builds.
  using Config = QueueEpochConfig;
  using Filter = QueueEpochFilter;  // the filter a Config builds
  // r = 7: eight runs, the smallest peak load (r + 1 epochs of W/r).
  template <class Emit>
  static constexpr void plan(const SizingRequest& r, Emit&& emit) {
    if (auto c = QueueEpochConfig::for_fpr(r.window, r.fpr, {.capacity = r.capacity})) emit(*c);
  }
};

// APBF in the one-line layout: k + l <= 16 slices as lanes of one 64-byte
// line (interleaved_apbf.hpp).
template <>
struct StructureTraits<Structure::interleaved_apbf> {
  // The configuration plan() emits, and the filter it builds.
  using Config = InterleavedApbfConfig;
  using Filter = InterleavedApbfFilter<uint32_t>;  // the filter a Config builds
  // 32-bit lanes: 16 slices, room for the scan's k + l.
  template <class Emit>
  static constexpr void plan(const SizingRequest& r, Emit&& emit) {
    if (auto c = InterleavedApbfConfig::for_fpr(r.window, r.fpr, {.lane_bits = 32, .capacity = r.capacity})) emit(*c);
  }
};

// The Time-limited Bloom Filter (Sec. 6): APBF slices stamped with time, in a
// memory budget; keeps a time window at a rate it is not told.
template <>
struct StructureTraits<Structure::tlbf> {
  // The configuration plan() emits, and the filter it builds.
  using Config = TimeLimitedConfig;
  using Filter = TimeLimitedFilter;  // the filter a Config builds
  // The reference's (k, l) for the FPR and capacity; the budget from
  // memory_bytes (what is left after the header and the slice table), else
  // 16 times the steady memory.
  template <class Emit>
  static constexpr void plan(const SizingRequest& r, Emit&& emit) {
    auto c = TimeLimitedConfig::for_fpr(r.window, r.fpr, {.capacity = r.capacity});
    if (!c) return;
    // The planner's promise is the model at or under the target: the
    // reference table's l can sit a hair above it.
    while (c && c->l > 1 && c->model_fpr() > r.fpr) c = TimeLimitedConfig::with_shape(r.window, c->k, c->l - 1, r.capacity);
    if (!c || c->model_fpr() > r.fpr) return;
    if (r.memory_bytes) {
      c = with_memory(r, *c);
      if (!c) return;
    }
    emit(*c);
  }
  // Why plan() emitted nothing (an optional hook: the planner's message).
  static constexpr Errc why(const SizingRequest& r) {
    auto c = TimeLimitedConfig::for_fpr(r.window, r.fpr, {.capacity = r.capacity});
    if (c && r.memory_bytes) c = with_memory(r, *c);
    return c ? Errc::ok : c.code();
  }

 private:
  // The budget is what memory_bytes leaves after the header and the table.
  static constexpr Expected<TimeLimitedConfig> with_memory(const SizingRequest& r, const TimeLimitedConfig& c) {
    const uint64_t overhead = 4096 + uint64_t{sizeof(uint64_t) * 6} * c.max_slices;
    if (r.memory_bytes <= overhead) return Errc::slice_budget_too_small;
    return TimeLimitedConfig::with_shape(r.window, c.k, c.l, r.capacity, (r.memory_bytes - overhead) * 8 / 64 * 64);
  }
};

// The counting baseline of Guarded Epoch Bloom Filters (Sec. 4): 4-bit
// counters, exact deletion from a ring of the window's hashes.
template <>
struct StructureTraits<Structure::counting> {
  // The configuration plan() emits, and the filter it builds.
  using Config = CountingConfig;
  using Filter = CountingFilter;  // the filter a Config builds
  // One shape: the counters sized for the FPR at the window's load.
  template <class Emit>
  static constexpr void plan(const SizingRequest& r, Emit&& emit) {
    if (auto c = CountingConfig::for_fpr(r.window, r.fpr, {.capacity = r.capacity})) emit(*c);
  }
};

// Stable Bloom Filters (Deng & Rafiei): decaying cells, a baseline with no
// window guarantee.
template <>
struct StructureTraits<Structure::stable> {
  // The configuration plan() emits, and the filter it builds.
  using Config = StableConfig;
  using Filter = StableFilter;  // the filter a Config builds
  // One shape: the cells sized for the FPR (StableConfig::for_fpr).
  template <class Emit>
  static constexpr void plan(const SizingRequest& r, Emit&& emit) {
    if (auto c = StableConfig::for_fpr(r.window, r.fpr, {.capacity = r.capacity})) emit(*c);
  }
};

// The Timing Bloom Filter (Inferential Time-Decaying Bloom Filters, Sec. 3.1).
template <>
struct StructureTraits<Structure::tbf> {
  // The configuration plan() emits (the block timing shape with B = 1), and the
  // filter it builds.
  using Config = BlockTimingConfig;
  using Filter = BlockTimingFilter;  // the filter a Config builds
  // One shape, count windows only: it stamps every insertion with its count.
  template <class Emit>
  static constexpr void plan(const SizingRequest& r, Emit&& emit) {
    if (r.window.is_time()) return;  // a timestamp per insertion: count windows only
    if (auto c = BlockTimingConfig::for_fpr(r.window, r.fpr, {.capacity = r.capacity, .tbf = true})) emit(*c);
  }
};

// The Block Timing Bloom Filter (Inferential Time-Decaying Bloom Filters, Sec. 3.2).
template <>
struct StructureTraits<Structure::btbf> {
  // The configuration plan() emits, and the filter it builds.
  using Config = BlockTimingConfig;
  using Filter = BlockTimingFilter;  // the filter a Config builds
  // One shape: k timers of bpt bits, one timestamp per block of insertions or ticks.
  template <class Emit>
  static constexpr void plan(const SizingRequest& r, Emit&& emit) {
    if (auto c = BlockTimingConfig::for_fpr(r.window, r.fpr, {.capacity = r.capacity})) emit(*c);
  }
};

// The continuous (clock) filter of Surprenant's Continuous Bloom Filter.
template <>
struct StructureTraits<Structure::clock4> {
  // The configuration plan() emits, and the filter it builds.
  using Config = ClockConfig;
  using Filter = ClockFilter;  // the filter a Config builds
  // One shape: the 4-bit clock cells sized for the FPR (ClockConfig::for_fpr).
  template <class Emit>
  static constexpr void plan(const SizingRequest& r, Emit&& emit) {
    if (auto c = ClockConfig::for_fpr(r.window, r.fpr, {.capacity = r.capacity})) emit(*c);
  }
};

// Guarded epoch over two adjacent lines: four segments as 128-bit lanes, each
// key's block straddling its line and the next (two_line_epoch.hpp).
template <>
struct StructureTraits<Structure::two_line> {
  // The configuration plan() emits, and the filter it builds.
  using Config = TwoLineEpochConfig;
  using Filter = TwoLineEpochFilter;  // the filter a Config builds
  // r = 1 .. 3 (4 lanes); r = 3 is the most compact at common targets, the
  // planner ranks them.
  template <class Emit>
  static constexpr void plan(const SizingRequest& r, Emit&& emit) {
    for (uint32_t n = 1; n < TwoLineEpochConfig::kLanes; ++n)
      if (auto c = TwoLineEpochConfig::for_fpr(r.window, r.fpr, {.r = n, .capacity = r.capacity})) emit(*c);
  }
};

// Calls f.template operator()<S>() for every registered structure, in table order.
template <size_t I = 0, class F>
constexpr void for_each_structure(F&& f) {
  if constexpr (I < kStructureCount) {
    f.template operator()<static_cast<Structure>(I)>();
    for_each_structure<I + 1>(f);
  }
}

}  // namespace agebloom
