// Sliding-window filter planner: given a window and a target false-positive
// rate, pick the structure and parameters that meet the target with the
// fewest bits per window item, subject to optional limits.
//
// Candidates (all evaluated with the models in models.hpp):
//   "guarded_epoch"         [GE] Prop. 2; search r in 1..32, k in 1..64 and the
//                           smallest segment size s meeting the target.
//   "guarded_epoch_blocked" the same with B-bit blocks per segment [PSS]
//                           (k in 1..32, bits per block = k).
//   "apbf"                  [APBF] §5; k from k0-2 to k0+6, k0 = ceil(-log2 fp)
//                           (the published parameterisation's k), and every
//                           l <= 100 with FP(k,l) <= fp (FP grows with l; the
//                           largest such l is the published choice, smaller l
//                           trade bits for fewer accesses).
//   "apbbf"                 [APBF] §6; k in 1..8, b in {1,2,4,...,32} (b < B),
//                           B = block_bits, every l <= 100 meeting the target.
//   "ring"                  ring of N+1 plain Bloom filters (papers/004), each
//                           sized by the textbook formulas for W/N keys and a
//                           per-filter FP f with 1-(1-f)^(N+1) <= fpr;
//                           N in 1..32.
//   "interleaved"           the guarded epoch filter in one cache line
//                           (filters/interleaved_epoch.hpp): r+1 = 8 lanes of
//                           64 bits or 16 of 32, k partitioned in the lane;
//                           one access per query and per insert.
//
// Window semantics: every plan reports each of the last W insertions (no
// false negatives); the APBF generation is g = ceil(W/l) so that l·g >= W.
//
// Units: bits_per_item = total bits / W; accesses are expected memory
// accesses (bit probes, or block probes for the blocked structures) for one
// query/insert; accesses_per_query is the larger of the expected accesses of
// a query for a window key and of a query answered false, so that a limit on
// it bounds both common cases.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace agebloom::model {

struct PlanRequest {
    std::uint64_t window = 0;                     // W, insertions that must be reported (1..2^48)
    double fpr = 0.0;                             // target FP, in (0, 1)
    std::optional<double> max_npws;               // peak NPWS limit
    std::optional<double> max_bits_per_item;      // memory limit
    std::optional<double> max_accesses_per_query; // see accesses_per_query above
    std::optional<unsigned> block_bits;           // B for the blocked structures (default 512)
    std::optional<std::string> structure;         // restrict to one structure name
};

struct Plan {
    std::string structure;            // one of planner_structures()
    unsigned k = 0;                   // hashes per key (per segment for APBBF: segments per key)
    unsigned l_or_r = 0;              // APBF/APBBF: l; guarded epoch: r; ring: N
    unsigned block_bits = 0;          // B (0 if unblocked)
    unsigned bits_per_block = 0;      // APBBF: b; blocked guarded epoch: k; else 0
    std::uint64_t bits_per_segment = 0; // slice / segment / ring-filter size in bits
    std::uint64_t segments = 0;       // k+l, r+1 or N+1
    std::uint64_t generation_or_epoch = 0; // insertions between shifts/rotations (g, ℓ, W/N)
    double bits_per_item = 0.0;       // segments * bits_per_segment / W
    double expected_fpr = 0.0;        // model FP (worst case: just before a shift)
    double slack_items = 0.0;         // ℓ (guarded epoch), k·g (APBF), W/N (ring)
    double peak_npws = 0.0;           // see models.hpp (APBF §5.2; guarded epoch definition)
    double accesses_per_query = 0.0;
    double accesses_per_insert = 0.0;
    std::uint64_t total_bytes = 0;    // ceil(segments * bits_per_segment / 8)
};

struct PlanError {
    std::string message;
};

using PlanResult = std::variant<Plan, PlanError>;

// The structure names accepted in PlanRequest::structure.
const std::vector<std::string>& planner_structures();

// Best plan (fewest bits per item among the candidates that meet the target
// and every limit given) or an error: window 0 or above 2^48, fpr outside
// (0,1), unknown structure, bad block size, non-positive limits, or no
// candidate meeting the target within the limits (message starting with
// "no configuration").
PlanResult plan(const PlanRequest& request);

} // namespace agebloom::model
