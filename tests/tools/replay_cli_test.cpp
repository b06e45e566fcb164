// agebloom-replay as a user runs it: real traces with --truth --json for every
// filter and key mode, the verdict bitmap, and every error path (exit 2 for
// bad options, exit 1 for unreadable traces, never a crash).
#include <gtest/gtest.h>

#include "../common/shell.hpp"
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace fs = std::filesystem;

namespace {

using agebloom::testing::Outcome;

Outcome run(const std::string& args) { return agebloom::testing::shell(std::string(AGEBLOOM_REPLAY) + " " + args); }

std::string trace(const char* name) { return std::string(AGEBLOOM_SOURCE_ROOT) + "/data/traces/" + name; }

fs::path temp_dir() {
  fs::path d = fs::temp_directory_path() / ("agebloom-replay-test-" + std::to_string(getpid()));
  fs::create_directories(d);
  return d;
}

}  // namespace

TEST(ReplayCli, TruthOnRealTracesHasNoLiveFalseNegatives) {
  for (const char* filter : {"auto", "guarded-epoch", "guarded-epoch-blocked", "apbf", "apbbf", "ring", "interleaved"})
    for (const char* key : {"src-ip", "dst-ip", "flow", "click"}) {
      const Outcome r = run(trace("pcapplusplus_example.pcap") + " --json --truth --seed 1 --window 300 --filter " +
                        filter + " --key " + key);
      ASSERT_EQ(r.code, 0) << r.out;
      const auto j = nlohmann::json::parse(r.out);
      EXPECT_EQ(j["packets"], 4631);
      EXPECT_EQ(j["backend"], "cpu");
      EXPECT_EQ(j["live_fnr"], 0.0) << filter << " " << key;
      EXPECT_LE(j["fpr"].get<double>(), 0.05);
      EXPECT_EQ(j["packets"].get<uint64_t>(), j["passed"].get<uint64_t>() + j["suppressed"].get<uint64_t>());
      for (const char* field : {"keyed", "seconds", "keys_per_second", "truth_duplicates", "expired_positive_rate"})
        EXPECT_TRUE(j.contains(field)) << field;
      // Insert-always: every live repeat is suppressed, so suppressed >= truth duplicates.
      EXPECT_GE(j["suppressed"].get<uint64_t>(), j["truth_duplicates"].get<uint64_t>());
    }
}

TEST(ReplayCli, TimeWindowFromPacketTimestamps) {
  const Outcome r = run(trace("pcapplusplus_4KHttpRequests.pcap") + " --json --truth --seed 2 --key click --ttl 60s");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["policy"], "insert-on-miss");
  EXPECT_EQ(j["live_fnr"], 0.0);
  EXPECT_GT(j["truth_duplicates"].get<uint64_t>(), 0u);
  EXPECT_EQ(j["filter"]["window_kind"], "time_ns");
}

TEST(ReplayCli, VerdictsFileHasOneBitPerPacketAndMatchesSuppressed) {
  const fs::path v = temp_dir() / "verdicts.bin";
  const Outcome r = run(trace("pcapplusplus_example.pcap") + " --json --seed 1 --key flow --verdicts " + v.string());
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  std::ifstream in(v, std::ios::binary);
  std::string bits((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(bits.size(), (4631u + 7) / 8);
  uint64_t ones = 0;
  for (unsigned char c : bits) ones += __builtin_popcount(c);
  EXPECT_EQ(ones, j["suppressed"].get<uint64_t>());
  // Same seed, same verdicts: replay is deterministic.
  const fs::path v2 = temp_dir() / "verdicts2.bin";
  ASSERT_EQ(run(trace("pcapplusplus_example.pcap") + " --seed 1 --key flow --verdicts " + v2.string()).code, 0);
  std::ifstream in2(v2, std::ios::binary);
  EXPECT_EQ(bits, std::string((std::istreambuf_iterator<char>(in2)), {}));
}

TEST(ReplayCli, BadOptionsExitTwoWithAMessage) {
  const std::string t = trace("pcapplusplus_example.pcap");
  struct Case {
    std::string args, says;
  };
  for (const Case& c : {Case{"", "no TRACE"}, Case{t + " " + t, "more than one TRACE"},
                        Case{t + " --key mac", "--key"}, Case{t + " --window 0", "--window"},
                        Case{t + " --window abc", "--window"}, Case{t + " --ttl 5parsecs", "--ttl"},
                        Case{t + " --ttl -5s", "--ttl"}, Case{t + " --window 10 --ttl 1s", "exclude"},
                        Case{t + " --fpr 0", "--fpr"}, Case{t + " --fpr 1.5", "--fpr"},
                        Case{t + " --policy sometimes", "--policy"}, Case{t + " --seed xyz", "--seed"},
                        Case{t + " --filter bogus", "unknown filter"}, Case{t + " --bogus", "unknown"},
                        Case{t + " --backend tpu", "--backend"}, Case{t + " --backend gpu", "CUDA"},
                        Case{t + " --window", "incomplete"}}) {
    const Outcome r = run(c.args);
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find(c.says), std::string::npos) << c.args << "\n" << r.out;
  }
  const Outcome help = run("--help");
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("--verdicts"), std::string::npos);
}

TEST(ReplayCli, UnreadableTracesExitOneWithAMessage) {
  const fs::path d = temp_dir();
  // Missing file.
  Outcome r = run((d / "missing.pcap").string());
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("missing.pcap"), std::string::npos);
  // Not a capture.
  std::ofstream(d / "text.pcap") << "this is not a capture\n";
  r = run((d / "text.pcap").string());
  EXPECT_EQ(r.code, 1) << r.out;
  // Truncated inside a packet record: an error after the packets read so far.
  std::ifstream in(trace("pcapplusplus_example.pcap"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  std::ofstream(d / "cut.pcap", std::ios::binary) << bytes.substr(0, bytes.size() / 2 + 3);
  r = run((d / "cut.pcap").string() + " --seed 1");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("read error after"), std::string::npos) << r.out;
  // Zero packets: header only. A clean, empty replay.
  std::ofstream(d / "empty.pcap", std::ios::binary) << bytes.substr(0, 24);
  r = run((d / "empty.pcap").string() + " --json --seed 1");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(nlohmann::json::parse(r.out)["packets"], 0);
  fs::remove_all(d);
}
