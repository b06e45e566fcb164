// Planner: enumerate candidate configurations of every structure, keep those
// meeting the target FP, and return the one with the fewest bits per window
// item that satisfies the limits. See planner.hpp for the contract.
#include "agebloom/model/planner.hpp"

#include "agebloom/model/models.hpp"

#include "agebloom/filters/interleaved_epoch.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

namespace agebloom::model {

namespace {

constexpr double kLn2 = 0.69314718055994530942;
constexpr unsigned kDefaultBlockBits = 512;
constexpr unsigned kMaxEpochs = 32;  // r (and ring N) search range 1..32
constexpr unsigned kMaxHashes = 64;  // k search range for guarded epoch
constexpr unsigned kMaxBlockedHashes = 32; // ... and for its blocked variant
constexpr std::uint64_t kMaxWindow = std::uint64_t(1) << 48; // keeps bit counts in uint64
constexpr unsigned kMaxL = 100;      // APBF l limit of the published parameterisation

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

// A plan whose accesses_per_query is computed on demand: for APBF it costs a
// walk per window generation, so it is only evaluated for candidates that
// are otherwise the cheapest.
struct Candidate {
    Plan plan;
    std::function<double()> query_accesses;
};

void finish_memory(Plan& p, std::uint64_t window) {
    const double total_bits = double(p.bits_per_segment) * double(p.segments);
    p.bits_per_item = total_bits / double(window);
    p.total_bytes = ceil_div(p.bits_per_segment * p.segments, 8);
}

// Expected probes of one plain Bloom test that stops at the first zero bit,
// with bit fill q: Σ_{j<k} q^j (APBF §4.2 for q = 1/2).
double probes_until_zero(unsigned k, double q) {
    double sum = 0.0, term = 1.0;
    for (unsigned j = 0; j < k; ++j, term *= q) sum += term;
    return sum;
}

// Segments visited in a fixed order with early exit inside each segment; a
// window key costs k probes in its own segment plus the others in the worst
// position, and that bounds a negative query ((segments)·E) as well.
double segmented_query_accesses(unsigned k, std::uint64_t segments, double fill) {
    const double e = probes_until_zero(k, fill);
    return std::max(k + double(segments - 1) * e, double(segments) * e);
}

// -- guarded epoch ---------------------------------------------------------

// Smallest segment size s (bits) with Prop. 2 FP <= target, closed form:
// per-segment FP t = 1-(1-fpr)^(1/(r+1)); (1-e^(-kℓ/s))^k <= t
// <=> s >= -kℓ / ln(1 - t^(1/k)). Returns 0 when no s below kMaxBits works.
constexpr double kMaxBits = 1e18; // far beyond any memory; keeps uint64 math safe

std::uint64_t guarded_epoch_min_segment(std::uint64_t window, unsigned r, unsigned k,
                                        double fpr) {
    const double epoch = double(ceil_div(window, r));
    const double t = -std::expm1(std::log1p(-fpr) / (r + 1.0));
    const double root = std::exp(std::log(t) / k); // t^(1/k)
    const double s = std::ceil(-double(k) * epoch / std::log1p(-root));
    if (!(s <= kMaxBits / (r + 1))) return 0;
    auto seg = static_cast<std::uint64_t>(std::max(1.0, s));
    // Guard against rounding in the closed form: step up until the model agrees.
    for (int i = 0; i < 64 && guarded_epoch_fpr(double(seg) * (r + 1), window, r, k) > fpr; ++i)
        seg += seg / 100000 + 1;
    return guarded_epoch_fpr(double(seg) * (r + 1), window, r, k) <= fpr ? seg : 0;
}

void add_guarded_epoch(const PlanRequest& req, std::vector<Candidate>& out) {
    for (unsigned r = 1; r <= kMaxEpochs; ++r) {
        for (unsigned k = 1; k <= kMaxHashes; ++k) {
            Plan p;
            p.structure = "guarded_epoch";
            p.k = k;
            p.l_or_r = r;
            p.segments = r + 1;
            p.bits_per_segment = guarded_epoch_min_segment(req.window, r, k, req.fpr);
            if (p.bits_per_segment == 0) continue; // needs absurd memory
            p.generation_or_epoch = ceil_div(req.window, r);
            p.expected_fpr = guarded_epoch_fpr(double(p.bits_per_segment) * (r + 1), req.window, r, k);
            p.slack_items = double(p.generation_or_epoch);
            p.peak_npws = guarded_epoch_peak_npws(req.window, r);
            p.accesses_per_insert = k;
            const double fill =
                1.0 - std::exp(-double(k) * p.generation_or_epoch / double(p.bits_per_segment));
            p.accesses_per_query = segmented_query_accesses(k, p.segments, fill);
            finish_memory(p, req.window);
            out.push_back({p, nullptr});
        }
    }
}

void add_guarded_epoch_blocked(const PlanRequest& req, unsigned block_bits,
                               std::vector<Candidate>& out) {
    for (unsigned r = 1; r <= kMaxEpochs; ++r) {
        for (unsigned k = 1; k <= std::min(kMaxBlockedHashes, block_bits); ++k) {
            auto fp_at = [&](std::uint64_t blocks) {
                return guarded_epoch_blocked_fpr(double(blocks) * block_bits * (r + 1),
                                                 req.window, r, k, block_bits);
            };
            // Blocking only adds FP (the block load varies), so the unblocked
            // minimum is a lower bound; FP falls as blocks grow: double from
            // there to find an upper bound, then bisect.
            const std::uint64_t unblocked = guarded_epoch_min_segment(req.window, r, k, req.fpr);
            if (unblocked == 0) continue;
            std::uint64_t lo = unblocked / block_bits;
            // Rounding can put the bound itself on the feasible side: halve
            // until infeasible (or 0) so that lo stays infeasible.
            std::uint64_t hi = std::max<std::uint64_t>(1, 2 * lo);
            while (lo > 0 && fp_at(lo) <= req.fpr) { hi = lo; lo /= 2; }
            const double max_blocks = kMaxBits / block_bits / (r + 1);
            while (fp_at(hi) > req.fpr && double(hi) < max_blocks) { lo = hi; hi *= 2; }
            if (fp_at(hi) > req.fpr) continue;
            while (hi - lo > 1) {
                const std::uint64_t mid = lo + (hi - lo) / 2;
                (fp_at(mid) <= req.fpr ? hi : lo) = mid;
            }
            Plan p;
            p.structure = "guarded_epoch_blocked";
            p.k = k;
            p.l_or_r = r;
            p.block_bits = block_bits;
            p.bits_per_block = k;
            p.segments = r + 1;
            p.bits_per_segment = hi * block_bits;
            p.generation_or_epoch = ceil_div(req.window, r);
            p.expected_fpr = fp_at(hi);
            p.slack_items = double(p.generation_or_epoch);
            p.peak_npws = guarded_epoch_peak_npws(req.window, r);
            p.accesses_per_insert = 1;           // one block
            p.accesses_per_query = double(r + 1); // one block per segment
            finish_memory(p, req.window);
            out.push_back({p, nullptr});
        }
    }
}

// -- APBF / APBBF ----------------------------------------------------------

void add_apbf(const PlanRequest& req, std::vector<Candidate>& out) {
    const auto k0 = static_cast<unsigned>(std::max(1.0, std::ceil(-std::log2(req.fpr))));
    for (unsigned k = k0 > 2 ? k0 - 2 : 1; k <= k0 + 6; ++k) {
        for (unsigned l = 1; l <= kMaxL; ++l) {
            const double fp = apbf_fpr(k, l);
            if (fp > req.fpr) break; // FP grows with l
            Plan p;
            p.structure = "apbf";
            p.k = k;
            p.l_or_r = l;
            p.segments = k + l;
            p.generation_or_epoch = ceil_div(req.window, l); // l·g >= W
            p.bits_per_segment = static_cast<std::uint64_t>(
                std::ceil(double(k) * p.generation_or_epoch / kLn2)); // §5.2 g = m ln2 / k
            p.expected_fpr = fp;
            p.slack_items = double(k) * p.generation_or_epoch; // §5.2 s = k·g
            p.peak_npws = apbf_peak_npws(k, l);
            p.accesses_per_insert = k;
            finish_memory(p, req.window);
            out.push_back({p, [k, l] {
                               const auto fills = apbf_fill_ratios(k, l);
                               return std::max(apbf_accesses_window(k, l, fills),
                                               apbf_accesses_false(k, l, fills));
                           }});
        }
    }
}

void add_apbbf(const PlanRequest& req, unsigned block_bits, std::vector<Candidate>& out) {
    for (unsigned b = 1; b < block_bits && b <= 32; b *= 2) {
        const double full = apbbf_full_load(block_bits, b);
        for (unsigned k = 1; k <= 8; ++k) {
            // Segments beyond the k-th are all full: compute the k distinct
            // match probabilities once and extend per l.
            const auto head = apbbf_segment_fprs(k, 0, block_bits, b);
            for (unsigned l = 1; l <= kMaxL; ++l) {
                auto seg = head;
                seg.resize(k + l, head.back());
                const double fp = apbf_fpr(k, l, seg);
                if (fp > req.fpr) break;
                Plan p;
                p.structure = "apbbf";
                p.k = k;
                p.l_or_r = l;
                p.block_bits = block_bits;
                p.bits_per_block = b;
                p.segments = k + l;
                p.generation_or_epoch = ceil_div(req.window, l);
                // A segment is full after k generations at λ_full keys per block.
                const auto blocks = static_cast<std::uint64_t>(
                    std::ceil(double(k) * p.generation_or_epoch / full));
                p.bits_per_segment = blocks * block_bits;
                p.expected_fpr = fp;
                p.slack_items = double(k) * p.generation_or_epoch;
                p.peak_npws = apbf_peak_npws(k, l, seg.back());
                p.accesses_per_insert = k; // one block per segment
                finish_memory(p, req.window);
                out.push_back({p, [k, l, seg] {
                                   return std::max(apbf_accesses_window(k, l, seg),
                                                   apbf_accesses_false(k, l, seg));
                               }});
            }
        }
    }
}

// -- ring of N+1 Bloom filters (papers/004) ----------------------------------

void add_ring(const PlanRequest& req, std::vector<Candidate>& out) {
    for (unsigned n = 1; n <= kMaxEpochs; ++n) {
        const std::uint64_t per_filter = ceil_div(req.window, n);
        const double f = -std::expm1(std::log1p(-req.fpr) / (n + 1.0));
        // Textbook Bloom sizing at capacity: m = -c ln f / ln²2, k = round(ln2·m/c).
        double m = std::ceil(-double(per_filter) * std::log(f) / (kLn2 * kLn2));
        const unsigned k =
            std::max(1u, static_cast<unsigned>(std::lround(kLn2 * m / double(per_filter))));
        auto fp_at = [&](double bits) {
            const double single = std::pow(-std::expm1(-double(k) * per_filter / bits), double(k));
            return -std::expm1((n + 1.0) * std::log1p(-single));
        };
        // Rounding k may leave the FP a hair above target: grow m slightly.
        for (int i = 0; i < 1000 && fp_at(m) > req.fpr; ++i) m = std::ceil(m * 1.001);
        if (!(m <= kMaxBits / (n + 1)) || fp_at(m) > req.fpr) continue;
        Plan p;
        p.structure = "ring";
        p.k = k;
        p.l_or_r = n;
        p.segments = n + 1;
        p.bits_per_segment = static_cast<std::uint64_t>(m);
        p.generation_or_epoch = per_filter;
        p.expected_fpr = fp_at(m);
        p.slack_items = double(per_filter);
        p.peak_npws = guarded_epoch_peak_npws(req.window, n); // same retention as r = N
        p.accesses_per_insert = k;
        const double fill = 1.0 - std::exp(-double(k) * per_filter / m);
        p.accesses_per_query = segmented_query_accesses(k, p.segments, fill);
        finish_memory(p, req.window);
        out.push_back({p, nullptr});
    }
}

// -- interleaved one-line layout -----------------------------------------------

// The guarded epoch filter with every segment's lane of a line index in one
// 64-byte line (include/agebloom/filters/interleaved_epoch.hpp): one line per
// query, one word per insert. All lanes used (r + 1 = 8 lanes of 64 bits or
// 16 of 32), sized by the library's own model (Prop. 2 over blocked segments
// of lane width with partitioned patterns), which the core tests hold to
// measurement.
void add_interleaved(const PlanRequest& req, std::vector<Candidate>& out) {
    for (unsigned lane : {64u, 32u}) {
        auto c = InterleavedEpochConfig::for_fpr(Window::count(req.window), req.fpr, lane);
        if (!c) continue;
        Plan p;
        p.structure = "interleaved";
        p.k = c->k;
        p.l_or_r = c->r;
        p.block_bits = lane;
        p.bits_per_block = c->k;
        p.segments = c->segments();
        p.bits_per_segment = c->lines * lane;
        p.generation_or_epoch = c->epoch_length();
        p.expected_fpr = c->model_fpr();
        p.slack_items = double(c->epoch_length());
        p.peak_npws = guarded_epoch_peak_npws(req.window, c->r);
        p.accesses_per_query = 1;
        p.accesses_per_insert = 1;
        finish_memory(p, req.window);
        out.push_back({p, nullptr});
    }
}

std::optional<PlanError> validate(const PlanRequest& req) {
    if (req.window == 0) return PlanError{"window must be at least 1"};
    if (req.window > kMaxWindow) return PlanError{"window must be at most 2^48"};
    if (!(req.fpr > 0.0 && req.fpr < 1.0)) return PlanError{"fpr must lie in (0, 1)"};
    if (req.max_npws && !(*req.max_npws > 0.0)) return PlanError{"max_npws must be > 0"};
    if (req.max_bits_per_item && !(*req.max_bits_per_item > 0.0))
        return PlanError{"max_bits_per_item must be > 0"};
    if (req.max_accesses_per_query && !(*req.max_accesses_per_query > 0.0))
        return PlanError{"max_accesses_per_query must be > 0"};
    if (req.block_bits) {
        const unsigned b = *req.block_bits;
        if (b < 16 || b > 65536 || (b & (b - 1)) != 0)
            return PlanError{"block_bits must be a power of two in [16, 65536]"};
    }
    if (req.structure) {
        const auto& names = planner_structures();
        if (std::find(names.begin(), names.end(), *req.structure) == names.end())
            return PlanError{"unknown structure '" + *req.structure + "'"};
    }
    return std::nullopt;
}

bool wanted(const PlanRequest& req, const char* name) {
    return !req.structure || *req.structure == name;
}

} // namespace

const std::vector<std::string>& planner_structures() {
    static const std::vector<std::string> names = {"guarded_epoch", "guarded_epoch_blocked",
                                                   "apbf", "apbbf", "ring", "interleaved"};
    return names;
}

PlanResult plan(const PlanRequest& req) {
    if (auto err = validate(req)) return *err;
    const unsigned block_bits = req.block_bits.value_or(kDefaultBlockBits);

    std::vector<Candidate> cands;
    if (wanted(req, "guarded_epoch")) add_guarded_epoch(req, cands);
    if (wanted(req, "guarded_epoch_blocked")) add_guarded_epoch_blocked(req, block_bits, cands);
    if (wanted(req, "apbf")) add_apbf(req, cands);
    if (wanted(req, "apbbf")) add_apbbf(req, block_bits, cands);
    if (wanted(req, "ring")) add_ring(req, cands);
    if (wanted(req, "interleaved")) add_interleaved(req, cands);

    // Cheap limits first, then the cheapest candidate whose (possibly lazily
    // computed) query cost fits.
    std::erase_if(cands, [&](const Candidate& c) {
        return (req.max_npws && c.plan.peak_npws > *req.max_npws) ||
               (req.max_bits_per_item && c.plan.bits_per_item > *req.max_bits_per_item) ||
               (req.max_accesses_per_query && c.plan.accesses_per_insert > *req.max_accesses_per_query &&
                c.plan.structure.starts_with("apb")); // a window query costs >= k
    });
    std::stable_sort(cands.begin(), cands.end(), [](const Candidate& a, const Candidate& b) {
        return a.plan.bits_per_item < b.plan.bits_per_item;
    });
    for (auto& c : cands) {
        if (c.query_accesses) c.plan.accesses_per_query = c.query_accesses();
        if (req.max_accesses_per_query && c.plan.accesses_per_query > *req.max_accesses_per_query)
            continue;
        return c.plan;
    }
    return PlanError{"no configuration meets fpr " + std::to_string(req.fpr) +
                     " within the given limits"};
}

} // namespace agebloom::model
