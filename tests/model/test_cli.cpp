// Runs the built agebloom-plan (path in $AGEBLOOM_PLAN) and checks its
// output and exit codes.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

struct Run {
    int status;
    std::string out;
};

Run run(const std::string& args) {
    const char* exe = std::getenv("AGEBLOOM_PLAN");
    if (!exe) {
        ADD_FAILURE() << "AGEBLOOM_PLAN is not set";
        return {-1, {}};
    }
    const std::string cmd = std::string("'") + exe + "' " + args + " 2>/dev/null";
    FILE* pipe = popen(cmd.c_str(), "r");
    if (!pipe) return {-1, {}};
    std::string out;
    std::array<char, 4096> buf;
    std::size_t n;
    while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
    const int st = pclose(pipe);
    return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

} // namespace

TEST(Cli, Table2Json) {
    const auto r = run("--table apbf2 --json");
    ASSERT_EQ(r.status, 0);
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_TRUE(j.is_array());
    ASSERT_EQ(j.size(), 25u);
    for (const auto& row : j)
        for (const char* f : {"k", "l", "actual_fp", "eff", "accesses_window", "accesses_fp",
                              "accesses_false", "npws"})
            EXPECT_TRUE(row.contains(f)) << f;
    EXPECT_EQ(j[0]["k"], 4);
    EXPECT_EQ(j[0]["l"], 3);
    EXPECT_NEAR(j[0]["actual_fp"].get<double>(), 0.100586, 5e-7);
    EXPECT_NEAR(j[24]["accesses_window"].get<double>(), 23.61, 0.005);
}

TEST(Cli, Table2Text) {
    const auto r = run("--table apbf2");
    ASSERT_EQ(r.status, 0);
    EXPECT_NE(r.out.find("0.100586"), std::string::npos);
}

TEST(Cli, PlanJson) {
    const auto r = run("--window 1000000 --fpr 0.01 --max-npws 0.25 --json");
    ASSERT_EQ(r.status, 0);
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_LE(j["expected_fpr"].get<double>(), 0.01);
    EXPECT_LE(j["peak_npws"].get<double>(), 0.25);
    EXPECT_GT(j["bits_per_item"].get<double>(), 6.6);
    EXPECT_TRUE(j["structure"].is_string());
}

TEST(Cli, PlanStructureAndText) {
    const auto r = run("--window 1000000 --fpr 0.001 --structure apbbf --block-bits 512 --json");
    ASSERT_EQ(r.status, 0);
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["structure"], "apbbf");
    EXPECT_EQ(j["block_bits"], 512);
    const auto t = run("--window 1000 --fpr 0.05");
    ASSERT_EQ(t.status, 0);
    EXPECT_NE(t.out.find("bits per item"), std::string::npos);
}

TEST(Cli, HelpAndExitCodes) {
    EXPECT_EQ(run("--help").status, 0);
    EXPECT_EQ(run("--bogus").status, 2);
    EXPECT_EQ(run("--window").status, 2);
    EXPECT_EQ(run("--window 1000").status, 2);           // --fpr missing
    EXPECT_EQ(run("--window abc --fpr 0.01").status, 2);
    EXPECT_EQ(run("--window 1000 --fpr 1.5").status, 2);
    EXPECT_EQ(run("--window 0 --fpr 0.01").status, 2);
    EXPECT_EQ(run("--window 1000 --fpr 0.01 --structure nope").status, 2);
    EXPECT_EQ(run("--window 1000 --fpr 0.01 --block-bits 100").status, 2);
    EXPECT_EQ(run("--table nope").status, 2);
    EXPECT_EQ(run("--window 1000 --fpr 0.01 extra").status, 2);
    // Well-formed but unsatisfiable: exit 1.
    EXPECT_EQ(run("--window 1000000 --fpr 0.01 --max-bits-per-item 3").status, 1);
    // The shared options' rules: the same refusals as dedup_fwd and agebloom-replay.
    EXPECT_EQ(run("--window 1e6 --fpr 0.01").status, 2);               // whole counts only
    EXPECT_EQ(run("--window 1000 --capacity 5 --fpr 0.01").status, 2);  // --capacity needs --ttl
    EXPECT_EQ(run("--window 1000 --ttl 1s --fpr 0.01").status, 2);
    EXPECT_EQ(run("--ttl 60s --capacity 100000 --fpr 0.01").status, 0);
}

// An FPR no structure can build is a usage error naming --fpr, answered at
// once (every sizing search is bounded), never a hang or an abort.
TEST(Cli, FprOutOfReachIsExit2) {
    // APBF's k = log2(1/fpr) slices per key stops at 32; 1e-30 still has
    // plans (APBBF, ~204 bits per item), 1e-200 has none.
    EXPECT_EQ(run("--window 1000 --fpr 1e-30 --structure apbf").status, 2);
    EXPECT_EQ(run("--window 1000000 --fpr 1e-30").status, 0);
    EXPECT_EQ(run("--window 1000000 --fpr 1e-200").status, 2);
    EXPECT_EQ(run("--window 1000 --fpr 1e-50 --structure apbf").status, 2);
    // Small but buildable: a plan, not an overflow.
    EXPECT_EQ(run("--window 1000 --fpr 1e-16 --structure guarded-epoch").status, 0);
}

TEST(Cli, ListFiltersIsTheRegistry) {
    const auto r = run("--list-filters");
    ASSERT_EQ(r.status, 0);
    for (const char* name : {"guarded-epoch ", "guarded-epoch-blocked", "apbf ", "apbbf", "ring", "interleaved ",
                             "interleaved-apbf"})
        EXPECT_NE(r.out.find(name), std::string::npos) << name;
}
