// Analytical models of the sliding-window filters: false-positive rates,
// expected memory accesses and slack metrics.
//
// Hosted C++ (uses <vector>, <cmath>); nothing here is on the data path. The
// planner (planner.hpp) and the agebloom-plan tool are built on these models.
//
// Sources:
//   [GE]   Alpay & Sarıoğlu, "Guarded Epoch Bloom Filters for Sliding-Window
//          Membership" (arXiv 2606.19210), Prop. 2.
//   [APBF] Shtul, Baquero, Almeida, "Age-Partitioned Bloom Filters"
//          (arXiv 2001.03147), §4 (Bloom background), §5.2 (NPWS), §5.3 (FP
//          recurrence F), §5.4 (Algorithm 1, access recurrence A), §5.5 (eff,
//          Table 2), §6 (APBBF, Table 3).
//   [PSS]  Putze, Sanders, Singler, "Cache-, hash- and space-efficient Bloom
//          filters", ACM JEA 14 (2009): blocked Bloom filter FP as a Poisson
//          mixture over the number of keys that land in a block.
//
// Vocabulary (docs/ALGORITHMS.md, "Vocabulary"): W = window (insertions that must be
// reported), slack = insertions just before the window that may be reported,
// NPWS = expected number of slack keys reported / W, "peak" = just before a
// shift/rotation.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

// Compiled in libagebloom: exported from the shared library, which hides
// everything else (core/export.h).
#pragma GCC visibility push(default)

namespace agebloom::model {

// ---------------------------------------------------------------------------
// Plain and blocked Bloom filter building blocks
// ---------------------------------------------------------------------------

// Expected fill ratio of an m-bit array after `hashes` uniformly random bit
// sets: 1 - (1 - 1/m)^hashes ([APBF] §4.1). Requires m >= 1.
double fill_ratio(double hashes, double m_bits);

// Standard blocked Bloom filter FP [PSS]: every key picks one B-bit block and
// sets k (not necessarily distinct) bits in it. `keys_per_block` is the mean
// load λ = n·B/M; the load of one block is Poisson(λ), so
//   FP = Σ_j Pois(j; λ) · (1 - (1 - 1/B)^(k·j))^k.
double blocked_bloom_fpr(double keys_per_block, unsigned block_bits, unsigned k);

// Blocked Bloom filter whose block is itself partitioned into b parts of B/b
// bits, one bit per part ([APBF] §6, APBBF segments):
//   FP = Σ_j Pois(j; λ) · (1 - (1 - b/B)^j)^b.
// Requires b to divide B.
double partitioned_block_bloom_fpr(double keys_per_block, unsigned block_bits,
                                   unsigned b);

// ---------------------------------------------------------------------------
// Guarded epoch Bloom filter [GE]
// ---------------------------------------------------------------------------

// Geometry of a guarded epoch filter with a budget of m bits:
// r+1 segments of s = floor(m/(r+1)) bits and epoch ℓ = ceil(W/r).
struct GuardedEpochGeometry {
    std::uint64_t segment_bits; // s
    std::uint64_t epoch;        // ℓ (insertions per segment)
};
// s and ℓ of a guarded epoch filter with bits_total bits over a window of W
// insertions and r epochs (the floor and ceiling above). Requires r >= 1.
GuardedEpochGeometry guarded_epoch_geometry(double bits_total, std::uint64_t window,
                                            unsigned r);

// [GE] Prop. 2: p = 1 - (1 - (1 - e^(-kℓ/s))^k)^(r+1). Returns 1 when a
// segment has no bits (s = 0). Requires window >= 1, r >= 1, k >= 1.
double guarded_epoch_fpr(double bits_total, std::uint64_t window, unsigned r,
                         unsigned k);

// Blocked variant ([GE] §2, the paragraph after Proposition 1): each segment is a blocked Bloom
// filter of floor(s/B) blocks of B bits with k bits per key in its block, so
// the per-segment FP is blocked_bloom_fpr(ℓ/blocks, B, k) [PSS] and the
// segments combine as in Prop. 2. Returns 1 when s < B.
double guarded_epoch_blocked_fpr(double bits_total, std::uint64_t window, unsigned r,
                                 unsigned k, unsigned block_bits);

// Peak NPWS of a guarded epoch filter (our definition; the paper bounds the
// stale interval but defines no NPWS). Just before a rotation the r+1
// segments hold (r+1)·ℓ insertions, of which W are live; every one of the
// (r+1)·ℓ - W stale keys still sits in an uncleared segment and answers true
// with probability 1, so peak PWS = (r+1)·ℓ - W and peak NPWS = that / W
// (= 1/r when r divides W). The same holds for a ring of N+1 filters with r=N.
double guarded_epoch_peak_npws(std::uint64_t window, unsigned r);

// ---------------------------------------------------------------------------
// Age-partitioned Bloom filter [APBF] §5
// ---------------------------------------------------------------------------

// Worst-case (just before a shift) fill ratios of the k+l slices, §5.3:
// r_i = (i+1)/(2k) for i < k, 1/2 otherwise.
std::vector<double> apbf_fill_ratios(unsigned k, unsigned l);

// §5.3 recurrence F(k,l,a,i) evaluated at (0,0) with the given per-slice match
// probabilities (size k+l). Probability that some k consecutive slices among
// 0..k+l-1 all match.
double apbf_fpr(unsigned k, unsigned l, const std::vector<double>& match);
// FP of an APBF with the worst-case fill ratios of §5.3.
double apbf_fpr(unsigned k, unsigned l);

// Outcome of Algorithm 1 (jump-back query, §5.4) over independent slices
// with the given match probabilities, from recurrence A extended to also
// accumulate the true-returning paths.
struct QueryOutcome {
    double p_true;          // probability the query returns true
    double accesses_true;   // E[accesses ; returns true]  (not conditional)
    double p_false;         // = 1 - p_true
    double accesses_false;  // E[accesses ; returns false] = A(k,l,0,0,0,l)
    // Mean accesses of a query that returns true (0 if none does).
    double mean_true() const { return p_true > 0 ? accesses_true / p_true : 0.0; }
    // Mean accesses of a query that returns false (0 if none does).
    double mean_false() const { return p_false > 0 ? accesses_false / p_false : 0.0; }
};
// The query outcome of k+l slices with the given per-slice match
// probabilities (size k+l), from recurrence A (§5.4).
QueryOutcome apbf_query_outcome(unsigned k, unsigned l, const std::vector<double>& match);

// Expected slice (or block, for APBBF) accesses of Algorithm 1:
//  - for a false answer: A(k,l,0,0,0,l)/(1-F(k,l,0,0)) (§5.4, Table 2 "false");
//  - for a false positive: the same walk conditioned on returning true
//    (Table 2 "fp");
//  - for a key in the window: average over the l generations of the window
//    (initial slice j = 0..l-1) of the accesses with slices j..j+k-1 forced
//    to match (Table 2 "window").
double apbf_accesses_false(unsigned k, unsigned l, const std::vector<double>& match);
// Accesses for a false positive: the walk conditioned on returning true
// (Table 2 "fp").
double apbf_accesses_fp(unsigned k, unsigned l, const std::vector<double>& match);
// Accesses for a key in the window, averaged over its l possible generations
// (Table 2 "window").
double apbf_accesses_window(unsigned k, unsigned l, const std::vector<double>& match);

// Peak NPWS, §5.2: (Σ_{i<k} q^i) / l where q is the match probability of a
// full slice/segment (q = 1/2 for APBF; the full-segment FP for APBBF). The
// i-th slack generation has lost i slices and is reported when the i full
// slices before its survivors match.
double apbf_peak_npws(unsigned k, unsigned l, double full_match = 0.5);

// Space efficiency relative to a Bloom filter with the same FP and capacity
// equal to the window, §5.5: eff = k_b/k_a · l/(k_a+l) with k_b = log2(1/FP)
// (the, real-valued, number of slices a Bloom filter needs for that FP).
double apbf_efficiency(unsigned k, unsigned l);

// Bits per window item of an APBF with ideal slice sizes: (k+l)·k/(l·ln 2)
// (slice m, generation g = m·ln2/k, window l·g).
double apbf_bits_per_item(unsigned k, unsigned l);

// One row of [APBF] Table 2; every number is computed from the model.
struct Table2Row {
    unsigned k, l;  // the shape: k slices per key, l generations
    double actual_fp, eff, accesses_window, accesses_fp, accesses_false, npws;  // the model's FP, eff (§5.5), the three access columns and peak NPWS
};
// The paper's 25 (k, l) pairs (data from Table 2).
std::vector<std::pair<unsigned, unsigned>> apbf_table2_configs();
// Table 2's row for (k, l), from the model.
Table2Row apbf_table2_row(unsigned k, unsigned l);
// apbf_table2_row() over apbf_table2_configs(), in the paper's order.
std::vector<Table2Row> apbf_table2();

// The published parameterisation (ALGORITHMS.md, APBF section) for capacity n
// and target fp: k = ceil(-log2 fp); l = largest l <= 100 with FP(k,l) <= fp;
// g = ceil(n/(l+1)); slice bits = ceil(k·g/ln2); capacity (l+1)·g.
// l = 0 if no l in 1..100 qualifies.
struct ApbfParams {
    unsigned k, l;  // k slices per key; l generations (0: none qualifies)
    std::uint64_t generation, slice_bits, capacity;  // g, slice bits, and the capacity (l+1)·g
};
// The published parameters for capacity n and target FP fp (above).
ApbfParams apbf_published_params(std::uint64_t n, double fp);
// Largest l in 1..max_l with FP(k,l) <= fp (FP grows with l), 0 if none.
unsigned apbf_largest_l(unsigned k, double fp, unsigned max_l = 100);

// ---------------------------------------------------------------------------
// Age-partitioned blocked Bloom filter [APBF] §6
// ---------------------------------------------------------------------------

// Mean keys per block at which a partitioned block's expected part fill is
// 1/2: λ_full = ln2 / -ln(1 - b/B). A segment is "full" at this load, the
// analogue of fill ratio 1/2 (this is what reproduces Table 3's "cap.").
double apbbf_full_load(unsigned block_bits, unsigned b);
// Capacity relative to an APBF (k·b, l·b) with the same memory, Table 3
// "cap.": λ_full / ((B/b)·ln2).
double apbbf_relative_capacity(unsigned block_bits, unsigned b);
// Worst-case match probabilities of the k+l segments: segment i holds
// min(i+1, k)/k · λ_full keys per block; its match probability is the
// partitioned blocked FP at that load (§6: "replacing the slice fill ratio by
// the subfilter false positive rate").
std::vector<double> apbbf_segment_fprs(unsigned k, unsigned l, unsigned block_bits,
                                       unsigned b);
// FP of an APBBF with k+l segments of B-bit blocks, b bits per block, at
// the worst-case loads of apbbf_segment_fprs() (the §5.3 recurrence F).
double apbbf_fpr(unsigned k, unsigned l, unsigned block_bits, unsigned b);
// Bits per window item: (k+l)·k·B / (l·λ_full).
double apbbf_bits_per_item(unsigned k, unsigned l, unsigned block_bits, unsigned b);

// One row of [APBF] Table 3; every number is computed from the model.
struct Table3Row {
    unsigned k, l, block_bits, b;  // the shape: k, l, B and b
    double apbbf_fp, apbf_fp, capacity, accesses_window, accesses_fp,  // both FPs, capacity relative to APBF, the accesses and peak NPWS
        accesses_false, npws;
};
// The (k, l, B, b) rows of Table 3, computed from the model.
std::vector<Table3Row> apbbf_table3();

} // namespace agebloom::model

#pragma GCC visibility pop
