// Sliding-window filter planner: given a window and a target false-positive
// rate, pick the registered structure (agebloom/registry/structure.hpp) and
// shape that meet the target with the fewest bits per window item, subject
// to optional limits.
//
// The planner has no models of its own. Each structure's sizing hook
// (StructureTraits<S>::plan) emits ready configurations sized by the
// structure's own freestanding model_fpr(); the planner adds the hosted
// figures (NPWS, expected accesses: models.hpp) and ranks. The winning
// Plan carries its FilterConfig: what is planned is what is built, bit for
// bit.
//
// Units: bits_per_item = the structure's bits / items per window (W, or the
// capacity of a time window); accesses are expected memory accesses (bit
// probes, or block/line probes for the blocked and one-line structures) for
// one query/insert; accesses_per_query is the larger of the expected accesses
// of a query for a window key and of a query answered false, so that a limit
// on it bounds both common cases.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "agebloom/registry/filter_config.hpp"

// Compiled in libagebloom: exported from the shared library, which hides
// everything else (core/export.h).
#pragma GCC visibility push(default)

namespace agebloom::model {

// What to plan for, and the limits a plan must respect.
struct PlanRequest {
    Window window = Window::count(0);             // count (1..2^48 insertions) or time (ticks)
    std::uint64_t capacity = 0;                   // insertions per window; 0 with a time window: the rate
                                                  // is unknown, and only rate-adaptive structures (tlbf) plan
    std::uint64_t memory_bytes = 0;               // the budget of a structure that manages one (tlbf)
    double fpr = 0.0;                             // target FP, in (0, 1)
    std::optional<double> max_npws;               // peak NPWS limit
    std::optional<double> max_bits_per_item;      // memory limit
    std::optional<double> max_accesses_per_query; // see accesses_per_query above
    std::optional<std::uint64_t> max_total_bytes; // limit on the arena (bytes_needed): --mem
    std::optional<unsigned> block_bits;           // B for the blocked structures (default 512)
    std::optional<Structure> structure;           // restrict to one structure
    bool auto_candidates = false;                 // restrict to the registry's auto_candidate rows
                                                  // (--filter auto: the dataplane's fastest layouts)
    bool auto_fallback = false;                   // restrict to the registry's auto_fallback rows
                                                  // (what --filter auto falls back to)
};

// One ready configuration and its figures (units: see the top of this file).
struct Plan {
    FilterConfig config;              // what gets built
    Structure structure = Structure::guarded_epoch;  // the registry row (also config.structure)
    unsigned k = 0;                   // hashes per key (per segment for APBBF: segments per key)
    unsigned l_or_r = 0;              // APBF/APBBF: l; guarded epoch: r; ring: N
    unsigned block_bits = 0;          // B, or the lane width of a one-line layout (0 if unblocked)
    unsigned bits_per_block = 0;      // APBBF / one-line APBF: b; blocked or one-line guarded epoch: k; else 0
    std::uint64_t bits_per_segment = 0; // slice / segment / ring-filter size in bits
    std::uint64_t segments = 0;       // k+l, r+1 or N+1
    std::uint64_t generation_or_epoch = 0; // insertions between shifts/rotations (g, ℓ, W/N)
    double bits_per_item = 0.0;       // segments * bits_per_segment / items per window
    double expected_fpr = 0.0;        // the structure's model FP (worst case: just before a shift)
    double slack_items = 0.0;         // how far past the window a key may be found: ℓ (guarded epoch,
                                      // ring), k·g (APBF), each plus r·ℓ − W or l·g − W (rounding)
    double peak_npws = 0.0;           // see models.hpp (APBF §5.2; guarded epoch definition)
    double accesses_per_query = 0.0;  // the larger of a window key's and a false answer's (units above)
    double accesses_per_insert = 0.0; // expected accesses of one insertion (units above)
    std::uint64_t total_bytes = 0;    // the filter's arena size (bytes_needed)
};

// Why no plan was returned.
enum class PlanErrc : std::uint8_t {
    invalid_request,   // a value out of range: a usage error
    fpr_unreachable,   // no shape meets the FPR within the size limit (2^50 bits)
    over_limits,       // shapes meet the FPR, none within the limits given
    window_too_short,  // a count window shorter than the segments of the structures asked for (a
                       // usage error; another structure, one of fewer segments, may plan it)
};

// A refusal: its kind and a message for the user.
struct PlanError {
    PlanErrc code = PlanErrc::invalid_request;  // what kind of refusal
    std::string message;  // names the option at fault (window, fpr, max-npws, ...)
};

// The best plan, or why there is none.
using PlanResult = std::variant<Plan, PlanError>;

// Whether request.memory_bytes is a budget the plan spends (a rate-adaptive
// structure named, or any structure over a time window without a capacity,
// where only rate-adaptive ones plan) rather than unused: the tools' --mem is
// then that budget, not a bound on the arena.
bool spends_budget(const PlanRequest& request) noexcept;

// Best plan (fewest bits per item among the candidates that meet the target
// and every limit given) or an error. Bounded: every sizing search in the
// core is, so an FPR too small to build answers fpr_unreachable quickly.
PlanResult plan(const PlanRequest& request);

// Sizing by memory: the plan with the lowest model FPR whose arena fits in
// request.max_total_bytes (required), meeting the other limits; request.fpr
// is ignored. "The lowest FPR that fits in 4 MiB" is a bisection over
// log(fpr) in [kLowestFpr, 1/2] on plan(), whose memory falls as the target
// rises; the plan returned is the one at the tightest target that fit.
// Rate-adaptive structures (tlbf) keep a target FPR within a budget and are
// refused here (invalid_request): they take --fpr and --mem together.
PlanResult plan_lowest_fpr(const PlanRequest& request);
inline constexpr double kLowestFpr = 1e-12;  // plan_lowest_fpr's floor: beyond it no window needs more

// The figures of a ready configuration (a Plan whose config is `config`):
// what a filter built by other means (a snapshot, a hand-made config) costs
// and how much slack it keeps.
Plan describe(const FilterConfig& config);

// Every candidate of one structure that meets the request's target and
// limits, cheapest first (for tests and tables).
std::vector<Plan> candidates(const PlanRequest& request, Structure s);

} // namespace agebloom::model

#pragma GCC visibility pop
