// Planner: targets met, limits respected, errors reported, and the chosen
// plan's numbers agree with the models they claim to come from.
#include "agebloom/model/models.hpp"
#include "agebloom/model/planner.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace m = agebloom::model;
namespace ab = agebloom;
using ab::Structure;

namespace {

m::PlanRequest request(std::uint64_t window, double fpr) {
    m::PlanRequest r;
    r.window = ab::Window::count(window);
    r.fpr = fpr;
    return r;
}

m::Plan must_plan(const m::PlanRequest& r) {
    auto result = m::plan(r);
    if (auto* err = std::get_if<m::PlanError>(&result)) {
        ADD_FAILURE() << "unexpected error: " << err->message;
        return {};
    }
    return std::get<m::Plan>(result);
}

bool is_error(const m::PlanRequest& r) {
    return std::holds_alternative<m::PlanError>(m::plan(r));
}

bool aged(const m::Plan& p) {
    return std::holds_alternative<ab::ApbfConfig>(p.config.config) ||
           std::holds_alternative<ab::InterleavedApbfConfig>(p.config.config) ||
           std::holds_alternative<ab::TimeLimitedConfig>(p.config.config);
}

// The plan's figures are its config's: one model per structure.
void check_consistent(const m::Plan& p, std::uint64_t window, double fpr) {
    SCOPED_TRACE(ab::name(p.structure));
    EXPECT_EQ(p.config.structure, p.structure);
    EXPECT_LE(p.expected_fpr, fpr);
    EXPECT_EQ(p.expected_fpr, p.config.model_fpr());
    EXPECT_EQ(p.bits_per_item, p.config.bits_per_item());
    // At least its segments (a structure may need more: the counting filter's ring).
    EXPECT_GE(p.bits_per_item * (1 + 1e-9), double(p.bits_per_segment) * p.segments / window);
    EXPECT_EQ(p.total_bytes, p.config.bytes_needed());
    EXPECT_GE(p.total_bytes * 8, p.bits_per_segment * p.segments);
    // Information-theoretic floor for a static filter: log2(1/fpr) bits.
    EXPECT_GT(p.bits_per_item, std::log2(1 / fpr));
    EXPECT_GT(p.accesses_per_query, 0.0);
    EXPECT_GT(p.accesses_per_insert, 0.0);
    if (aged(p)) {
        EXPECT_EQ(p.segments, p.k + p.l_or_r);
        EXPECT_GE(p.l_or_r * p.generation_or_epoch, window); // no false negatives in W
        // k·g past l·g (Sec. 5.2), and l·g past W by rounding.
        EXPECT_DOUBLE_EQ(p.slack_items, double(p.k + p.l_or_r) * p.generation_or_epoch - double(window));
    } else if (std::holds_alternative<ab::GuardedEpochConfig>(p.config.config) ||
               std::holds_alternative<ab::InterleavedEpochConfig>(p.config.config) ||
               std::holds_alternative<ab::Interleaved128Config>(p.config.config) ||
               std::holds_alternative<ab::TwoLineEpochConfig>(p.config.config)) {
        EXPECT_EQ(p.segments, p.l_or_r + 1);
        EXPECT_GE(p.l_or_r * p.generation_or_epoch, window); // r·ℓ >= W (Lemma 1)
        // One epoch past r·ℓ, and r·ℓ past W by rounding.
        EXPECT_DOUBLE_EQ(p.slack_items, double(p.l_or_r + 1) * p.generation_or_epoch - double(window));
    }
}

} // namespace

// What the planner plans is what gets built, bit for bit: the filter created
// from the plan's config carries that config, needs the bytes the plan
// reports, and its model is the plan's.
TEST(Planner, PlanIsWhatIsBuilt) {
    for (const ab::StructureInfo& s : ab::kStructures) {
        SCOPED_TRACE(s.name);
        for (ab::Window w : {ab::Window::count(100'000), ab::Window::time(1'000'000'000)}) {
            if (!(s.windows & (w.is_time() ? ab::kTimeWindows : ab::kCountWindows))) continue;
            auto r = request(0, 0.01);
            r.window = w;
            r.capacity = w.is_time() ? 100'000 : 0;
            r.structure = s.id;
            const m::Plan p = must_plan(r);
            std::vector<unsigned char> mem(p.total_bytes + 64);
            p.config.visit([&](const auto& c) {
                ab::Arena arena(mem.data(), mem.size());
                auto f = ab::FilterFor<std::decay_t<decltype(c)>>::create(c, arena);
                ASSERT_TRUE(f) << f.what();
                EXPECT_TRUE(f->config() == c);
                EXPECT_EQ(*ab::FilterFor<std::decay_t<decltype(c)>>::bytes_needed(f->config()), p.total_bytes);
                EXPECT_EQ(f->config().model_fpr(), p.expected_fpr);
            });
        }
    }
}

// The ring differs from the guarded epoch filter exactly by the Continuous Bloom Filter post's (Surprenant)
// capacity trigger: over a time window its epochs also end after
// capacity/N insertions; over a count window the two are the same plan.
TEST(Planner, RingCarriesItsCapacityTrigger) {
    auto r = request(0, 0.01);
    r.window = ab::Window::time(60'000'000'000);
    r.capacity = 1'000'000;
    r.structure = Structure::ring;
    const auto ring = std::get<ab::GuardedEpochConfig>(must_plan(r).config.config);
    EXPECT_EQ(ring.epoch_capacity, (1'000'000 + ring.r - 1) / ring.r);
    r.structure = Structure::guarded_epoch;
    EXPECT_EQ(std::get<ab::GuardedEpochConfig>(must_plan(r).config.config).epoch_capacity, 0u);
    auto c = request(100'000, 0.01);
    c.structure = Structure::ring;
    const auto count_ring = must_plan(c);
    c.structure = Structure::guarded_epoch;
    EXPECT_TRUE(count_ring.config.config == must_plan(c).config.config);
}

TEST(Planner, MillionWindowOnePercent) {
    const auto p = must_plan(request(1000000, 0.01));
    check_consistent(p, 1000000, 0.01);
    EXPECT_LT(p.bits_per_item, 20.0);
    // The winner is no worse than the best plan of every single structure.
    for (const ab::StructureInfo& s : ab::kStructures) {
        auto r = request(1000000, 0.01);
        r.structure = s.id;
        const auto q = must_plan(r);
        check_consistent(q, 1000000, 0.01);
        EXPECT_EQ(q.structure, s.id);
        EXPECT_LE(p.bits_per_item, q.bits_per_item) << s.name;
    }
}

// The APBF plan searches k around the published ⌈log2 1/fpr⌉ and every l,
// each shape sized by the filter's own model: it is never worse than the
// published parameterisation sized the same way.
TEST(Planner, ApbfNoWorseThanPublished) {
    auto r = request(1000000, 0.01);
    r.structure = Structure::apbf;
    const auto p = must_plan(r);
    check_consistent(p, 1000000, 0.01);
    const auto published = ab::ApbfConfig::for_fpr(ab::Window::count(1000000), 0.01);
    ASSERT_TRUE(published);
    const auto sized = ab::ApbfConfig::sized(ab::Window::count(1000000), 0.01, published->k, published->l);
    ASSERT_TRUE(sized);
    EXPECT_LE(p.bits_per_item, sized->bits_per_item() + 1e-9);
    EXPECT_GE(p.k, 5u);
    EXPECT_LE(p.k, 13u);
}

TEST(Planner, MaxNpwsRespected) {
    for (double limit : {0.5, 0.25, 0.1, 0.05, 0.03}) {
        auto r = request(1000000, 0.01);
        r.max_npws = limit;
        const auto p = must_plan(r);
        check_consistent(p, 1000000, 0.01);
        EXPECT_LE(p.peak_npws, limit) << ab::name(p.structure);
    }
    auto r = request(1000000, 0.001);
    r.max_npws = 0.05;
    r.structure = Structure::apbf;
    const auto p = must_plan(r);
    EXPECT_LE(p.peak_npws, 0.05);
}

TEST(Planner, MaxAccessesRespected) {
    auto r = request(1000000, 0.01);
    r.max_accesses_per_query = 12;
    r.structure = Structure::apbf;
    const auto p = must_plan(r);
    EXPECT_LE(p.accesses_per_query, 12.0);
    // The unconstrained APBF plan needs more accesses than that.
    r.max_accesses_per_query.reset();
    EXPECT_GT(must_plan(r).accesses_per_query, 12.0);
}

TEST(Planner, MaxBitsRespectedAndBlockedSizes) {
    auto r = request(100000, 0.001);
    r.max_bits_per_item = 30;
    const auto p = must_plan(r);
    EXPECT_LE(p.bits_per_item, 30.0);
    r.structure = Structure::apbbf;
    r.block_bits = 64;
    const auto q = must_plan(r);
    EXPECT_EQ(q.block_bits, 64u);
    EXPECT_EQ(q.bits_per_segment % 64, 0u);
    check_consistent(q, 100000, 0.001);
    // 64-bit blocks cost the guarded epoch filter ~45 bits/item at 1e-3
    // (the block load varies too much): infeasible under 30, fine without.
    r.structure = Structure::guarded_epoch_blocked;
    EXPECT_TRUE(is_error(r));
    r.max_bits_per_item.reset();
    const auto g = must_plan(r);
    EXPECT_EQ(g.block_bits, 64u);
    EXPECT_EQ(g.bits_per_segment % 64, 0u);
    EXPECT_GT(g.bits_per_item, 30.0);
    check_consistent(g, 100000, 0.001);
}

TEST(Planner, Errors) {
    EXPECT_TRUE(is_error(request(0, 0.01)));
    EXPECT_TRUE(is_error(request(1000, 0.0)));
    EXPECT_TRUE(is_error(request(1000, 1.0)));
    EXPECT_TRUE(is_error(request(1000, -0.5)));
    EXPECT_TRUE(is_error(request(1000, std::nan(""))));
    EXPECT_TRUE(is_error(request((std::uint64_t(1) << 48) + 1, 0.01)));
    // A time window without its capacity: the rate is unknown, so only a
    // rate-adaptive structure plans (the time-limited filter); a structure
    // that needs the rate is an error naming the capacity.
    auto t = request(0, 0.01);
    t.window = ab::Window::time(1000);
    const m::Plan no_rate = must_plan(t);
    EXPECT_EQ(no_rate.structure, Structure::tlbf);
    // Its slack is past the insertions its generations follow (the filter's
    // own capacity), k + l generations less that capacity: not past 0.
    const auto& tc = std::get<ab::TimeLimitedConfig>(no_rate.config.config);
    ASSERT_GT(tc.capacity, 0u);
    EXPECT_EQ(no_rate.slack_items, double(tc.steady_generation()) * (tc.k + tc.l) - double(tc.capacity));
    EXPECT_LT(no_rate.slack_items, double(tc.capacity));
    t.structure = Structure::guarded_epoch;
    const auto needs = m::plan(t);
    ASSERT_TRUE(std::holds_alternative<m::PlanError>(needs));
    EXPECT_NE(std::get<m::PlanError>(needs).message.find("capacity"), std::string::npos);
    // An FPR out of reach (answered fpr_unreachable, not a hang or an overflow).
    for (double tiny : {1e-200, 1e-300}) {
        const auto res = m::plan(request(1000000, tiny));
        ASSERT_TRUE(std::holds_alternative<m::PlanError>(res)) << tiny;
        EXPECT_EQ(std::get<m::PlanError>(res).code, m::PlanErrc::fpr_unreachable);
        EXPECT_NE(std::get<m::PlanError>(res).message.find("fpr"), std::string::npos);
    }
    // Too many insertions for the size limit even at FPR 1/2: said as that
    // (it used to read "window shorter than the segments"), for a count
    // window and for a time window's capacity; a short window still says short.
    auto message_of = [](const m::PlanRequest& q) {
        const auto res = m::plan(q);
        return std::holds_alternative<m::PlanError>(res) ? std::get<m::PlanError>(res).message : std::string("planned");
    };
    auto huge = request(std::uint64_t(1) << 48, 0.01);
    EXPECT_NE(message_of(huge).find("window 281474976710656 is too long"), std::string::npos) << message_of(huge);
    huge.structure = Structure::counting;  // 143 bits per item at 1/2: too long already at 2^43
    huge.window = ab::Window::count(std::uint64_t(1) << 44);
    EXPECT_NE(message_of(huge).find("too long for counting"), std::string::npos) << message_of(huge);
    huge.structure.reset();
    huge.window = ab::Window::time(1000);
    huge.capacity = std::uint64_t(1) << 48;
    EXPECT_NE(message_of(huge).find("capacity 281474976710656 per --ttl is too many"), std::string::npos)
        << message_of(huge);
    auto short_window = request(5, 0.01);
    short_window.structure = Structure::interleaved;
    EXPECT_NE(message_of(short_window).find("shorter than the segments"), std::string::npos)
        << message_of(short_window);
    EXPECT_EQ(std::get<m::PlanError>(m::plan(short_window)).code, m::PlanErrc::window_too_short);
    auto r = request(1000, 0.01);
    r.block_bits = 100;
    EXPECT_TRUE(is_error(r));
    r = request(1000, 0.01);
    r.max_npws = 0;
    EXPECT_TRUE(is_error(r));
    // Unsatisfiable limits: fewer bits than a static filter could use.
    r = request(1000000, 0.01);
    r.max_bits_per_item = 5;
    const auto res = m::plan(r);
    ASSERT_TRUE(std::holds_alternative<m::PlanError>(res));
    EXPECT_NE(std::get<m::PlanError>(res).message.find("no configuration"), std::string::npos);
    r = request(1000000, 0.01);
    r.structure = Structure::apbf;
    r.max_accesses_per_query = 2; // a window query costs at least k >= 5
    EXPECT_TRUE(is_error(r));
}

TEST(Planner, SmallAndTinyTargets) {
    check_consistent(must_plan(request(1, 0.5)), 1, 0.5);
    check_consistent(must_plan(request(10, 0.1)), 10, 0.1);
    check_consistent(must_plan(request(1000000, 1e-6)), 1000000, 1e-6);
    // Extreme but valid: the searches must stay finite and in range.
    check_consistent(must_plan(request(1000000000000ull, 1e-12)), 1000000000000ull, 1e-12);
}

// The one-line layout is a planner candidate: one access per query and per
// insert, its FP from its own model, and the only plan under a one-access limit.
TEST(Planner, InterleavedOneLineLayout) {
    auto r = request(1'000'000, 0.01);
    r.structure = Structure::interleaved;
    const m::Plan p = must_plan(r);
    check_consistent(p, 1'000'000, 0.01);
    EXPECT_EQ(p.accesses_per_query, 1.0);
    EXPECT_EQ(p.accesses_per_insert, 1.0);
    EXPECT_EQ(p.segments * p.block_bits, 512u);  // every lane of the line is a segment
    auto one = request(1'000'000, 0.01);
    one.max_accesses_per_query = 1;
    EXPECT_EQ(ab::info(must_plan(one).structure).one_line, true);
    // Unconstrained, it costs more bits than the paper layouts and is not chosen.
    EXPECT_NE(must_plan(request(1'000'000, 0.01)).structure, Structure::interleaved);
}

// Every plan the planner returns is buildable: over a grid of windows, FPRs,
// NPWS limits, block sizes and structures (each, and all), the plan's config
// passes the core's own validation, needs the bytes the plan reports, and
// (up to 4 MiB) is created and carries that config. The limits asked for
// are respected by what is returned.
TEST(Planner, EveryPlanIsBuildable) {
    struct Win {
        ab::Window w;
        std::uint64_t capacity;
    };
    const Win windows[] = {{ab::Window::count(100), 0},
                           {ab::Window::count(100'000), 0},
                           {ab::Window::count(10'000'000), 0},
                           {ab::Window::time(50'000'000), 100'000}};
    const double fprs[] = {0.3, 1e-5};
    const std::optional<double> npws[] = {std::nullopt, 0.1, 0.01};
    const std::optional<unsigned> blocks[] = {std::nullopt, 64u, 128u, 256u, 512u};
    std::vector<std::optional<Structure>> structures = {std::nullopt};
    for (const ab::StructureInfo& s : ab::kStructures) structures.push_back(s.id);
    std::vector<unsigned char> mem;
    size_t plans = 0, built = 0;
    for (const Win& win : windows)
        for (double fpr : fprs)
            for (const auto& n : npws)
                for (const auto& b : blocks)
                    for (const auto& s : structures) {
                        // The block size only shapes the blocked structures: one pass each otherwise.
                        const bool blocked = s && (*s == Structure::guarded_epoch_blocked || *s == Structure::apbbf);
                        if (b && !blocked) continue;
                        m::PlanRequest r;
                        r.window = win.w;
                        r.capacity = win.capacity;
                        r.fpr = fpr;
                        r.max_npws = n;
                        r.block_bits = b;
                        r.structure = s;
                        const auto result = m::plan(r);
                        const auto* p = std::get_if<m::Plan>(&result);
                        if (p == nullptr) continue;
                        ++plans;
                        SCOPED_TRACE(std::string(ab::name(p->structure)) + " window " + std::to_string(win.w.span) +
                                     " fpr " + std::to_string(fpr) + " npws " + (n ? std::to_string(*n) : "-") +
                                     " B " + (b ? std::to_string(*b) : "-"));
                        EXPECT_LE(p->expected_fpr, fpr);
                        if (n) {
                            EXPECT_LE(p->peak_npws, *n);
                        }
                        if (b && (p->structure == Structure::guarded_epoch_blocked || p->structure == Structure::apbbf)) {
                            EXPECT_EQ(p->block_bits, *b);
                        }
                        p->config.visit([&](const auto& c) {
                            using F = ab::FilterFor<std::decay_t<decltype(c)>>;
                            const auto need = F::bytes_needed(c);
                            ASSERT_TRUE(need) << need.what();
                            EXPECT_EQ(*need, p->total_bytes);
                            if (*need > (4u << 20)) return;
                            mem.resize(*need + 64);
                            auto* base = reinterpret_cast<unsigned char*>(
                                (reinterpret_cast<std::uintptr_t>(mem.data()) + 63) / 64 * 64);
                            ab::Arena arena(base, *need);
                            auto f = F::create(c, arena);
                            ASSERT_TRUE(f) << f.what();
                            EXPECT_TRUE(f->config() == c);
                            ++built;
                        });
                    }
    // The grid is not vacuous: most requests plan, and many are built.
    EXPECT_GT(plans, 200u);
    EXPECT_GT(built, 100u);
}

// Sizing by memory: the lowest FPR that fits. The plan fits, and no plan for
// a clearly lower target (0.9 of what was returned) fits the same memory.
TEST(Planner, LowestFprThatFitsTheMemory) {
    for (std::uint64_t window : {10'000ull, 1'000'000ull})
        for (std::uint64_t bytes : {64ull << 10, 4ull << 20}) {
            SCOPED_TRACE("window " + std::to_string(window) + " bytes " + std::to_string(bytes));
            auto r = request(window, 0);
            r.max_total_bytes = bytes;
            const auto result = m::plan_lowest_fpr(r);
            const auto* p = std::get_if<m::Plan>(&result);
            if (p == nullptr) {
                // Only a memory below every structure's smallest filter may refuse.
                const auto& err = std::get<m::PlanError>(result);
                EXPECT_EQ(err.code, m::PlanErrc::over_limits) << err.message;
                EXPECT_NE(err.message.find("the smallest needs"), std::string::npos) << err.message;
                EXPECT_LT(bytes, 1u << 20);
                continue;
            }
            EXPECT_LE(p->total_bytes, bytes);
            EXPECT_LT(p->expected_fpr, 0.5);
            if (p->expected_fpr > ab::model::kLowestFpr) {
                auto lower = r;
                lower.fpr = 0.9 * p->expected_fpr;
                EXPECT_TRUE(is_error(lower)) << "a lower FPR fits: " << p->expected_fpr;
            }
            // More memory never buys a worse FPR.
            auto more = r;
            more.max_total_bytes = 4 * bytes;
            const auto bigger = m::plan_lowest_fpr(more);
            ASSERT_TRUE(std::holds_alternative<m::Plan>(bigger));
            EXPECT_LE(std::get<m::Plan>(bigger).expected_fpr, p->expected_fpr);
        }
    // Nothing fits: the smallest filter's size in the message.
    auto tiny = request(1'000'000, 0);
    tiny.max_total_bytes = 1024;
    const auto none = m::plan_lowest_fpr(tiny);
    ASSERT_TRUE(std::holds_alternative<m::PlanError>(none));
    EXPECT_NE(std::get<m::PlanError>(none).message.find("the smallest needs"), std::string::npos);
    // The rate-adaptive filter keeps a target within its budget: refused here.
    auto tl = tiny;
    tl.max_total_bytes = 1 << 20;
    tl.structure = Structure::tlbf;
    tl.window = ab::Window::time(1'000'000'000);
    tl.capacity = 1000;
    const auto refused = m::plan_lowest_fpr(tl);
    ASSERT_TRUE(std::holds_alternative<m::PlanError>(refused));
    EXPECT_EQ(std::get<m::PlanError>(refused).code, m::PlanErrc::invalid_request);
}

// describe(config) gives the figures the plan of that config reported.
TEST(Planner, DescribeAReadyConfig) {
    for (const ab::StructureInfo& s : ab::kStructures) {
        SCOPED_TRACE(s.name);
        auto r = request(100'000, 0.01);
        if (!(s.windows & ab::kCountWindows)) {
            r.window = ab::Window::time(1'000'000'000);
            r.capacity = 100'000;
        }
        r.structure = s.id;
        const m::Plan p = must_plan(r);
        const m::Plan d = m::describe(p.config);
        EXPECT_EQ(d.structure, p.structure);
        EXPECT_EQ(d.total_bytes, p.total_bytes);
        EXPECT_EQ(d.expected_fpr, p.expected_fpr);
        EXPECT_EQ(d.slack_items, p.slack_items);
        EXPECT_EQ(d.peak_npws, p.peak_npws);
        EXPECT_NEAR(d.accesses_per_query, p.accesses_per_query, 1e-9);
    }
}
