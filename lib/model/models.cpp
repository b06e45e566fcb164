// Analytical models; see include/agebloom/model/models.hpp for the contracts
// and the paper sections each function implements.
#include "agebloom/model/models.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "agebloom/core/bloom_math.hpp"
#include "agebloom/core/math.hpp"
#include "agebloom/filters/apbf.hpp"
#include "agebloom/filters/guarded_epoch.hpp"

namespace agebloom::model {

namespace {

constexpr double kLn2 = 0.69314718055994530942;

// The formulas are the core's (core/bloom_math.hpp, core/math.hpp): the
// filters' own models. What this file adds is the papers' parameterisations,
// their tables and the access recurrences.
double one_minus_pow_complement(double x, double n) {
    if (x >= 1.0) return 1.0;
    if (x <= 0.0) return 0.0;
    return math::any_of(x, n);
}

// Inputs outside a function's domain give NaN (or an empty result): the
// library throws nothing.
constexpr double kInvalid = std::numeric_limits<double>::quiet_NaN();

} // namespace

// ---------------------------------------------------------------------------
// Bloom building blocks
// ---------------------------------------------------------------------------

double fill_ratio(double hashes, double m_bits) {
    if (!(m_bits >= 1.0)) return kInvalid;
    if (hashes <= 0.0) return 0.0;
    return one_minus_pow_complement(1.0 / m_bits, hashes);
}

double blocked_bloom_fpr(double keys_per_block, unsigned block_bits, unsigned k) {
    if (!(block_bits >= 1 && k >= 1)) return kInvalid;
    // [PSS] §3: a block that received j keys has k·j bits set at random.
    return bloom_math::blocked_fpr(block_bits, keys_per_block, k, block_bits);
}

double partitioned_block_bloom_fpr(double keys_per_block, unsigned block_bits,
                                   unsigned b) {
    if (!(b >= 1 && block_bits % b == 0 && block_bits / b >= 1)) return kInvalid;
    // Each part of a block with j keys received exactly j bit sets.
    return bloom_math::partitioned_block_fpr(block_bits, keys_per_block, block_bits, b);
}

// ---------------------------------------------------------------------------
// Guarded epoch [GE]
// ---------------------------------------------------------------------------

GuardedEpochGeometry guarded_epoch_geometry(double bits_total, std::uint64_t window,
                                            unsigned r) {
    if (!(window >= 1 && r >= 1)) return {};
    const double s = std::floor(std::max(0.0, bits_total) / (r + 1.0));
    return {static_cast<std::uint64_t>(s), (window + r - 1) / r};
}

double guarded_epoch_fpr(double bits_total, std::uint64_t window, unsigned r,
                         unsigned k) {
    if (!(k >= 1)) return kInvalid;
    const auto geo = guarded_epoch_geometry(bits_total, window, r);
    if (geo.segment_bits == 0) return 1.0;
    // Prop. 2: one segment receives ℓ insertions of k bits each, the
    // formula GuardedEpochConfig::model_fpr evaluates.
    return one_minus_pow_complement(bloom_math::fpr(double(geo.segment_bits), double(geo.epoch), k), r + 1.0);
}

double guarded_epoch_blocked_fpr(double bits_total, std::uint64_t window, unsigned r,
                                 unsigned k, unsigned block_bits) {
    if (!(k >= 1 && block_bits >= 1)) return kInvalid;
    const auto geo = guarded_epoch_geometry(bits_total, window, r);
    const std::uint64_t blocks = geo.segment_bits / block_bits;
    if (blocks == 0) return 1.0;
    const double segment_fp =
        blocked_bloom_fpr(double(geo.epoch) / double(blocks), block_bits, k);
    return one_minus_pow_complement(segment_fp, r + 1.0);
}

double guarded_epoch_peak_npws(std::uint64_t window, unsigned r) {
    if (!(window >= 1 && r >= 1)) return kInvalid;
    const std::uint64_t epoch = (window + r - 1) / r;
    const std::uint64_t retained = (r + 1ull) * epoch;
    return double(retained - window) / double(window);
}

// ---------------------------------------------------------------------------
// APBF [APBF] §5
// ---------------------------------------------------------------------------

std::vector<double> apbf_fill_ratios(unsigned k, unsigned l) {
    if (!(k >= 1)) return {};
    std::vector<double> r(k + l, 0.5);
    for (unsigned i = 0; i < k; ++i) r[i] = (i + 1.0) / (2.0 * k);
    return r;
}

double apbf_fpr(unsigned k, unsigned l, const std::vector<double>& match) {
    if (!(k >= 1 && match.size() == std::size_t(k) + l)) return kInvalid;
    if (k > ApbfConfig::kMaxK || l > ApbfConfig::kMaxL) return kInvalid;
    // §5.3 F(a, i): the recurrence ApbfConfig::model_fpr evaluates.
    return ApbfConfig::scan_fpr(k, l, match.data());
}

double apbf_fpr(unsigned k, unsigned l) { return apbf_fpr(k, l, apbf_fill_ratios(k, l)); }

namespace {

// Recurrence A of §5.4 over the states (p, c, i) of Algorithm 1, memoised.
// For every state it returns the probability of each answer and the expected
// number of accesses accumulated on the paths giving that answer (counted
// from this state on), which covers A (false answers) and its analogue for
// true answers in one pass.
class JumpBackWalk {
public:
    JumpBackWalk(unsigned k, unsigned l, const std::vector<double>& match)
        : k_(k), l_(l), match_(match),
          memo_(std::size_t(k) * k * (2u * k + l + 1)), done_(memo_.size(), false) {}

    QueryOutcome run() { return at(0, 0, int(l_)); }

private:
    QueryOutcome at(unsigned p, unsigned c, int i) {
        if (p + c == k_) return {1.0, 0.0, 0.0, 0.0}; // returns true
        if (i < 0) return {0.0, 0.0, 1.0, 0.0};       // returns false
        const std::size_t idx = (std::size_t(p) * k_ + c) * (2u * k_ + l_ + 1) + std::size_t(i);
        if (done_[idx]) return memo_[idx];
        const double q = match_[std::size_t(i)];
        // Algorithm 1: a hit extends the run (i+1), a miss jumps back k slices
        // carrying the run length into p.
        const QueryOutcome hit = at(p, c + 1, i + 1);
        const QueryOutcome miss = at(c, 0, i - int(k_));
        QueryOutcome out;
        out.p_true = q * hit.p_true + (1 - q) * miss.p_true;
        out.p_false = q * hit.p_false + (1 - q) * miss.p_false;
        // This access is paid on every path through the state.
        out.accesses_true = q * (hit.accesses_true + hit.p_true) +
                            (1 - q) * (miss.accesses_true + miss.p_true);
        out.accesses_false = q * (hit.accesses_false + hit.p_false) +
                             (1 - q) * (miss.accesses_false + miss.p_false);
        memo_[idx] = out;
        done_[idx] = true;
        return out;
    }

    unsigned k_, l_;
    const std::vector<double>& match_;
    std::vector<QueryOutcome> memo_;
    std::vector<bool> done_;
};

} // namespace

QueryOutcome apbf_query_outcome(unsigned k, unsigned l, const std::vector<double>& match) {
    if (!(k >= 1 && match.size() == std::size_t(k) + l)) return {};
    return JumpBackWalk(k, l, match).run();
}

double apbf_accesses_false(unsigned k, unsigned l, const std::vector<double>& match) {
    return apbf_query_outcome(k, l, match).mean_false();
}

double apbf_accesses_fp(unsigned k, unsigned l, const std::vector<double>& match) {
    return apbf_query_outcome(k, l, match).mean_true();
}

double apbf_accesses_window(unsigned k, unsigned l, const std::vector<double>& match) {
    if (!(l >= 1)) return kInvalid;
    // A window key of age j generations occupies slices j..j+k-1 (§5.2); the
    // window holds l generations, j = 0..l-1, equally many keys each.
    double sum = 0.0;
    for (unsigned j = 0; j < l; ++j) {
        std::vector<double> with_key = match;
        std::fill(with_key.begin() + j, with_key.begin() + j + k, 1.0);
        sum += apbf_query_outcome(k, l, with_key).mean_true();
    }
    return sum / l;
}

double apbf_peak_npws(unsigned k, unsigned l, double full_match) {
    if (!(k >= 1 && l >= 1)) return kInvalid;
    // §5.2: one slack generation is always reported, the next has lost one
    // slice (reported w.p. q), the next two (q^2), ...
    double sum = 0.0, term = 1.0;
    for (unsigned i = 0; i < k; ++i, term *= full_match) sum += term;
    return sum / l;
}

double apbf_efficiency(unsigned k, unsigned l) {
    const double kb = -std::log2(apbf_fpr(k, l));
    return kb / k * double(l) / double(k + l);
}

double apbf_bits_per_item(unsigned k, unsigned l) {
    if (!(k >= 1 && l >= 1)) return kInvalid;
    return double(k + l) * k / (l * kLn2);
}

std::vector<std::pair<unsigned, unsigned>> apbf_table2_configs() {
    // [APBF] Table 2, rows top to bottom (aimed fp 1e-1 .. 1e-5, 5 rows each).
    return {{4, 3},   {5, 7},   {6, 14},  {7, 28},  {8, 56},  {7, 5},   {8, 8},
            {9, 14},  {10, 25}, {11, 46}, {10, 7},  {11, 9},  {12, 14}, {13, 23},
            {14, 40}, {14, 11}, {15, 15}, {16, 22}, {17, 36}, {18, 63}, {17, 13},
            {18, 16}, {19, 22}, {20, 33}, {21, 54}};
}

Table2Row apbf_table2_row(unsigned k, unsigned l) {
    const auto fills = apbf_fill_ratios(k, l);
    const auto outcome = apbf_query_outcome(k, l, fills);
    Table2Row row{};
    row.k = k;
    row.l = l;
    row.actual_fp = outcome.p_true;
    row.eff = apbf_efficiency(k, l);
    row.accesses_window = apbf_accesses_window(k, l, fills);
    row.accesses_fp = outcome.mean_true();
    row.accesses_false = outcome.mean_false();
    row.npws = apbf_peak_npws(k, l);
    return row;
}

std::vector<Table2Row> apbf_table2() {
    std::vector<Table2Row> rows;
    for (auto [k, l] : apbf_table2_configs()) rows.push_back(apbf_table2_row(k, l));
    return rows;
}

unsigned apbf_largest_l(unsigned k, double fp, unsigned max_l) {
    // FP(k, l) grows with l (more windows of k slices), so scan upwards.
    unsigned best = 0;
    for (unsigned l = 1; l <= max_l; ++l) {
        if (apbf_fpr(k, l) <= fp) best = l;
        else break;
    }
    return best;
}

ApbfParams apbf_published_params(std::uint64_t n, double fp) {
    if (!(n >= 1 && fp > 0.0 && fp < 1.0)) return {};
    ApbfParams p{};
    p.k = static_cast<unsigned>(std::ceil(-std::log2(fp)));
    if (p.k == 0) p.k = 1;
    p.l = apbf_largest_l(p.k, fp);
    if (p.l == 0) return p;
    p.generation = (n + p.l) / (p.l + 1); // ceil(n / (l+1))
    p.slice_bits = static_cast<std::uint64_t>(std::ceil(double(p.k) * p.generation / kLn2));
    p.capacity = (p.l + 1ull) * p.generation;
    return p;
}

// ---------------------------------------------------------------------------
// APBBF [APBF] §6
// ---------------------------------------------------------------------------

double apbbf_full_load(unsigned block_bits, unsigned b) {
    if (!(b >= 1 && block_bits % b == 0 && block_bits > b)) return kInvalid;
    // Expected fill of a B/b-bit part after λ keys is 1-(1-b/B)^λ; solve = 1/2.
    return kLn2 / -std::log1p(-double(b) / block_bits);
}

double apbbf_relative_capacity(unsigned block_bits, unsigned b) {
    return apbbf_full_load(block_bits, b) / (double(block_bits) / b * kLn2);
}

std::vector<double> apbbf_segment_fprs(unsigned k, unsigned l, unsigned block_bits,
                                       unsigned b) {
    if (!(k >= 1)) return {};
    const double full = apbbf_full_load(block_bits, b);
    std::vector<double> fp(k + l);
    for (unsigned i = 0; i < k + l; ++i) {
        const double load = std::min(i + 1u, k) * full / k; // i+1 generations, capped at k
        fp[i] = partitioned_block_bloom_fpr(load, block_bits, b);
    }
    return fp;
}

double apbbf_fpr(unsigned k, unsigned l, unsigned block_bits, unsigned b) {
    return apbf_fpr(k, l, apbbf_segment_fprs(k, l, block_bits, b));
}

double apbbf_bits_per_item(unsigned k, unsigned l, unsigned block_bits, unsigned b) {
    if (!(k >= 1 && l >= 1)) return kInvalid;
    return double(k + l) * k * block_bits / (l * apbbf_full_load(block_bits, b));
}

std::vector<Table3Row> apbbf_table3() {
    // [APBF] Table 3 configurations (k, l, B, b), rows top to bottom.
    static constexpr unsigned configs[16][4] = {
        {2, 3, 64, 4}, {2, 3, 512, 4}, {2, 5, 64, 4}, {2, 5, 512, 4},
        {3, 5, 64, 4}, {3, 5, 512, 4}, {3, 8, 64, 4}, {3, 8, 512, 4},
        {2, 3, 64, 8}, {2, 3, 512, 8}, {2, 5, 64, 8}, {2, 5, 512, 8},
        {3, 5, 64, 8}, {3, 5, 512, 8}, {3, 8, 64, 8}, {3, 8, 512, 8}};
    std::vector<Table3Row> rows;
    for (const auto& c : configs) {
        const unsigned k = c[0], l = c[1], B = c[2], b = c[3];
        const auto seg = apbbf_segment_fprs(k, l, B, b);
        const auto outcome = apbf_query_outcome(k, l, seg);
        Table3Row row{};
        row.k = k;
        row.l = l;
        row.block_bits = B;
        row.b = b;
        row.apbbf_fp = outcome.p_true;
        row.apbf_fp = apbf_fpr(k * b, l * b); // same memory, §6 / Table 3 caption
        row.capacity = apbbf_relative_capacity(B, b);
        row.accesses_window = apbf_accesses_window(k, l, seg);
        row.accesses_fp = outcome.mean_true();
        row.accesses_false = outcome.mean_false();
        row.npws = apbf_peak_npws(k, l, seg.back());
        rows.push_back(row);
    }
    return rows;
}

} // namespace agebloom::model
