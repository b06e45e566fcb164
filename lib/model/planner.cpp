// Planner: every registered structure emits its ready candidate
// configurations (StructureTraits<S>::plan, sized by the structure's own
// model); here each gets the hosted figures (NPWS, accesses), the limits
// filter them, and the one with the fewest bits per window item wins. See
// planner.hpp for the contract.
#include "agebloom/model/planner.hpp"

#include "agebloom/model/models.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>

namespace agebloom::model {

namespace {

constexpr std::uint64_t kMaxWindow = std::uint64_t(1) << 48; // keeps bit counts in uint64

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

// A plan whose accesses_per_query is computed on demand: for APBF it costs a
// walk per window generation, so it is only evaluated for candidates that
// are otherwise the cheapest.
struct Candidate {
    Plan plan;
    std::function<double()> query_accesses;
};

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

// -- the hosted figures of each config type ----------------------------------

// How far past the window a key may still be found, in insertions. Epochs:
// a key that opens an epoch lives until its segment is reused, r + 1 epochs
// later (Guarded Epoch Bloom Filters, Lemma 1): ℓ past r·ℓ, and r·ℓ itself
// may exceed W by the rounding of ℓ = ⌈W/r⌉.
double epoch_slack(std::uint64_t epoch, unsigned r, double items) {
    return double(epoch) * (r + 1) - items;
}
// Generations: the slack s = k·g of Age-Partitioned Bloom Filters Sec. 5.2
// (the key's last slices still raise the odds of a match), past l·g, which
// may exceed W by the rounding of g = ⌈W/l⌉.
double generation_slack(std::uint64_t generation, unsigned k, unsigned l, double items) {
    return double(generation) * (k + l) - items;
}

Plan describe(const GuardedEpochConfig& c, double items) {
    Plan p;
    p.k = c.k;
    p.l_or_r = c.r;
    p.block_bits = c.block_bits;
    p.bits_per_block = c.block_bits ? c.k : 0;
    p.segments = c.segments();
    p.bits_per_segment = c.usable_segment_bits();
    p.generation_or_epoch = ceil_div(std::uint64_t(items), c.r);
    p.slack_items = epoch_slack(p.generation_or_epoch, c.r, items);
    p.peak_npws = guarded_epoch_peak_npws(std::uint64_t(items), c.r);
    p.accesses_per_insert = c.block_bits ? 1 : c.k;
    const double fill = 1.0 - std::exp(-double(c.k) * c.epoch_load() / double(p.bits_per_segment));
    p.accesses_per_query = c.block_bits ? double(p.segments) : segmented_query_accesses(c.k, p.segments, fill);
    return p;
}

std::vector<double> apbf_matches(const ApbfConfig& c) {
    std::vector<double> m(c.slices());
    c.match_probabilities(m.data());
    return m;
}

Plan describe(const ApbfConfig& c, double items) {
    Plan p;
    p.k = c.k;
    p.l_or_r = c.l;
    p.block_bits = c.block_bits;
    p.bits_per_block = c.bits_per_block;
    p.segments = c.slices();
    p.bits_per_segment = c.usable_slice_bits();
    p.generation_or_epoch = ceil_div(std::uint64_t(items), c.l);
    p.slack_items = generation_slack(p.generation_or_epoch, c.k, c.l, items);
    p.peak_npws = apbf_peak_npws(c.k, c.l, apbf_matches(c).back());
    p.accesses_per_insert = c.k;
    return p;
}

Plan describe(const InterleavedEpochConfig& c, double items) {
    Plan p;
    p.k = c.k;
    p.l_or_r = c.r;
    p.block_bits = c.lane_bits;
    p.bits_per_block = c.k;
    p.segments = c.segments();
    p.bits_per_segment = c.lines * c.lane_bits;
    p.generation_or_epoch = ceil_div(std::uint64_t(items), c.r);
    p.slack_items = epoch_slack(p.generation_or_epoch, c.r, items);
    p.peak_npws = guarded_epoch_peak_npws(std::uint64_t(items), c.r);
    p.accesses_per_query = 1; // one line
    p.accesses_per_insert = 1;
    return p;
}

Plan describe(const TwoLineEpochConfig& c, double items) {
    Plan p;
    p.k = c.k();
    p.l_or_r = c.r;
    p.block_bits = 2 * TwoLineEpochConfig::kLaneBits; // a key's block: its lane in two lines
    p.bits_per_block = c.k();
    p.segments = c.segments();
    p.bits_per_segment = c.lines * TwoLineEpochConfig::kLaneBits;
    p.generation_or_epoch = ceil_div(std::uint64_t(items), c.r);
    p.slack_items = epoch_slack(p.generation_or_epoch, c.r, items);
    p.peak_npws = guarded_epoch_peak_npws(std::uint64_t(items), c.r);
    // Two lines: adjacent, so fetched together where the CPU pairs lines, but
    // counted as two until the benchmarks show them costing one.
    p.accesses_per_query = 2;
    p.accesses_per_insert = 2;
    return p;
}

Plan describe(const PocketEpochConfig& c, double items) {
    Plan p;
    p.k = 0;  // no hash functions: one 12-bit fingerprint per key
    p.l_or_r = c.r;
    p.block_bits = 512;  // a key's line
    p.segments = c.segments();  // epochs, as the entries' tags: the segments share every line
    p.bits_per_segment = (c.lines + c.spare_lines) * 512 / c.segments();
    p.generation_or_epoch = ceil_div(std::uint64_t(items), c.r);
    p.slack_items = epoch_slack(p.generation_or_epoch, c.r, items);
    p.peak_npws = guarded_epoch_peak_npws(std::uint64_t(items), c.r);
    // Its line, and for the keys its line spilled past the floor a spare line.
    p.accesses_per_query = 1.0 + c.spare_read_share();
    p.accesses_per_insert = 1.0 + c.spare_read_share();
    return p;
}

Plan describe(const InterleavedApbfConfig& c, double items) {
    Plan p;
    p.k = c.k;
    p.l_or_r = c.l;
    p.block_bits = c.lane_bits;
    p.bits_per_block = c.b;
    p.segments = c.slices();
    p.bits_per_segment = c.lines * c.lane_bits;
    p.generation_or_epoch = ceil_div(std::uint64_t(items), c.l);
    p.slack_items = generation_slack(p.generation_or_epoch, c.k, c.l, items);
    const double full = partitioned_block_bloom_fpr(double(c.k) * p.generation_or_epoch / double(c.lines),
                                                    c.lane_bits, c.b);
    p.peak_npws = apbf_peak_npws(c.k, c.l, full);
    p.accesses_per_query = 1; // one line
    p.accesses_per_insert = 1;
    return p;
}

Plan describe(const TimeLimitedConfig& c, double items) {
    Plan p;
    p.k = c.k;
    p.l_or_r = c.l;
    p.segments = c.k + c.l;
    p.bits_per_segment = c.steady_slice_words() * 64;
    p.generation_or_epoch = c.steady_generation();
    // Past the insertions per window: a time window planned without a rate
    // has items 0, and the filter's own capacity is what its generations follow.
    p.slack_items = generation_slack(p.generation_or_epoch, c.k, c.l, items > 0 ? items : double(c.capacity));
    p.peak_npws = apbf_peak_npws(c.k, c.l, 0.5);
    p.accesses_per_insert = c.k;
    return p;
}

// The baselines: one flat filter of counters (cells) probed k times.
Plan describe(const CountingConfig& c, double) {
    Plan p;
    p.k = c.k;
    p.segments = 1;
    p.bits_per_segment = c.cells * CountingConfig::kCellBits;
    p.generation_or_epoch = c.load();  // exact deletion: nothing older than the window
    p.accesses_per_insert = c.k;
    p.accesses_per_query = probes_until_zero(c.k, 1.0 - std::exp(-double(c.k) * c.load() / double(c.cells)));
    return p;
}
Plan describe(const StableConfig& c, double) {
    Plan p;
    p.k = c.k;
    p.segments = 1;
    p.bits_per_segment = c.cells * c.cell_bits;
    p.generation_or_epoch = c.load();  // no window: decay makes the memory
    p.accesses_per_insert = c.k + double(c.decrements) / 8;
    p.accesses_per_query = probes_until_zero(c.k, 1.0 - c.zero_fraction());
    return p;
}

Plan describe(const BlockTimingConfig& c, double) {
    Plan p;
    p.k = c.k;
    p.segments = 1;
    p.block_bits = c.bpt;  // bits per timer
    p.bits_per_segment = c.timers * c.bpt;
    p.generation_or_epoch = c.block;
    p.slack_items = c.block_load();  // a block's keys look live together (Sec. 3.2.2)
    p.accesses_per_insert = c.k + double(c.sweep_per_step()) / double(c.block);
    p.accesses_per_query = c.k;
    return p;
}
Plan describe(const ClockConfig& c, double) {
    Plan p;
    p.k = c.k;
    p.segments = 1;
    p.block_bits = 4;
    p.bits_per_segment = c.cells * 4;
    p.generation_or_epoch = c.tick_length();
    p.slack_items = double(c.load()) / c.divisor;  // keys live up to (1 + 1/divisor)·W
    p.accesses_per_insert = c.k + double(c.sweep_per_tick()) / double(c.tick_length());
    p.accesses_per_query = c.k;
    return p;
}

// APBF's query cost needs the access recurrences over its match
// probabilities (§5.4): computed lazily, only for the cheapest candidates.
std::function<double()> lazy_query_accesses(const ApbfConfig& c) {
    return [c] {
        const auto m = apbf_matches(c);
        return std::max(apbf_accesses_window(c.k, c.l, m), apbf_accesses_false(c.k, c.l, m));
    };
}
// The time-limited filter at its design point: APBF's fills (slices half
// full as they leave the active k).
std::function<double()> lazy_query_accesses(const TimeLimitedConfig& c) {
    return [c] {
        std::vector<double> m(c.k + c.l);
        for (unsigned i = 0; i < c.k + c.l; ++i) m[i] = i < c.k ? 1.0 - std::exp2(-(i + 1.0) / c.k) : 0.5;
        return std::max(apbf_accesses_window(c.k, c.l, m), apbf_accesses_false(c.k, c.l, m));
    };
}
template <class C>
std::function<double()> lazy_query_accesses(const C&) { return nullptr; }

// What the structures' sizing hooks are asked (registry/structure.hpp).
SizingRequest sizing_of(const PlanRequest& req) {
    SizingRequest sizing;
    sizing.window = req.window;
    sizing.fpr = req.fpr;
    sizing.capacity = req.capacity;
    sizing.block_bits = req.block_bits.value_or(512);
    sizing.memory_bytes = req.memory_bytes;
    return sizing;
}

// One configuration of structure S with every figure but the lazy one.
template <class C>
Candidate figures(Structure s, const C& c, double items) {
    Candidate cand{describe(c, items), lazy_query_accesses(c)};
    Plan& p = cand.plan;
    p.structure = s;
    p.config = FilterConfig{s, c};
    p.expected_fpr = c.model_fpr();
    p.bits_per_item = c.bits_per_item();
    p.total_bytes = p.config.bytes_needed();
    return cand;
}

template <Structure S>
void add_candidates(const PlanRequest& req, std::vector<Candidate>& out) {
    const SizingRequest sizing = sizing_of(req);
    const double items = double(sizing.items());
    StructureTraits<S>::plan(sizing, [&](const typename StructureTraits<S>::Config& c) {
        out.push_back(figures(S, c, items));
    });
}

std::optional<PlanError> validate(const PlanRequest& req) {
    auto invalid = [](std::string m) { return PlanError{PlanErrc::invalid_request, std::move(m)}; };
    if (req.window.span == 0) return invalid(req.window.is_time() ? "ttl must be positive" : "window must be at least 1");
    if (!req.window.is_time() && req.window.span > kMaxWindow) return invalid("window must be at most 2^48");
    if (req.structure && !(info(*req.structure).windows & (req.window.is_time() ? kTimeWindows : kCountWindows)))
        return invalid(std::string(name(*req.structure)) + " keeps " +
                       (req.window.is_time() ? "count windows only (--window)" : "time windows only (--ttl)"));
    if (req.window.is_time() && req.capacity == 0 && req.structure && !info(*req.structure).rate_adaptive)
        return invalid(std::string("a time window needs the expected insertions per window (capacity) for ") +
                       name(*req.structure) + "; --filter tlbf adapts to an unknown rate");
    if (req.capacity > kMaxWindow) return invalid("capacity must be at most 2^48");
    if (!(req.fpr > 0.0 && req.fpr < 1.0)) return invalid("fpr must lie strictly between 0 and 1");
    if (req.max_npws && !(*req.max_npws > 0.0)) return invalid("max-npws must be > 0");
    if (req.max_bits_per_item && !(*req.max_bits_per_item > 0.0)) return invalid("max-bits-per-item must be > 0");
    if (req.max_accesses_per_query && !(*req.max_accesses_per_query > 0.0))
        return invalid("max-accesses must be > 0");
    if (req.max_total_bytes && *req.max_total_bytes == 0) return invalid("mem must be > 0");
    // A rate-adaptive structure spends its budget (tlbf's slices fill it): one
    // past the 2^50 bits any structure may take cannot be spent, and was said
    // as an FPR out of reach or a window too short for its segments.
    if (spends_budget(req) && req.memory_bytes > (std::uint64_t{1} << 47))
        return invalid("a budget of " + std::to_string(req.memory_bytes) + " bytes (--mem) is past 2^50 bits (2^47 "
                       "bytes), the most a filter may take: give a smaller --mem");
    if (req.block_bits) {
        const unsigned b = *req.block_bits;
        if (b < 64 || b > 512 || (b & (b - 1)) != 0)
            return invalid("block-bits must be 64, 128, 256 or 512");
    }
    return std::nullopt;
}

bool within_cheap_limits(const PlanRequest& req, const Plan& p) {
    if (req.max_npws && p.peak_npws > *req.max_npws) return false;
    if (req.max_bits_per_item && p.bits_per_item > *req.max_bits_per_item) return false;
    if (req.max_total_bytes && p.total_bytes > *req.max_total_bytes) return false;
    // An APBF window query costs at least k probes: no need to compute more.
    if (req.max_accesses_per_query && p.config.info().one_line == false &&
        std::holds_alternative<ApbfConfig>(p.config.config) && p.accesses_per_insert > *req.max_accesses_per_query)
        return false;
    return true;
}

// The candidates of the requested structure(s) meeting the target, cheapest
// first; `emitted` counts those found before the limits were applied.
std::vector<Candidate> ranked(const PlanRequest& req, size_t& emitted) {
    std::vector<Candidate> cands;
    for_each_structure([&]<Structure S>() {
        // A time window without a capacity: the rate is unknown, so only the
        // structures that adapt to it.
        const bool rate_unknown = req.window.is_time() && req.capacity == 0;
        if (rate_unknown ? !info(S).rate_adaptive
                         : (req.structure && *req.structure != S) || (req.auto_candidates && !info(S).auto_candidate) ||
                               (req.auto_fallback && !info(S).auto_fallback))
            return;
        if (req.structure && *req.structure != S) return;
        if (!(info(S).windows & (req.window.is_time() ? kTimeWindows : kCountWindows))) return;
        add_candidates<S>(req, cands);
    });
    emitted = cands.size();
    std::erase_if(cands, [&](const Candidate& c) { return !within_cheap_limits(req, c.plan); });
    std::stable_sort(cands.begin(), cands.end(), [](const Candidate& a, const Candidate& b) {
        return a.plan.bits_per_item < b.plan.bits_per_item;
    });
    return cands;
}

bool fits_accesses(const PlanRequest& req, Candidate& c) {
    if (c.query_accesses) {
        c.plan.accesses_per_query = c.query_accesses();
        c.query_accesses = nullptr;
    }
    return !req.max_accesses_per_query || c.plan.accesses_per_query <= *req.max_accesses_per_query;
}

std::string what(const PlanRequest& req) {
    if (req.structure) return name(*req.structure);
    if (!req.auto_candidates) return "any structure";
    std::string names;
    for (const StructureInfo& s : kStructures)
        if (s.auto_candidate) names += std::string(names.empty() ? "" : ", ") + s.name;
    return "--filter auto's layouts (" + names + ")";
}

} // namespace

bool spends_budget(const PlanRequest& req) noexcept {
    return req.structure ? info(*req.structure).rate_adaptive : req.window.is_time() && req.capacity == 0;
}

PlanResult plan(const PlanRequest& req) {
    if (auto err = validate(req)) return *err;
    size_t emitted = 0;
    auto cands = ranked(req, emitted);
    for (auto& c : cands)
        if (fits_accesses(req, c)) return c.plan;
    char fpr[32];
    std::snprintf(fpr, sizeof fpr, "%g", req.fpr);
    // The one structure asked for: named, or, for a time window of unknown
    // rate, the rate-adaptive one (the only candidate then).
    std::optional<Structure> only = req.structure;
    if (!only && req.window.is_time() && req.capacity == 0) {
        size_t adaptive = 0;
        for (const StructureInfo& s : kStructures)
            if (s.rate_adaptive) ++adaptive, only = s.id;
        if (adaptive != 1) only.reset();
    }
    if (emitted == 0 && only) {
        // A structure that can say why (a hook of its traits) says it.
        Errc why = Errc::ok;
        for_each_structure([&]<Structure S>() {
            if constexpr (requires(SizingRequest r) { StructureTraits<S>::why(r); })
                if (S == *only) why = StructureTraits<S>::why(sizing_of(req));
        });
        // An FPR too small shows as k, l or the size out of range: that is
        // said below, as for every structure.
        const bool fpr_driven = why == Errc::k_out_of_range || why == Errc::l_out_of_range || why == Errc::too_large ||
                                why == Errc::fpr_out_of_range;
        // A memory budget too small is a limit no plan meets (as --mem is
        // for every other structure), not a malformed request.
        if (why == Errc::slice_budget_too_small)
            return PlanError{PlanErrc::over_limits,
                             std::string(name(*only)) + ": " + message(why) + " (--mem " +
                                 std::to_string(req.memory_bytes ? req.memory_bytes : req.max_total_bytes.value_or(0)) +
                                 " bytes): raise --mem"};
        // The capacity asked for is named with its option (a C caller reads
        // it as spec.capacity): "initial capacity" alone did not say whose.
        if (why == Errc::capacity_too_small)
            return PlanError{PlanErrc::invalid_request, std::string(name(*only)) + ": " + message(why) +
                                                            ": --capacity " + std::to_string(req.capacity) +
                                                            " is too few; give a larger --capacity"};
        if (why != Errc::ok && !fpr_driven)
            return PlanError{PlanErrc::invalid_request, std::string(name(*only)) + ": " + message(why)};
    }
    if (emitted == 0) {
        // Nothing at all: the window too short for the segments, too many
        // insertions per window for the size limit, or the FPR out of reach.
        // An easy FPR over the same window tells the FPR apart; over 1024
        // times fewer insertions, the rest (segments need tens of insertions,
        // the limit trillions).
        PlanRequest easy = req;
        easy.fpr = 0.5;
        size_t easy_emitted = 0;
        (void)ranked(easy, easy_emitted);
        const bool timed = req.window.is_time();
        if (easy_emitted == 0) {
            PlanRequest fewer = easy;
            uint64_t& items = timed ? fewer.capacity : fewer.window.span;
            items /= 1024;
            size_t fewer_emitted = 0;
            if (items > 0) (void)ranked(fewer, fewer_emitted);
            if (fewer_emitted > 0)  // the size limit, as for an FPR out of reach
                return PlanError{PlanErrc::fpr_unreachable,
                                 (timed ? "capacity " + std::to_string(req.capacity) + " per --ttl is too many"
                                        : "window " + std::to_string(req.window.span) + " is too long") +
                                     " for " + what(req) + " within 2^50 bits, even at fpr 0.5: use a " +
                                     (timed ? "smaller --capacity (a shorter --ttl)" : "shorter --window") +
                                     (req.structure ? " or another --filter" : "")};
            if (!timed)
                return PlanError{PlanErrc::window_too_short,
                                 "window " + std::to_string(req.window.span) + " is shorter than the segments of " +
                                     what(req) + " (each needs at least one insertion per segment): use a longer "
                                     "--window or another --filter"};
        }
        // Under 64 bits per item in 2^50 bits, the window is as much the
        // cause as the FPR: both are named (a window of 10^14 insertions
        // was told to raise --fpr alone).
        const uint64_t items = timed ? req.capacity : req.window.span;
        const uint64_t room = items ? (uint64_t{1} << 50) / items : 0;
        const bool big = items > 0 && room < 64;
        return PlanError{PlanErrc::fpr_unreachable,
                         "fpr " + std::string(fpr) + " is out of reach of " + what(req) +
                             " (no shape within its limits and 2^50 bits" +
                             (big ? ", " + std::to_string(room) + " bits per item over " + std::to_string(items) +
                                        (timed ? " insertions per --ttl" : " insertions")
                                  : std::string()) +
                             "): raise --fpr" +
                             (big ? (timed ? " or lower --capacity" : " or shorten --window") : "")};
    }
    return PlanError{PlanErrc::over_limits,
                     "no configuration of " + what(req) + " meets fpr " + fpr + " within the given limits"};
}

PlanResult plan_lowest_fpr(const PlanRequest& req) {
    PlanRequest at = req;
    at.fpr = 0.5;
    if (auto err = validate(at)) return *err;
    // The rate-adaptive filter first: its --mem is a budget, never the limit
    // asked for below, and that is what its caller needs to hear.
    const bool rate_unknown = req.window.is_time() && req.capacity == 0;
    if (rate_unknown || (req.structure && info(*req.structure).rate_adaptive))
        return PlanError{PlanErrc::invalid_request,
                         std::string(req.structure ? name(*req.structure) : "auto (tlbf: the rate is unknown)") +
                             " keeps a target FPR within its memory budget whatever the rate: give --fpr with --mem"};
    if (!req.max_total_bytes)
        return PlanError{PlanErrc::invalid_request, "sizing by memory needs a memory limit (mem)"};
    auto best = plan(at);
    if (std::holds_alternative<PlanError>(best)) {
        // Nothing fits even at FPR 1/2: say how much the smallest filter needs.
        PlanRequest free = at;
        free.max_total_bytes.reset();
        const auto any = plan(free);
        if (const auto* p = std::get_if<Plan>(&any))
            return PlanError{PlanErrc::over_limits,
                             "no filter of " + what(req) + " for this window fits in " +
                                 std::to_string(*req.max_total_bytes) + " bytes, even at fpr 0.5: the smallest needs " +
                                 std::to_string(p->total_bytes) + " bytes"};
        return best;
    }
    // Memory falls as the target rises: bisect log(fpr) between a target
    // that fits (hi) and one that does not (lo), to a ratio of 1.01.
    double hi = std::log(0.5), lo = std::log(kLowestFpr);
    at.fpr = kLowestFpr;
    if (auto floor = plan(at); std::holds_alternative<Plan>(floor)) return floor;
    while (hi - lo > std::log(1.01)) {
        const double mid = 0.5 * (hi + lo);
        at.fpr = std::exp(mid);
        auto r = plan(at);
        if (std::holds_alternative<Plan>(r)) {
            hi = mid;
            best = std::move(r);
        } else {
            lo = mid;
        }
    }
    return best;
}

Plan describe(const FilterConfig& config) {
    return config.visit([&](const auto& c) {
        const double items = double(c.capacity ? c.capacity : (c.window.is_time() ? 0 : c.window.span));
        Candidate cand = figures(config.structure, c, items);
        if (cand.query_accesses) cand.plan.accesses_per_query = cand.query_accesses();
        return cand.plan;
    });
}

std::vector<Plan> candidates(const PlanRequest& req, Structure s) {
    std::vector<Plan> out;
    if (validate(req)) return out;
    PlanRequest one = req;
    one.structure = s;
    size_t emitted = 0;
    for (auto& c : ranked(one, emitted))
        if (fits_accesses(one, c)) out.push_back(c.plan);
    return out;
}

} // namespace agebloom::model
