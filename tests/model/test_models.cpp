// Checks the analytical models against the papers' printed tables and the
// shared vectors of ALGORITHMS.md. The expected numbers below are typed from
// the papers (reference data); every value compared is computed by the model.
#include "agebloom/model/models.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <tuple>

namespace m = agebloom::model;

namespace {

// True when `value` prints as `printed` with `decimals` digits after the
// point (half an ulp of the printed precision, plus float noise).
::testing::AssertionResult RoundsTo(double value, double printed, int decimals) {
    const double half_ulp = 0.5 * std::pow(10.0, -decimals);
    if (std::abs(value - printed) <= half_ulp * (1 + 1e-9)) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << value << " does not round to " << printed << " at "
                                         << decimals << " decimals";
}

// [APBF] Table 2 as printed: k, l, actual fp, eff, accesses (window, fp,
// false), NPWS.
struct PrintedRow {
    unsigned k, l;
    double fp, eff, window, fp_acc, false_acc, npws;
};
constexpr PrintedRow kTable2[25] = {
    {4, 3, 0.100586, 0.36, 4.71, 4.38, 2.16, 0.58},
    {5, 7, 0.101603, 0.38, 6.17, 5.76, 3.42, 0.28},
    {6, 14, 0.098623, 0.39, 8.04, 7.58, 5.42, 0.14},
    {7, 28, 0.099033, 0.38, 10.73, 10.25, 9.10, 0.07},
    {8, 56, 0.100234, 0.36, 14.87, 14.39, 15.60, 0.04},
    {7, 5, 0.011232, 0.39, 7.81, 7.40, 2.02, 0.40},
    {8, 8, 0.010244, 0.41, 8.88, 8.62, 3.09, 0.25},
    {9, 14, 0.010212, 0.45, 10.50, 9.89, 3.79, 0.14},
    {10, 25, 0.010076, 0.47, 12.46, 11.80, 5.85, 0.08},
    {11, 46, 0.009948, 0.49, 15.24, 14.56, 9.55, 0.04},
    {10, 7, 0.001211, 0.40, 10.86, 10.42, 1.85, 0.28},
    {11, 9, 0.000918, 0.41, 11.89, 11.52, 2.15, 0.22},
    {12, 14, 0.000981, 0.45, 13.11, 12.75, 3.21, 0.14},
    {13, 23, 0.000928, 0.50, 14.74, 14.06, 4.20, 0.09},
    {14, 40, 0.000988, 0.53, 16.85, 16.16, 6.75, 0.05},
    {14, 11, 0.000099, 0.42, 14.91, 14.51, 1.93, 0.18},
    {15, 15, 0.000100, 0.44, 15.93, 15.69, 3.08, 0.13},
    {16, 22, 0.000097, 0.48, 17.41, 16.84, 3.36, 0.09},
    {17, 36, 0.000099, 0.53, 19.09, 18.46, 5.19, 0.06},
    {18, 63, 0.000099, 0.57, 21.56, 20.79, 7.68, 0.03},
    {17, 13, 0.000011, 0.42, 17.92, 17.51, 1.81, 0.15},
    {18, 16, 0.000009, 0.44, 18.93, 18.62, 2.20, 0.12},
    {19, 22, 0.000010, 0.56, 20.15, 19.80, 3.16, 0.09},
    {20, 33, 0.000010, 0.62, 21.70, 20.94, 3.68, 0.06},
    {21, 54, 0.000010, 0.68, 23.61, 22.83, 5.63, 0.04},
};

// Cells the model cannot reproduce exactly (see the Erratum tests below for
// what each printed value corresponds to). Column names as in Table2Row.
using Cell = std::tuple<unsigned, unsigned, std::string>;
const std::set<Cell> kErrata = {
    {13, 23, "actual_fp"}, {13, 23, "eff"},                      // printed from FP(13,22)
    {19, 22, "eff"},       {20, 33, "eff"},  {21, 54, "eff"},    // k_b = log2(1e6)
    {4, 3, "npws"},        {10, 7, "npws"},                      // not the §5.2 formula
};
// Cells one unit off in the last printed digit: the model value sits within
// 0.0025 of a rounding boundary (the printed values are consistent with a
// slightly noisy evaluation); they must agree to within one printed unit.
const std::set<Cell> kLastDigit = {
    {11, 46, "accesses_window"}, {18, 16, "accesses_window"},
    {17, 36, "accesses_fp"},     {20, 33, "accesses_false"},
};

void check_cell(unsigned k, unsigned l, const std::string& col, double value, double printed,
                int decimals) {
    SCOPED_TRACE("k=" + std::to_string(k) + " l=" + std::to_string(l) + " " + col);
    const Cell cell{k, l, col};
    if (kErrata.count(cell)) {
        EXPECT_FALSE(RoundsTo(value, printed, decimals)) << "erratum now reproduces: update list";
        return;
    }
    if (kLastDigit.count(cell)) {
        EXPECT_FALSE(RoundsTo(value, printed, decimals));
        EXPECT_LT(std::abs(value - printed), std::pow(10.0, -decimals));
        return;
    }
    EXPECT_TRUE(RoundsTo(value, printed, decimals));
}

} // namespace

TEST(ApbfTable2, HasThePapersRowsInOrder) {
    const auto rows = m::apbf_table2();
    ASSERT_EQ(rows.size(), 25u);
    for (std::size_t i = 0; i < rows.size(); ++i) {
        EXPECT_EQ(rows[i].k, kTable2[i].k);
        EXPECT_EQ(rows[i].l, kTable2[i].l);
    }
}

TEST(ApbfTable2, EveryCellMatchesThePrintedPrecision) {
    const auto rows = m::apbf_table2();
    ASSERT_EQ(rows.size(), 25u);
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const auto& r = rows[i];
        const auto& p = kTable2[i];
        check_cell(r.k, r.l, "actual_fp", r.actual_fp, p.fp, 6);
        check_cell(r.k, r.l, "eff", r.eff, p.eff, 2);
        check_cell(r.k, r.l, "accesses_window", r.accesses_window, p.window, 2);
        check_cell(r.k, r.l, "accesses_fp", r.accesses_fp, p.fp_acc, 2);
        check_cell(r.k, r.l, "accesses_false", r.accesses_false, p.false_acc, 2);
        check_cell(r.k, r.l, "npws", r.npws, p.npws, 2);
    }
}

// Row (13,23): the printed fp 0.000928 and eff 0.50 are FP(13,22) and the eff
// computed from it with l = 23; all other cells of the row are l = 23's.
TEST(ApbfTable2Erratum, Row13_23UsesFpOf13_22) {
    EXPECT_TRUE(RoundsTo(m::apbf_fpr(13, 23), 0.000990, 6));
    const double fp22 = m::apbf_fpr(13, 22);
    EXPECT_TRUE(RoundsTo(fp22, 0.000928, 6));
    EXPECT_TRUE(RoundsTo(-std::log2(fp22) / 13 * 23.0 / 36.0, 0.50, 2));
    EXPECT_TRUE(RoundsTo(m::apbf_efficiency(13, 23), 0.49, 2));
}

// Rows (19,22), (20,33), (21,54): printed eff equals k_b = log2(10^6) (an
// aimed fp of 1e-6), not the rows' actual fp ~1e-5 used everywhere else.
TEST(ApbfTable2Erratum, LastThreeEffUseOneInAMillion) {
    const double kb = std::log2(1e6);
    for (auto [k, l, printed] : {std::tuple{19u, 22u, 0.56}, {20u, 33u, 0.62}, {21u, 54u, 0.68}}) {
        EXPECT_TRUE(RoundsTo(kb / k * l / double(k + l), printed, 2));
        EXPECT_FALSE(RoundsTo(m::apbf_efficiency(k, l), printed, 2));
    }
}

// NPWS (4,3) printed 0.58 and (10,7) printed 0.28: the §5.2 formula gives
// 1.875/3 = 0.625 and 1.998/7 = 0.2855; the exact probability model (the
// recurrence with the slack key's slices forced) gives 0.63 and 0.25. No
// single formula reproduces these two cells together with the other 23.
TEST(ApbfTable2Erratum, NpwsFormulaValues) {
    EXPECT_DOUBLE_EQ(m::apbf_peak_npws(4, 3), 1.875 / 3);
    EXPECT_NEAR(m::apbf_peak_npws(10, 7), (2.0 - std::pow(2.0, -9)) / 7, 1e-15);
}

// ALGORITHMS.md shared vectors (k, l -> FP).
TEST(ApbfFpr, SharedVectors) {
    struct V { unsigned k, l; double fp; int decimals; };
    const V vectors[] = {{4, 3, 0.100586, 6},   {5, 7, 0.101603, 6},   {7, 5, 0.011232, 6},
                         {8, 8, 0.010244, 6},   {10, 7, 0.001211, 6},  {11, 9, 0.000918, 6},
                         {14, 11, 0.000099, 6}, {15, 15, 0.000100, 6}, {17, 13, 0.0000106, 7},
                         {18, 16, 0.000009, 6}};
    for (const auto& v : vectors) {
        SCOPED_TRACE(std::to_string(v.k) + "," + std::to_string(v.l));
        EXPECT_TRUE(RoundsTo(m::apbf_fpr(v.k, v.l), v.fp, v.decimals));
    }
}

TEST(ApbfFpr, RecurrenceAgreesWithTheQueryWalk) {
    // F (§5.3) and Algorithm 1's walk (§5.4) are independent computations of
    // the same probability.
    for (unsigned k = 1; k <= 12; ++k)
        for (unsigned l = 1; l <= 20; ++l) {
            const auto fills = m::apbf_fill_ratios(k, l);
            const auto out = m::apbf_query_outcome(k, l, fills);
            EXPECT_NEAR(out.p_true, m::apbf_fpr(k, l), 1e-12);
            EXPECT_NEAR(out.p_true + out.p_false, 1.0, 1e-12);
        }
}

TEST(ApbfFpr, SingleSliceIsItsFillRatioAndGrowsWithL) {
    // k = 1: a false positive iff one of slices 0..l matches.
    std::vector<double> match = {0.3, 0.2, 0.1};
    EXPECT_NEAR(m::apbf_fpr(1, 2, match), 1 - 0.7 * 0.8 * 0.9, 1e-15);
    for (unsigned l = 1; l < 40; ++l) EXPECT_LT(m::apbf_fpr(8, l), m::apbf_fpr(8, l + 1));
}

TEST(ApbfAccesses, BloomFilterLimit) {
    // l = 0 is a partitioned Bloom filter whose slices have the APBF fill
    // ratios; with all fills 1/2 and k slices the false-answer cost is
    // [APBF] §4.2's 2^k/(2^k-1) Σ i/2^i (Table 1: k=7 -> 1.94).
    std::vector<double> half(7, 0.5);
    const auto out = m::apbf_query_outcome(7, 0, half);
    EXPECT_TRUE(RoundsTo(out.mean_false(), 1.94, 2));
    EXPECT_NEAR(out.mean_true(), 7.0, 1e-12);
}

TEST(ApbfParams, PublishedParameterisation) {
    const auto a = m::apbf_published_params(100, 0.01);
    EXPECT_EQ(a.k, 7u);
    EXPECT_EQ(a.l, 4u);
    EXPECT_EQ(a.capacity, 100u);
    EXPECT_EQ(a.generation, 20u);
    EXPECT_EQ(a.slice_bits, 202u); // ceil(7*20/ln2)
    const auto b = m::apbf_published_params(100, 0.001);
    EXPECT_EQ(b.k, 10u);
    EXPECT_EQ(b.l, 6u);
    EXPECT_EQ(b.capacity, 105u);
    EXPECT_LE(m::apbf_fpr(10, 6), 0.001);
    EXPECT_GT(m::apbf_fpr(10, 7), 0.001);
}

TEST(ApbfParams, ReferenceLevelsMeetTheirTargets) {
    // ALGORITHMS.md reference (k,l) table: the reference implementation's
    // levels sit near 10^-e, some above it (Table 2: (7,5) -> 0.0112), none
    // by more than 25%; and along a row FP stays within [0.9, 1.25]·10^-e.
    const unsigned rows[5][6][2] = {
        {{4, 3}, {5, 7}, {6, 14}, {7, 28}, {8, 56}, {0, 0}},
        {{7, 5}, {8, 8}, {9, 14}, {10, 25}, {11, 46}, {12, 88}},
        {{10, 7}, {11, 9}, {12, 14}, {13, 23}, {14, 40}, {15, 74}},
        {{14, 11}, {15, 15}, {16, 22}, {17, 36}, {18, 63}, {19, 117}},
        {{17, 13}, {18, 16}, {19, 22}, {20, 33}, {21, 54}, {22, 95}}};
    for (int e = 1; e <= 5; ++e)
        for (const auto& kl : rows[e - 1]) {
            if (kl[0] == 0) continue;
            const double fp = m::apbf_fpr(kl[0], kl[1]);
            EXPECT_LT(fp, 1.25 * std::pow(10.0, -e)) << kl[0] << "," << kl[1];
            EXPECT_GT(fp, 0.9 * std::pow(10.0, -e)) << kl[0] << "," << kl[1];
        }
}

// [APBF] Table 3 as printed.
struct PrintedRow3 {
    unsigned k, l, B, b;
    double apbbf, apbf, cap, win, fp, fls, npws;
};
constexpr PrintedRow3 kTable3[16] = {
    {2, 3, 64, 4, 0.0159865, 0.0180539, 0.968, 3.30, 2.72, 2.25, 0.36},
    {2, 3, 512, 4, 0.0121825, 0.0180539, 0.996, 3.31, 2.71, 2.23, 0.35},
    {2, 5, 64, 4, 0.0257532, 0.0335359, 0.968, 3.80, 3.28, 3.37, 0.21},
    {2, 5, 512, 4, 0.0197654, 0.0335359, 0.996, 3.81, 3.26, 3.33, 0.21},
    {3, 5, 64, 4, 0.0016005, 0.0017134, 0.968, 4.40, 3.85, 2.29, 0.22},
    {3, 5, 512, 4, 0.0010688, 0.0017134, 0.996, 4.40, 3.83, 2.26, 0.21},
    {3, 8, 64, 4, 0.0026767, 0.0031769, 0.968, 4.92, 4.41, 3.43, 0.13},
    {3, 8, 512, 4, 0.0017993, 0.0031769, 0.996, 4.92, 4.39, 3.38, 0.13},
    {2, 3, 64, 8, 0.0005608, 0.0001122, 0.936, 3.33, 2.70, 2.05, 0.34},
    {2, 3, 512, 8, 0.0000738, 0.0001122, 0.992, 3.33, 2.68, 2.02, 0.33},
    {2, 5, 64, 8, 0.0009231, 0.0002342, 0.936, 3.80, 3.23, 3.08, 0.20},
    {2, 5, 512, 8, 0.0001226, 0.0002342, 0.992, 3.80, 3.21, 3.03, 0.20},
    {3, 5, 64, 8, 0.0000104, 0.0000007, 0.936, 4.40, 3.82, 2.05, 0.20},
    {3, 5, 512, 8, 0.0000005, 0.0000007, 0.992, 4.40, 3.78, 2.02, 0.20},
    {3, 8, 64, 8, 0.0000178, 0.0000014, 0.936, 4.88, 4.35, 3.08, 0.13},
    {3, 8, 512, 8, 0.0000009, 0.0000014, 0.992, 4.88, 4.32, 3.03, 0.13},
};

TEST(ApbbfTable3, EveryCellMatchesThePrintedPrecision) {
    const auto rows = m::apbbf_table3();
    ASSERT_EQ(rows.size(), 16u);
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const auto& r = rows[i];
        const auto& p = kTable3[i];
        SCOPED_TRACE("row " + std::to_string(i + 1));
        ASSERT_EQ(std::tie(r.k, r.l, r.block_bits, r.b), std::tie(p.k, p.l, p.B, p.b));
        EXPECT_TRUE(RoundsTo(r.apbbf_fp, p.apbbf, 7));
        EXPECT_TRUE(RoundsTo(r.apbf_fp, p.apbf, 7));
        EXPECT_TRUE(RoundsTo(r.capacity, p.cap, 3));
        EXPECT_TRUE(RoundsTo(r.accesses_window, p.win, 2));
        EXPECT_TRUE(RoundsTo(r.accesses_fp, p.fp, 2));
        EXPECT_TRUE(RoundsTo(r.accesses_false, p.fls, 2));
        EXPECT_TRUE(RoundsTo(r.npws, p.npws, 2));
    }
}

TEST(ApbbfBits, Table4BitsPerElement) {
    // [APBF] Table 4 APBBF bits per element.
    EXPECT_TRUE(RoundsTo(m::apbbf_bits_per_item(2, 5, 512, 4), 16.2, 1));
    EXPECT_TRUE(RoundsTo(m::apbbf_bits_per_item(3, 8, 512, 4), 23.9, 1));
    EXPECT_TRUE(RoundsTo(m::apbbf_bits_per_item(2, 5, 512, 8), 32.6, 1));
    EXPECT_TRUE(RoundsTo(m::apbbf_bits_per_item(3, 8, 512, 8), 48.0, 1));
}

TEST(BlockedBloom, PoissonMixtureLimits) {
    // Huge blocks behave like an unblocked filter: fill 1-e^(-kλ/B).
    const double lambda = 1000.0, B = 16384.0;
    const unsigned k = 8;
    const double unblocked = std::pow(1 - std::exp(-double(k) * lambda / B), double(k));
    EXPECT_NEAR(m::blocked_bloom_fpr(lambda, 16384, k) / unblocked, 1.0, 0.02);
    // Small blocks are worse at the same load (variance of the block load).
    EXPECT_GT(m::blocked_bloom_fpr(lambda * 64 / B, 64, k), unblocked);
    EXPECT_EQ(m::blocked_bloom_fpr(0.0, 512, 4), 0.0);
    // Very large λ takes the strided (Riemann) path of the mixture.
    const double big = 1e7, bigB = 268435456.0;
    EXPECT_NEAR(m::blocked_bloom_fpr(big, 268435456u, k) /
                    std::pow(1 - std::exp(-double(k) * big / bigB), double(k)),
                1.0, 0.02);
    // Partitioned block with one part per bit = APBF slice, fill 1-(1-1/B)^λ.
    EXPECT_NEAR(m::partitioned_block_bloom_fpr(0.0, 64, 4), 0.0, 1e-15);
}

// [GE] Prop. 2.
TEST(GuardedEpoch, MatchesDirectEvaluation) {
    const double m_bits = 14.0 * 20000;
    const std::uint64_t W = 20000;
    for (unsigned r : {1u, 4u, 8u, 16u})
        for (unsigned k : {1u, 5u, 9u}) {
            const double s = std::floor(m_bits / (r + 1));
            const double ell = std::ceil(double(W) / r);
            const double direct = 1 - std::pow(1 - std::pow(1 - std::exp(-double(k) * ell / s), k), r + 1.0);
            EXPECT_NEAR(m::guarded_epoch_fpr(m_bits, W, r, k), direct, 1e-12 + 1e-9 * direct);
        }
}

TEST(GuardedEpoch, MonotoneInMemory) {
    double prev = 1.0;
    for (double bits_per_item = 2; bits_per_item <= 40; bits_per_item += 0.5) {
        const double fp = m::guarded_epoch_fpr(bits_per_item * 1e6, 1000000, 8, 7);
        EXPECT_LT(fp, prev);
        prev = fp;
    }
    double prevb = 1.0;
    for (double bits_per_item = 4; bits_per_item <= 40; bits_per_item += 1) {
        const double fp = m::guarded_epoch_blocked_fpr(bits_per_item * 1e6, 1000000, 8, 7, 512);
        EXPECT_LT(fp, prevb);
        EXPECT_GE(fp, m::guarded_epoch_fpr(bits_per_item * 1e6, 1000000, 8, 7));
        prevb = fp;
    }
}

TEST(GuardedEpoch, PaperTable1Scale) {
    // [GE] Table 1 measured FPR 0.0227 (r=4) and 0.0222 (r=8) at 14 bits per
    // live item, W = 20000; the model with the best k agrees within 10%.
    for (auto [r, measured] : {std::pair{4u, 0.0227}, std::pair{8u, 0.0222}}) {
        double best = 1.0;
        for (unsigned k = 1; k <= 20; ++k)
            best = std::min(best, m::guarded_epoch_fpr(14.0 * 20000, 20000, r, k));
        EXPECT_NEAR(best / measured, 1.0, 0.1) << "r=" << r;
    }
}

TEST(GuardedEpoch, NpwsIsStaleFraction) {
    EXPECT_DOUBLE_EQ(m::guarded_epoch_peak_npws(1000, 4), 0.25);
    // ℓ = ceil(1000/3) = 334, retained 4·334 = 1336 -> 336 stale.
    EXPECT_DOUBLE_EQ(m::guarded_epoch_peak_npws(1000, 3), 0.336);
}
