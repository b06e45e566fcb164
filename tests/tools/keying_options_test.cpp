// agebloom-replay's keying options on a real capture: --bpf (only matching
// packets are deduplicated, the rest pass and are counted), --vlan-in-key,
// and the per-reason account of unparsed packets.
#include <gtest/gtest.h>
#include <pcap/pcap.h>
#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../common/shell.hpp"
#include "../common/test_paths.hpp"

namespace {

using agebloom::testing::trace;

agebloom::testing::Outcome replay(const std::string& args) {
  return agebloom::testing::shell(std::string(AGEBLOOM_REPLAY) + " " + args);
}

// How many packets of the capture libpcap's own filter matches.
uint64_t libpcap_count(const std::string& path, const char* expr) {
  char err[PCAP_ERRBUF_SIZE];
  pcap_t* p = pcap_open_offline(path.c_str(), err);
  EXPECT_NE(p, nullptr) << err;
  if (p == nullptr) return 0;
  bpf_program prog{};
  EXPECT_EQ(pcap_compile(p, &prog, expr, 1, PCAP_NETMASK_UNKNOWN), 0);
  pcap_pkthdr* h;
  const u_char* d;
  uint64_t n = 0;
  while (pcap_next_ex(p, &h, &d) == 1) n += pcap_offline_filter(&prog, h, d) != 0;
  pcap_freecode(&prog);
  pcap_close(p);
  return n;
}

}  // namespace

TEST(KeyingOptions, BpfDeduplicatesOnlyWhatItMatches) {
  const std::string t = trace("pcapplusplus_example.pcap");
  for (const char* expr : {"tcp port 80", "udp", "host 10.0.0.1 or icmp"}) {
    SCOPED_TRACE(expr);
    const auto r = replay(t + " --key flow --seed 1 --json --bpf '" + expr + "'");
    ASSERT_EQ(r.code, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out);
    const uint64_t matched = libpcap_count(t, expr);
    EXPECT_EQ(j["bpf"]["unmatched"].get<uint64_t>(), j["packets"].get<uint64_t>() - matched);
    EXPECT_EQ(j["keyed"].get<uint64_t>() + j["unparsed"].get<uint64_t>(), matched);
    EXPECT_LE(j["suppressed"].get<uint64_t>(), j["keyed"].get<uint64_t>());
  }
  // Text output says it too.
  const auto text = replay(t + " --key flow --seed 1 --bpf udp");
  EXPECT_NE(text.out.find("--bpf 'udp': "), std::string::npos) << text.out;
}

TEST(KeyingOptions, BadBpfExpressionIsABadOption) {
  const auto r = replay(trace("pcapplusplus_example.pcap") + " --bpf 'tcp port'");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("--bpf 'tcp port'"), std::string::npos) << r.out;
}

// A long allow list (400 hosts, past BpfFilter::kOptimizedUpTo) is compiled
// without libpcap's optimizer, whose time grows with about the cube of the
// expression (1,000 hosts: 53 s before the first packet). Said in one note,
// and the packets it matches are the ones libpcap's optimized program
// matches; a bad long expression is quoted by its start and length.
TEST(KeyingOptions, ALongBpfIsCompiledUnoptimizedAndMatchesTheSame) {
  const std::string t = trace("pcapplusplus_example.pcap");
  std::string expr;
  for (int i = 0; i < 399; ++i) expr += "host 10.77." + std::to_string(i / 256) + "." + std::to_string(i % 256) + " or ";
  expr += "tcp port 80";
  ASSERT_GT(expr.size(), 4096u);
  const auto r = agebloom::testing::shell_split(std::string(AGEBLOOM_REPLAY) + " " + t +
                                               " --key flow --seed 1 --json --bpf '" + expr + "'");
  ASSERT_EQ(r.code, 0) << r.err.substr(0, 2000);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_NE(r.err.find("is compiled without libpcap's optimizer"), std::string::npos) << r.err;
  const uint64_t matched = libpcap_count(t, expr.c_str());
  EXPECT_GT(matched, 0u);
  EXPECT_EQ(j["bpf"]["unmatched"].get<uint64_t>(), j["packets"].get<uint64_t>() - matched);
  const auto said = agebloom::testing::shell("{ " + std::string(AGEBLOOM_REPLAY) + " " + t + " --key flow --seed 1 --bpf '" + expr +
                                           "' >/dev/null; }");
  EXPECT_EQ(said.code, 0);
  EXPECT_NE(said.out.find("agebloom-replay: note: --bpf 'host 10.77.0.0 or "), std::string::npos) << said.out;
  EXPECT_NE(said.out.find(" ...' (" + std::to_string(expr.size()) + " bytes) is compiled without libpcap's optimizer"),
            std::string::npos) << said.out;
  EXPECT_LT(said.out.size(), 600u) << "the expression is quoted whole";
  const auto bad = replay(t + " --bpf '" + expr + " or'");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.out.find("(" + std::to_string(expr.size() + 3) + " bytes): "), std::string::npos) << bad.out;
  EXPECT_LT(bad.out.size(), 600u);
  // A short expression is optimized, and says nothing of it.
  const auto short_expr = agebloom::testing::shell_split(std::string(AGEBLOOM_REPLAY) + " " + t +
                                                        " --key flow --seed 1 --bpf 'tcp port 80'");
  EXPECT_EQ(short_expr.code, 0) << short_expr.err;
  EXPECT_EQ(short_expr.err.find("optimizer"), std::string::npos) << short_expr.err;
}

TEST(KeyingOptions, UnparsedPacketsAreCountedByReasonAndAMostlyUnkeyedRunWarns) {
  // Nine ARP frames and one IPv4/UDP frame: 90% of the capture has no flow key.
  const std::string path = "/tmp/agebloom-keying-" + std::to_string(getpid()) + ".pcap";
  {
    pcap_t* dead = pcap_open_dead(DLT_EN10MB, 65535);
    pcap_dumper_t* d = pcap_dump_open(dead, path.c_str());
    ASSERT_NE(d, nullptr);
    std::vector<u_char> arp(42, 0);
    arp[12] = 0x08;
    arp[13] = 0x06;
    const std::vector<u_char> udp = {0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2, 0x08, 0x00,
                                     0x45, 0, 0, 29, 0, 1, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
                                     0, 1, 0, 2, 0, 9, 0, 0, 'x'};
    for (int i = 0; i < 10; ++i) {
      const std::vector<u_char>& f = i == 9 ? udp : arp;
      pcap_pkthdr h{};
      h.ts.tv_sec = 1700000000 + i;
      h.caplen = h.len = static_cast<bpf_u_int32>(f.size());
      pcap_dump(reinterpret_cast<u_char*>(d), &h, f.data());
    }
    pcap_dump_close(d);
    pcap_close(dead);
  }
  const auto r = replay(path + " --key flow --seed 1");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("(9 unparsed)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("unparsed by reason: unsupported_l2 9"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("warning: 9 of 10 packets have no flow key"), std::string::npos) << r.out;
  // Under --json too, on standard error: the JSON alone on standard output.
  const auto j = agebloom::testing::shell_split(std::string(AGEBLOOM_REPLAY) + " " + path + " --key flow --seed 1 --json");
  EXPECT_EQ(j.code, 0) << j.out << j.err;
  EXPECT_FALSE(nlohmann::json::parse(j.out, nullptr, false).is_discarded()) << j.out;
  EXPECT_NE(j.err.find("warning: 9 of 10 packets have no flow key"), std::string::npos) << j.err;
  // Deselected by --bpf, the ARP frames are not "unparsed", and nothing warns.
  const auto b = replay(path + " --key flow --seed 1 --bpf ip");
  EXPECT_NE(b.out.find("(0 unparsed)"), std::string::npos) << b.out;
  EXPECT_NE(b.out.find("--bpf 'ip': 9 packets did not match"), std::string::npos) << b.out;
  EXPECT_EQ(b.out.find("warning"), std::string::npos) << b.out;
  std::remove(path.c_str());
}

TEST(KeyingOptions, VlanInKeyNeedsAKeyModeThatHasNoVlansOfItsOwn) {
  const auto r = replay(trace("pcapplusplus_example.pcap") + " --key packet --vlan-in-key");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("--vlan-in-key"), std::string::npos) << r.out;
  // On an untagged capture the VLAN count is 0 for every packet: same verdicts.
  const auto a = nlohmann::json::parse(replay(trace("pcapplusplus_example.pcap") + " --key flow --seed 4 --json").out);
  const auto b = nlohmann::json::parse(
      replay(trace("pcapplusplus_example.pcap") + " --key flow --seed 4 --json --vlan-in-key").out);
  EXPECT_EQ(a["keyed"], b["keyed"]);
}

// --mem too small: the exact size needed and the budget, never two equal
// rounded figures ("needs 3 MB, more than --mem 3 MB").
TEST(KeyingOptions, MemTooSmallPrintsExactSizes) {
  const auto r = replay(trace("pcapplusplus_example.pcap") + " --filter interleaved --fpr 0.01 --mem 3");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find(" bytes ("), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("more than --mem 3.00 MiB (3145728 bytes)"), std::string::npos) << r.out;
}

// --mem alone sizes by memory: the lowest FPR that fits in it, never more
// memory; a tighter --mem gives a higher FPR.
TEST(KeyingOptions, MemAloneIsTheLowestFprThatFits) {
  // The default window (10^6 insertions): auto's one-line layout needs
  // 3.24 MiB for the 1% default, so 4 MiB holds better than 1%.
  const auto big = replay(trace("pcapplusplus_example.pcap") + " --mem 4 --json");
  ASSERT_EQ(big.code, 0) << big.out;
  const auto j = nlohmann::json::parse(big.out);
  EXPECT_LE(j["filter"]["bytes"].get<uint64_t>(), 4u << 20);
  EXPECT_LT(j["filter"]["model_fpr"].get<double>(), 0.01);
  const auto small = replay(trace("pcapplusplus_example.pcap") + " --mem 1 --json");
  ASSERT_EQ(small.code, 0) << small.out;
  const auto s = nlohmann::json::parse(small.out);
  EXPECT_LE(s["filter"]["bytes"].get<uint64_t>(), 1u << 20);
  EXPECT_GT(s["filter"]["model_fpr"].get<double>(), j["filter"]["model_fpr"].get<double>());
  // Too little for any filter of the window: the smallest size, exit 2.
  const auto none = replay(trace("pcapplusplus_example.pcap") + " --mem 0.0001");
  EXPECT_EQ(none.code, 2);
  EXPECT_NE(none.out.find("the smallest needs"), std::string::npos) << none.out;
}

// The seed, in the base --seed takes, in the text report and the JSON alike.
TEST(KeyingOptions, SeedIsPrintedAsSeedTakesIt) {
  const auto text = replay(trace("pcapplusplus_example.pcap") + " --seed 5eed");
  EXPECT_NE(text.out.find("seed 5eed (--seed 5eed repeats this run)"), std::string::npos) << text.out;
  const auto j = nlohmann::json::parse(replay(trace("pcapplusplus_example.pcap") + " --seed 5eed --json").out);
  EXPECT_EQ(j["seed"], "5eed");
}
