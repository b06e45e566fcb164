// Runs the built agebloom-plan (path in $AGEBLOOM_PLAN) and checks its
// output and exit codes.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

struct Run {
    int status;
    std::string out;
};

// stderr_only: the run's standard error in `out`, its standard output dropped.
Run run(const std::string& args, bool stderr_only = false) {
    const char* exe = std::getenv("AGEBLOOM_PLAN");
    if (!exe) {
        ADD_FAILURE() << "AGEBLOOM_PLAN is not set";
        return {-1, {}};
    }
    const std::string cmd = std::string("'") + exe + "' " + args + (stderr_only ? " 2>&1 >/dev/null" : " 2>/dev/null");
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
    EXPECT_EQ(run("-h").status, 0);  // as dedup_fwd takes it
    EXPECT_EQ(run("--bogus").status, 2);
    EXPECT_EQ(run("--window").status, 2);
    // Defaults are the tools' (--window 1000000, --fpr 0.01), as --help says:
    // the plan is what agebloom-replay and dedup_fwd build with the same options.
    const auto defaults = run("--json"), spelled = run("--window 1000000 --fpr 0.01 --json");
    EXPECT_EQ(defaults.status, 0) << defaults.out;
    EXPECT_EQ(defaults.out, spelled.out);
    const auto fpr_default = run("--window 1000 --json");
    EXPECT_EQ(fpr_default.status, 0) << fpr_default.out;
    EXPECT_EQ(fpr_default.out, run("--window 1000 --fpr 0.01 --json").out);
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
    // Given twice with two values: refused (the last won without a word),
    // --structure and --filter being one option; the same value twice agrees.
    const auto twice = run("--window 1000 --window 2000", true);
    EXPECT_EQ(twice.status, 2);
    EXPECT_NE(twice.out.find("--window given twice ('1000', then '2000')"), std::string::npos) << twice.out;
    const auto alias = run("--structure apbf --filter tlbf", true);
    EXPECT_EQ(alias.status, 2);
    EXPECT_NE(alias.out.find("--structure 'apbf' and --filter 'tlbf' set the same thing"), std::string::npos) << alias.out;
    EXPECT_EQ(run("--window 1000 --window 1000 --json").out, run("--window 1000 --json").out);
    // --version: the library's, and no "ignored" note.
    const auto version = run("--version");
    EXPECT_EQ(version.status, 0);
    EXPECT_EQ(version.out.rfind("agebloom-plan ", 0), 0u) << version.out;
    EXPECT_EQ(run("--version", true).out, "");
}

// An FPR no structure can build is a usage error naming --fpr, answered at
// once (every sizing search is bounded), never a hang or an abort.
TEST(Cli, FprOutOfReachIsExit2) {
    // APBF's k = log2(1/fpr) slices per key stops at 32; 1e-30 still has
    // plans (APBBF, ~204 bits per item), 1e-200 has none.
    EXPECT_EQ(run("--window 1000 --fpr 1e-30 --structure apbf").status, 2);
    EXPECT_EQ(run("--window 1000000 --fpr 1e-30 --structure apbbf").status, 0);
    // auto falls back from its fast layouts to any structure that reaches it.
    EXPECT_EQ(run("--window 1000000 --fpr 1e-30").status, 0);
    EXPECT_EQ(run("--window 1000000 --fpr 1e-200").status, 2);
    EXPECT_EQ(run("--window 1000 --fpr 1e-50 --structure apbf").status, 2);
    // Small but buildable: a plan, not an overflow.
    EXPECT_EQ(run("--window 1000 --fpr 1e-16 --structure guarded-epoch").status, 0);
    // A window so long that 2^50 bits leave few per item names the window
    // too, not only the FPR; a modest window, the FPR alone.
    const auto huge = run("--window 99999999999999", true);
    EXPECT_EQ(huge.status, 2);
    EXPECT_NE(huge.out.find("11 bits per item over 99999999999999 insertions): raise --fpr or shorten --window"),
              std::string::npos) << huge.out;
    // A plan past this machine's memory (94,000 GiB) is printed, with a note
    // that the tools could not allocate it here; a small one has none.
    const auto vast = run("--window 99999999999999 --fpr 0.4", true);
    EXPECT_EQ(vast.status, 0) << vast.out;
    EXPECT_NE(vast.out.find("is more than this machine's memory"), std::string::npos) << vast.out;
    EXPECT_EQ(run("--window 1000", true).out.find("machine's memory"), std::string::npos);
    const auto tiny_fpr = run("--window 1000000 --fpr 1e-200", true);
    EXPECT_NE(tiny_fpr.out.find("2^50 bits): raise --fpr\n"), std::string::npos) << tiny_fpr.out;
}

TEST(Cli, ListFiltersIsTheRegistry) {
    const auto r = run("--list-filters");
    ASSERT_EQ(r.status, 0);
    for (const char* name : {"guarded-epoch ", "guarded-epoch-blocked", "apbf ", "apbbf", "ring", "interleaved ",
                             "interleaved-apbf"})
        EXPECT_NE(r.out.find(name), std::string::npos) << name;
    // --json: one object per registry row, in the text list's order.
    const auto j = run("--list-filters --json");
    ASSERT_EQ(j.status, 0);
    const auto rows = nlohmann::json::parse(j.out, nullptr, false);
    ASSERT_TRUE(rows.is_array()) << j.out;
    EXPECT_EQ(rows.size(), static_cast<size_t>(std::count(r.out.begin(), r.out.end(), '\n')));
    size_t autos = 0;
    for (const auto& row : rows) {
        EXPECT_NE(r.out.find(row["name"].get<std::string>()), std::string::npos) << row;
        autos += row["auto_candidate"].get<bool>();
    }
    EXPECT_GE(autos, 1u);
}

namespace {

// agebloom-replay with `args` on the shipped trace, --json: its report.
nlohmann::json replay_json(const std::string& args) {
    const char* exe = std::getenv("AGEBLOOM_REPLAY");
    const char* trace = std::getenv("AGEBLOOM_TRACE");
    if (!exe || !trace) {
        ADD_FAILURE() << "AGEBLOOM_REPLAY or AGEBLOOM_TRACE is not set";
        return {};
    }
    const std::string cmd = std::string("'") + exe + "' '" + trace + "' --json " + args + " 2>/dev/null";
    FILE* pipe = popen(cmd.c_str(), "r");
    std::string out;
    std::array<char, 4096> buf;
    std::size_t n;
    while (pipe && (n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
    const int st = pipe ? pclose(pipe) : -1;
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << cmd << "\n" << out;
    return nlohmann::json::parse(out, nullptr, false);
}

} // namespace

// What agebloom-plan prints is what the tools build: its build_options,
// given to agebloom-replay, give the same filter, parameter for parameter,
// for auto and named structures, targets and memory sizing, planner limits.
TEST(Cli, EveryPrintedPlanIsWhatTheToolsBuild) {
    for (const char* args : {"--window 1000000 --fpr 0.01",
                             "--window 100000 --fpr 1e-6 --filter guarded-epoch",
                             "--window 1000000 --fpr 0.01 --max-npws 0.01",
                             "--window 1000000 --fpr 0.01 --filter guarded-epoch-blocked --block-bits 128",
                             "--window 1000000 --fpr 0.001 --filter apbbf --block-bits 256 --max-accesses 6",
                             "--window 1000000 --mem 2",
                             "--window 200000 --mem 0.25 --filter apbf",
                             "--ttl 10s --capacity 50000 --fpr 0.001",
                             "--ttl 50ms --capacity 1000 --fpr 1e-6 --filter ring",
                             // The options that change the plan beyond sizing: packet's default
                             // FPR, and keep-fpr's capacity trigger.
                             "--key packet --ttl 50ms --capacity 100000",
                             "--ttl 1s --capacity 1000 --on-flood keep-fpr"}) {
        SCOPED_TRACE(args);
        const auto r = run(std::string(args) + " --json");
        ASSERT_EQ(r.status, 0) << r.out;
        const auto plan = nlohmann::json::parse(r.out);
        const auto built = replay_json(plan["build_options"].get<std::string>());
        ASSERT_TRUE(built.is_object());
        EXPECT_EQ(built["filter"]["name"], plan["structure"]);
        EXPECT_EQ(built["filter"]["parameters"], plan["parameters"]);
        EXPECT_EQ(built["filter"]["bytes"], plan["total_bytes"]);
        // And the user's own options, given to replay, build it too.
        const auto same = replay_json(args);
        ASSERT_TRUE(same.is_object());
        EXPECT_EQ(same["filter"]["parameters"], plan["parameters"]);
    }
    EXPECT_EQ(nlohmann::json::parse(run("--key packet --window 1000 --json").out)["expected_fpr"].get<double>() < 2e-6,
              true);
    EXPECT_NE(nlohmann::json::parse(run("--ttl 1s --capacity 1000 --on-flood keep-fpr --json").out)["parameters"]
                  .get<std::string>()
                  .find("epoch_capacity="),
              std::string::npos);
}

// A tool's command line pasted: the options that shape the key or the run
// are checked (a bad value is exit 2) and ignored with a note, once each;
// the plan is the one without them.
TEST(Cli, TakesTheToolsOtherOptionsAndSaysItIgnoresThem) {
    const auto plain = run("--window 1000 --key packet --json");
    const auto pasted = run("--window 1000 --key packet --packet-bytes 200 --seed 7 --policy insert-on-miss --json");
    ASSERT_EQ(plain.status, 0) << plain.out;
    ASSERT_EQ(pasted.status, 0) << pasted.out;
    EXPECT_EQ(nlohmann::json::parse(plain.out), nlohmann::json::parse(pasted.out));
    const auto note = run("--window 1000 --key packet --packet-bytes 200 --seed 7 --seed 7", true);
    EXPECT_NE(note.out.find("note: --packet-bytes, --seed do not change the plan"), std::string::npos) << note.out;
    EXPECT_NE(run("--window 1000 --bpf udp", true).out.find("note: --bpf does not change"), std::string::npos);
    EXPECT_EQ(run("--window 1000 --key packet", true).out.find("note:"), std::string::npos);
    EXPECT_EQ(run("--window 1000 --key packet --packet-bytes 0").status, 2);
    EXPECT_EQ(run("--window 1000 --policy sometimes").status, 2);
    // A bad --bpf expression is refused as dedup_fwd refuses it (compiled for Ethernet).
    const auto bad_bpf = run("--window 1000 --bpf 'tcp port'", true);
    EXPECT_EQ(bad_bpf.status, 2);
    EXPECT_NE(bad_bpf.out.find("--bpf 'tcp port'"), std::string::npos) << bad_bpf.out;
}

// --mem alone: the lowest FPR that fits; more memory, a lower FPR.
TEST(Cli, MemAloneIsTheLowestFprThatFits) {
    const auto small = nlohmann::json::parse(run("--window 1000000 --mem 1 --filter guarded-epoch --json").out);
    const auto big = nlohmann::json::parse(run("--window 1000000 --mem 4 --filter guarded-epoch --json").out);
    EXPECT_LE(small["total_bytes"].get<double>(), 1 << 20);
    EXPECT_LE(big["total_bytes"].get<double>(), 4 << 20);
    EXPECT_LT(big["expected_fpr"].get<double>(), small["expected_fpr"].get<double>());
    // Nothing fits: exit 1 with the smallest size; tlbf wants --fpr with it.
    EXPECT_EQ(run("--window 1000000 --mem 0.01").status, 1);
    EXPECT_EQ(run("--ttl 10s --mem 4 --filter tlbf --fpr 0.01").status, 0);
}

// --ttl without --capacity: auto plans tlbf, and its note gives the reason
// (no rate given), not limits the user never set; the plan says how much of
// tlbf's budget its planned rate uses.
TEST(Cli, AutoWithoutARateSaysWhy) {
    const auto r = run("--ttl 60s --fpr 0.01");
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("structure             tlbf"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("no --capacity was given"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("do not fit"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("bits in use per item"), std::string::npos) << r.out;
    // --json carries the same figure, and the capacity it is at.
    const auto j = nlohmann::json::parse(run("--ttl 60s --fpr 0.01 --json").out, nullptr, false);
    ASSERT_TRUE(j.is_object());
    ASSERT_TRUE(j.contains("bits_in_use_per_item")) << j;
    EXPECT_GT(j["bits_in_use_per_item"].get<double>(), 0.0);
    EXPECT_LT(j["bits_in_use_per_item"].get<double>(), j["bits_per_item"].get<double>());
    EXPECT_GT(j["capacity"].get<uint64_t>(), 0u);
}

// auto over a time window of unknown rate plans tlbf alone: a --mem too
// small for its slices says so (it said "fpr out of reach: raise --fpr",
// even at --fpr 0.5).
TEST(Cli, AutoTlbfBudgetTooSmallSaysMem) {
    for (const char* fpr : {"0.01", "0.5"}) {
        // stderr into the output read (run() discards it): the comment mark
        // ends the command before run()'s own redirection.
        const auto r = run(std::string("--ttl 1s --mem 0.001 --fpr ") + fpr + " 2>&1 #");
        EXPECT_EQ(r.status, 1) << r.out;
        EXPECT_NE(r.out.find("raise --mem"), std::string::npos) << r.out;
        EXPECT_EQ(r.out.find("raise --fpr"), std::string::npos) << r.out;
    }
}

// --ttl --compare without --capacity: every row is planned for the same
// assumed rate (tlbf alone would otherwise plan for an unknown one, and its
// row would size another load), each row's build options say it, and the
// text says so.
TEST(Cli, CompareUnderTtlPlansEveryRowForOneRate) {
    const auto r = run("--ttl 1s --compare --json");
    ASSERT_EQ(r.status, 0) << r.out;
    const auto rows = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_TRUE(rows.is_array()) << r.out;
    bool tlbf = false;
    for (const auto& row : rows) {
        if (row.contains("error")) continue;
        EXPECT_TRUE(row.value("capacity_assumed", false)) << row["structure"];
        EXPECT_NE(row["build_options"].get<std::string>().find("--capacity 1000000"), std::string::npos) << row;
        if (row["structure"] == "tlbf") {
            tlbf = true;
            EXPECT_EQ(row["capacity"].get<uint64_t>(), 1000000u) << row;
        }
    }
    EXPECT_TRUE(tlbf);
    const auto t = run("--ttl 1s --compare");
    EXPECT_NE(t.out.find("every row is planned for 1000000 insertions per --ttl"), std::string::npos) << t.out;
    EXPECT_NE(t.out.find("capacity=1000000 budget_bits"), std::string::npos) << t.out;  // tlbf's row
    // Given, the capacity is the user's, and nothing is said of an assumption.
    const auto given = run("--ttl 1s --capacity 5000 --compare");
    EXPECT_EQ(given.out.find("every row is planned for"), std::string::npos) << given.out;
    EXPECT_NE(given.out.find("capacity=5000 budget_bits"), std::string::npos) << given.out;
}

// --compare: a row per structure that plans, fewest bits first, and the
// refusals named; --block-bits 128 plans the blocked guarded epoch filter.
TEST(Cli, CompareListsEveryStructure) {
    const auto r = run("--window 1000000 --fpr 0.01 --compare --block-bits 128 --json");
    ASSERT_EQ(r.status, 0);
    const auto rows = nlohmann::json::parse(r.out);
    ASSERT_TRUE(rows.is_array());
    // Every registry row, planned or refused: as many as --list-filters prints.
    const auto listed = run("--list-filters");
    ASSERT_EQ(listed.status, 0);
    const size_t registered = static_cast<size_t>(std::count(listed.out.begin(), listed.out.end(), '\n'));
    EXPECT_GE(registered, 14u);
    EXPECT_EQ(rows.size(), registered);
    double last = 0;
    bool blocked = false;
    for (const auto& row : rows) {
        if (row.contains("error")) continue;
        EXPECT_GE(row["bits_per_item"].get<double>(), last);
        last = row["bits_per_item"].get<double>();
        // Bits per item are the memory the structure takes, its arena over W
        // (tlbf's included: its whole budget, not the part in use), so the
        // order is by memory; the arena's header and alignment are the rest.
        const double arena_bits = row["total_bytes"].get<double>() * 8 / 1e6;
        EXPECT_LE(row["bits_per_item"].get<double>(), arena_bits) << row["structure"];
        EXPECT_GE(row["bits_per_item"].get<double>(), 0.99 * arena_bits) << row["structure"];
        if (row["structure"] == "guarded-epoch-blocked") blocked = row["block_bits"] == 128;
    }
    EXPECT_TRUE(blocked);
    // Sized by memory (--mem alone): tlbf's row is its plan with that budget at
    // the default FPR, the plan `--filter tlbf` with the same options prints,
    // not a refusal asking for the memory limit that was given.
    // Under --key packet, at packet's own default FPR.
    for (const std::string key : {"", " --key packet"}) {
        SCOPED_TRACE(key);
        const auto by_memory = run("--window 1000 --mem 2 --compare --json" + key);
        ASSERT_EQ(by_memory.status, 0) << by_memory.out;
        const auto named = run("--window 1000 --mem 2 --filter tlbf --json" + key);
        ASSERT_EQ(named.status, 0) << named.out;
        bool tlbf_row = false;
        for (const auto& row : nlohmann::json::parse(by_memory.out))
            if (row["structure"] == "tlbf") {
                tlbf_row = true;
                EXPECT_FALSE(row.contains("error")) << row.dump();
                EXPECT_EQ(row["parameters"], nlohmann::json::parse(named.out)["parameters"]) << row.dump();
                EXPECT_EQ(row["expected_fpr"], nlohmann::json::parse(named.out)["expected_fpr"]) << row.dump();
            }
        EXPECT_TRUE(tlbf_row);
    }
    const auto t = run("--ttl 10s --capacity 100000 --fpr 0.01 --compare");
    EXPECT_NE(t.out.find("tlbf"), std::string::npos);
    EXPECT_NE(t.out.find("keeps count windows only"), std::string::npos);  // tbf's refusal, in words
}

// --plot: the CSV beside the PNG has a row per (structure, target) planned,
// and the PNG is a PNG; an unwritable path is refused (exit 2).
TEST(Cli, PlotDrawsBitsPerItemAgainstTheTarget) {
    char dir[] = "/tmp/agebloom-plan-plot-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    const std::string png = std::string(dir) + "/bits.png";
    const auto r = run("--window 100000 --plot " + png);
    ASSERT_EQ(r.status, 0) << r.out;
    FILE* f = std::fopen(png.c_str(), "rb");
    ASSERT_NE(f, nullptr);
    unsigned char sig[8] = {};
    EXPECT_EQ(std::fread(sig, 1, 8, f), 8u);
    std::fclose(f);
    EXPECT_EQ(sig[1], 'P');
    EXPECT_EQ(sig[2], 'N');
    EXPECT_EQ(sig[3], 'G');
    FILE* csv = std::fopen((std::string(dir) + "/bits.csv").c_str(), "r");
    ASSERT_NE(csv, nullptr);
    int lines = 0;
    for (int ch; (ch = std::fgetc(csv)) != EOF;) lines += ch == '\n';
    std::fclose(csv);
    EXPECT_GT(lines, 13 * 10);  // most structures plan most of the 21 targets
    EXPECT_EQ(run("--window 100000 --plot /nonexistent/dir/bits.png").status, 2);
    // Nothing to draw (no structure fits 1 MiB at W = 1M for any FPR drawn):
    // exit 1 saying so, no picture and no CSV, where it drew an empty chart, exit 0.
    const std::string none = std::string(dir) + "/none.png";
    const auto empty = run("--mem 1 --plot " + none, true);
    EXPECT_EQ(empty.status, 1) << empty.out;
    EXPECT_NE(empty.out.find("nothing to draw"), std::string::npos) << empty.out;
    EXPECT_FALSE(std::filesystem::exists(none));
    EXPECT_FALSE(std::filesystem::exists(std::string(dir) + "/none.csv"));
    // Options the run would not use are refused, not dropped.
    const std::pair<const char*, const char*> refused[] = {
        {"--plot x.png --json", "--json does not apply"},
        {"--plot x.png --filter ring", "--plot draws every structure: --filter does not apply"},
        {"--plot x.png --structure ring", "--plot draws every structure: --filter does not apply"},
        {"--table apbf2 --compare", "prints the paper's table alone (its own windows and rows): not with --compare"},
        {"--table apbf2 --window 5", "not with --window"},
        {"--table apbf2 --plot x.png", "not with --plot"}};
    for (const auto& [args, says] : refused) {
        const auto r = run(args, true);
        EXPECT_EQ(r.status, 2) << args << "\n" << r.out;
        EXPECT_NE(r.out.find(says), std::string::npos) << args << "\n" << r.out;
        EXPECT_FALSE(std::filesystem::exists("x.png")) << args;
    }
    EXPECT_EQ(run("--table apbf2 --json").status, 0);  // what --table takes
    // A name matplotlib would change (no .png: it appends one) or hide
    // ("dir/.png"): refused before anything is planned or written.
    for (const std::string bad : {"noext", "a.xyz", ".png", "d2/", "d2/.png"}) {
        EXPECT_EQ(run("--window 100000 --plot " + std::string(dir) + "/" + bad).status, 2) << bad;
        EXPECT_FALSE(std::filesystem::exists(std::string(dir) + "/" + bad + ".png")) << bad;
    }
    std::system((std::string("rm -rf ") + dir).c_str());
}

// --plot's data file cut short (a file-size limit stands in for a full
// disk; SIGXFSZ ignored, so the write fails with EFBIG) is said naming the
// PNG asked for, exit 2, and removed: a partial CSV was left behind.
TEST(Cli, APlotWhoseDataCannotBeWrittenLeavesNoPartialFile) {
    const char* exe = std::getenv("AGEBLOOM_PLAN");
    ASSERT_NE(exe, nullptr) << "AGEBLOOM_PLAN is not set";
    char dir[] = "/tmp/agebloom-plan-full-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    const std::string png = std::string(dir) + "/bits.png", csv = std::string(dir) + "/bits.csv";
    const std::string cmd = std::string("sh -c \"trap '' XFSZ; ulimit -f 4; '") + exe +
                            "' --window 100000 --plot " + png + "\" 2>&1";
    FILE* pipe = popen(cmd.c_str(), "r");
    ASSERT_NE(pipe, nullptr);
    std::string out;
    for (int ch; (ch = std::fgetc(pipe)) != EOF;) out += static_cast<char>(ch);
    const int st = pclose(pipe);
    EXPECT_EQ(WIFEXITED(st) ? WEXITSTATUS(st) : -1, 2) << out;
    EXPECT_NE(out.find("agebloom-plan: --plot " + png + ": cannot write its data, " + csv + ": File too large"),
              std::string::npos) << out;
    EXPECT_FALSE(std::filesystem::exists(csv)) << "a partial CSV was left";
    EXPECT_FALSE(std::filesystem::exists(png));
    std::system((std::string("rm -rf ") + dir).c_str());
}

// Output that cannot be written is an error: a plan, a listing or the usage
// sent to /dev/full exited 0 with nothing written. (stderr goes to
// /dev/null here: the status says it.)
TEST(PlanCli, AFullStandardOutputExitsOne) {
    for (const char* args : {"--window 1000000", "--window 1000000 --json", "--compare", "--list-filters",
                             "--list-filters --json", "--table apbf2", "--help"}) {
        EXPECT_EQ(run(std::string(args) + " >/dev/full").status, 1) << args;
        EXPECT_EQ(run(std::string(args) + " >/dev/null").status, 0) << args;
    }
}
