// dedup_fwd as a user runs it, over net_pcap virtual devices (no NIC, no
// hugepages). Every trace is generated here with a known duplicate structure;
// the packets dedup_fwd forwards must equal, packet for packet, those that
// agebloom-replay passes for the same trace, seed and parameters, so Bloom
// false positives cannot make a test flaky. Exit code 77 (skip) with the
// reason when the EAL cannot start here.
#include <gtest/gtest.h>

#include "../common/filter_list.hpp"
#include "../common/shell.hpp"
#include "../common/snapshot_reseal.h"
#include "../common/test_paths.hpp"
#include "captures.hpp"
#include "suite_main.hpp"
#include "three_lcores.hpp"
#include <pcap/pcap.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using agebloom::testing::Bytes;
using agebloom::testing::Frame;
using agebloom::testing::read_pcap;
using agebloom::testing::sorted_frames;
using agebloom::testing::write_pcap;

namespace {

// ---------------------------------------------------------------- running

using agebloom::testing::Outcome;
using agebloom::testing::shell;

fs::path temp_dir() { return agebloom::testing::process_temp_dir("dedup-fwd-test"); }

// EAL arguments: no hugepages, no PCI, a file prefix of our own so parallel
// runs (and other suites) never share /var/run/dpdk state.
// `lcores` is a -l list, or an --lcores map when it contains '@'.
std::string eal(const std::string& vdevs, const std::string& lcores = "0") {
  static std::atomic<int> n{0};
  const std::string l = lcores.find('@') == std::string::npos ? " -l " + lcores : " --lcores '" + lcores + "'";
  return std::string("--no-huge --no-pci -m 512 --log-level=lib.eal:error --file-prefix agebloom-t") +
         std::to_string(getpid()) + "-" + std::to_string(n++) + l + " " + vdevs;
}


std::string pcap_vdev(int i, const fs::path& in, const fs::path& out) {
  return "--vdev net_pcap" + std::to_string(i) + ",rx_pcap=" + in.string() + ",tx_pcap=" + out.string();
}

Outcome dedup_fwd(const std::string& eal_args, const std::string& app_args) {
  return shell(std::string(DEDUP_FWD) + " " + eal_args + " -- " + app_args);
}

// ---------------------------------------------------------------- traces

void put16(Bytes& b, uint16_t v) {
  b.push_back(static_cast<uint8_t>(v >> 8));
  b.push_back(static_cast<uint8_t>(v));
}

Bytes ethernet(uint16_t ethertype) {
  Bytes b = {0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2};
  put16(b, ethertype);
  return b;
}

// Ethernet + IPv4 + TCP/UDP + payload, lengths consistent.
Bytes ipv4(uint32_t src, uint32_t dst, uint8_t proto, uint16_t sport, uint16_t dport, const std::string& payload) {
  Bytes b = ethernet(0x0800);
  const size_t l4 = proto == 6 ? 20 : 8;
  const uint16_t total = static_cast<uint16_t>(20 + l4 + payload.size());
  b.insert(b.end(), {0x45, 0});
  put16(b, total);
  b.insert(b.end(), {0, 1, 0x40, 0, 64, proto, 0, 0});
  for (uint32_t a : {src, dst})
    for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<uint8_t>(a >> s));
  put16(b, sport);
  put16(b, dport);
  if (proto == 6) {
    b.insert(b.end(), {0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x18, 0xff, 0xff, 0, 0, 0, 0});
  } else {
    put16(b, static_cast<uint16_t>(8 + payload.size()));
    put16(b, 0);
  }
  b.insert(b.end(), payload.begin(), payload.end());
  return b;
}

// A trace with a known duplicate structure: `uniques` fresh packets drawn from
// small address/port pools (so src-ip, dst-ip and flow keys repeat at different
// rates), each followed within a few packets by a byte-identical copy, plus
// ARP frames that no key mode parses. Click packets are HTTP GETs of a few ad
// ids from a few clients. Returns the indices of the exact copies.
std::vector<Frame> keyed_trace(unsigned uniques, uint32_t seed, std::vector<size_t>* copies) {
  std::mt19937 rng(seed);
  std::vector<Frame> t;
  std::vector<size_t> pending;  // indices waiting for their copy
  uint64_t ts = 1'700'000'000'000'000ull;
  for (unsigned i = 0; i < uniques; ++i) {
    const uint32_t src = 0x0a000000 | (rng() % 40);
    const uint32_t dst = 0xc0a80000 | (rng() % 25);
    Frame f;
    f.ts_us = ts += 10;
    switch (rng() % 4) {
      case 0:
        f.bytes = ipv4(src, dst, 6, static_cast<uint16_t>(1024 + rng() % 50), 80,
                       "GET /ad?id=" + std::to_string(rng() % 30) + "&u=1 HTTP/1.1\r\nHost: ads.example\r\n\r\n");
        break;
      case 1: f.bytes = ipv4(src, dst, 17, static_cast<uint16_t>(5000 + rng() % 8), 53, "q"); break;
      case 2: f.bytes = ipv4(src, dst, 6, static_cast<uint16_t>(2000 + rng() % 8), 443, ""); break;
      default: {
        f.bytes = ethernet(0x0806);  // ARP: unparsed in every mode
        f.bytes.resize(42, static_cast<uint8_t>(i));
      }
    }
    t.push_back(f);
    pending.push_back(t.size() - 1);
    // Release a copy of an earlier packet now and then (distance < 8).
    while (!pending.empty() && (pending.size() > 6 || rng() % 2)) {
      Frame c = t[pending.front()];
      c.ts_us = ts += 10;
      t.push_back(c);
      if (copies) copies->push_back(t.size() - 1);
      pending.erase(pending.begin());
    }
  }
  return t;
}

// agebloom-replay's verdicts (true = suppressed), one per packet.
std::vector<bool> replay_verdicts(const fs::path& trace, const std::string& args, nlohmann::json* summary = nullptr) {
  const fs::path bits = temp_dir() / (trace.stem().string() + ".verdicts");
  // Its warnings (most packets unkeyed) go to stderr, kept apart from the JSON.
  const auto r = agebloom::testing::shell_split(std::string(AGEBLOOM_REPLAY) + " " + trace.string() +
                                                " --json --verdicts " + bits.string() + " " + args);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  if (summary) *summary = nlohmann::json::parse(r.out, nullptr, false);
  std::ifstream in(bits, std::ios::binary);
  std::vector<char> raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<bool> v;
  for (char c : raw)
    for (int b = 0; b < 8; ++b) v.push_back((static_cast<uint8_t>(c) >> b) & 1);
  return v;
}

nlohmann::json read_json(const fs::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in, nullptr, false);
}

// Runs dedup_fwd and agebloom-replay over `frames` with the same parameters
// and checks: forwarded packets == replay's passed packets, in order; the
// counters add up; every mbuf went back to the pool. Returns the stats JSON.
nlohmann::json expect_same_as_replay(const std::string& name, const std::vector<Frame>& frames,
                                     const std::string& common, const std::string& fwd_only = "",
                                     const std::string& lcores = "0") {
  const fs::path in = temp_dir() / (name + ".pcap"), out = temp_dir() / (name + ".out.pcap"),
                 js = temp_dir() / (name + ".json");
  write_pcap(in, frames);
  nlohmann::json replay;
  const std::vector<bool> suppressed = replay_verdicts(in, common, &replay);
  const Outcome r = dedup_fwd(eal(pcap_vdev(0, in, out), lcores),
                              common + " --exit-on-idle 200 --stats-interval 0 --stats-json " + js.string() + " " + fwd_only);
  EXPECT_EQ(r.code, 0) << r.out;
  const std::vector<Bytes> got = read_pcap(out);
  std::vector<Bytes> want;
  for (size_t i = 0; i < frames.size(); ++i)
    if (!suppressed.at(i)) want.push_back(frames[i].bytes);
  EXPECT_EQ(got.size(), want.size()) << name;
  for (size_t i = 0; i < std::min(got.size(), want.size()); ++i)
    if (got[i] != want[i]) {
      ADD_FAILURE() << name << ": forwarded packet " << i << " differs from replay's";
      break;
    }
  const nlohmann::json j = read_json(js);
  EXPECT_FALSE(j.is_discarded()) << r.out;
  if (j.is_discarded()) return j;
  EXPECT_EQ(j["rx"], frames.size());
  EXPECT_EQ(j["suppressed"], replay["suppressed"]);
  EXPECT_EQ(j["unparsed"], replay["unparsed"]);
  EXPECT_EQ(j["unparsed_reasons"], replay["unparsed_reasons"]);
  EXPECT_EQ(j["rx"].get<uint64_t>(), j["tx"].get<uint64_t>() + j["suppressed"].get<uint64_t>() +
                                         j["mirrored"].get<uint64_t>() + j["dropped_error"].get<uint64_t>());
  EXPECT_TRUE(j["invariant_holds"].get<bool>());
  EXPECT_EQ(j["mempool"]["in_use_at_exit"], 0);
  EXPECT_EQ(j["filter"]["name"], replay["filter"]["name"]);
  EXPECT_EQ(j["filter"]["parameters"], replay["filter"]["parameters"]);
  return j;
}

}  // namespace

// ---------------------------------------------------------------- tests

TEST(DedupFwd, GoldenEveryKeyModeEqualsReplay) {
  std::vector<size_t> copies;
  const auto frames = keyed_trace(600, 7, &copies);
  for (const char* key : {"src-ip", "dst-ip", "flow", "click", "packet"}) {
    SCOPED_TRACE(key);
    const std::string common = std::string("--key ") + key + " --window 64 --fpr 0.001 --seed 5eed";
    expect_same_as_replay(std::string("golden-") + key, frames, common);
  }
  // The keying options both tools share reach dedup_fwd's burst path alike.
  int i = 0;
  for (const char* opts : {"--key flow --vlan-in-key", "--key src-ip --vlan-in-key",
                           "--key packet --ignore-vlan --packet-bytes 64", "--key packet --ignore-l2"}) {
    SCOPED_TRACE(opts);
    expect_same_as_replay("golden-opts-" + std::to_string(i++), frames,
                          std::string(opts) + " --window 64 --fpr 0.001 --seed 5eed");
  }
}

// Stage 1 keys untagged IPv4 on its fast path and hashes those keys together
// after the burst (Hasher::fixed_bulk); other frames go through the general
// walk, which hashes them in the loop. Bursts that mix them must keep each
// packet's own hash: the same sources arrive tagged and untagged (the same key
// without --vlan-in-key), IPv6 sources (longer keys, walk only) among them,
// and unparsed ARP frames that take no key, so a keyed packet's index in the
// burst and among the keyed differ.
TEST(DedupFwd, GoldenFastAndWalkedFramesInOneBurstEqualReplay) {
  std::mt19937 rng(21);
  std::vector<Frame> frames;
  uint64_t ts = 1'700'000'000'000'000ull;
  for (unsigned i = 0; i < 900; ++i) {
    Frame f;
    f.ts_us = ts += 10;
    const unsigned kind = rng() % 6;
    if (kind == 0) {  // ARP: no key in any mode
      f.bytes = ethernet(0x0806);
      f.bytes.resize(42, static_cast<uint8_t>(i));
    } else if (kind == 1) {  // IPv6 + UDP: 20 sources, 3 destinations, 2 ports
      f.bytes = ethernet(0x86dd);
      f.bytes.insert(f.bytes.end(), {0x60, 0, 0, 0, 0, 9, 17, 64});  // payload 8 + 1 bytes, UDP
      for (const uint8_t last : {static_cast<uint8_t>(rng() % 20), static_cast<uint8_t>(100 + rng() % 3)}) {
        f.bytes.insert(f.bytes.end(), {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
        f.bytes.push_back(last);
      }
      put16(f.bytes, static_cast<uint16_t>(5000 + rng() % 2));
      put16(f.bytes, 53);
      put16(f.bytes, 9);
      put16(f.bytes, 0);
      f.bytes.push_back('q');
    } else {
      f.bytes = ipv4(0x0a000000 | (rng() % 60), 0xc0a80000 | (rng() % 3), 17,
                     static_cast<uint16_t>(5000 + rng() % 2), 53, "q");  // 60 sources, 360 flows
      if (kind == 2) {  // an 802.1Q tag after the MACs: the walk's frame
        const uint8_t tag[] = {0x81, 0x00, 0x00, static_cast<uint8_t>(1 + rng() % 4)};
        f.bytes.insert(f.bytes.begin() + 12, tag, tag + 4);
      }
    }
    frames.push_back(f);
  }
  for (const char* key : {"src-ip", "flow"}) {
    SCOPED_TRACE(key);
    const nlohmann::json j = expect_same_as_replay(std::string("golden-mixed-") + key, frames,
                                                   std::string("--key ") + key + " --window 256 --fpr 0.001 --seed 5eed");
    EXPECT_GT(j["suppressed"].get<uint64_t>(), 100u);  // the sources repeat: the verdicts are not all "new"
  }
}

// --bpf: the libpcap program runs on the lcore that keys; what it does not
// match is forwarded untouched and counted, exactly as replay counts it.
TEST(DedupFwd, BpfSelectsWhatIsDeduplicatedLikeReplay) {
  std::vector<size_t> copies;
  const auto frames = keyed_trace(400, 13, &copies);
  int i = 0;
  for (const char* expr : {"udp", "tcp port 80", "not arp"}) {
    SCOPED_TRACE(expr);
    const auto j = expect_same_as_replay("bpf-" + std::to_string(i++), frames,
                                         std::string("--key flow --window 64 --seed 5eed --bpf '") + expr + "'");
    ASSERT_FALSE(j.is_discarded());
    ASSERT_TRUE(j.contains("bpf"));
    EXPECT_EQ(j["bpf"]["expression"], expr);
    EXPECT_GT(j["bpf"]["unmatched"].get<uint64_t>(), 0u);
    EXPECT_LT(j["bpf"]["unmatched"].get<uint64_t>(), frames.size());
  }
  const fs::path in = temp_dir() / "bpf-bad.pcap", out = temp_dir() / "bpf-bad.out.pcap";
  write_pcap(in, frames);
  const Outcome bad = dedup_fwd(eal(pcap_vdev(0, in, out)), "--key flow --bpf 'tcp port'");
  EXPECT_EQ(bad.code, 2) << bad.out;
  EXPECT_NE(bad.out.find("--bpf 'tcp port'"), std::string::npos) << bad.out;
}

// The closing stats line shows the figures the JSON has: the filter's final
// fill (it used to lag one interval: "fill 0.0000" beside a JSON 0.0766), and
// what an operator reads while it runs: each port's rx, tx, imissed and
// rx_nombuf (rte_eth_stats_get), the suppression ratio (duplicates / keyed
// packets) and the effective window.
TEST(DedupFwd, ClosingStatsLineShowsTheJsonFigures) {
  std::vector<size_t> copies;
  const auto frames = keyed_trace(400, 19, &copies);
  const fs::path in = temp_dir() / "fill.pcap", out = temp_dir() / "fill.out.pcap", js = temp_dir() / "fill.json";
  write_pcap(in, frames);
  const Outcome r = dedup_fwd(eal(pcap_vdev(0, in, out)), "--key flow --window 1000 --seed 1 --exit-on-idle 200 "
                                                          "--stats-interval 1 --stats-json " + js.string());
  ASSERT_EQ(r.code, 0) << r.out;
  const nlohmann::json j = read_json(js);
  ASSERT_FALSE(j.is_discarded());
  const std::string line = r.out.substr(r.out.rfind("dedup_fwd: rx "));
  const double fill = j["lcores"][0]["fill_ratio"].get<double>();
  EXPECT_GT(fill, 0.0);
  const size_t at = line.find(" fill ");
  ASSERT_NE(at, std::string::npos) << line;
  EXPECT_NEAR(std::stod(line.substr(at + 6)), fill, 1e-4) << line;

  const double ratio = j["duplicates"].get<double>() / j["keyed"].get<double>();
  EXPECT_GT(j["duplicates"].get<uint64_t>(), copies.size() / 2);
  EXPECT_NEAR(j["suppression_ratio"].get<double>(), ratio, 1e-12);
  EXPECT_NEAR(j["lcores"][0]["suppression_ratio"].get<double>(), ratio, 1e-12);
  char want[64];
  std::snprintf(want, sizeof want, "| suppression ratio %.4f |", ratio);
  EXPECT_NE(line.find(want), std::string::npos) << line;
  EXPECT_NE(line.find(" window 1000 insertions"), std::string::npos) << line;
  EXPECT_EQ(j["filter"]["effective_window_insertions"], 1000);
  EXPECT_EQ(j["lcores"][0]["effective_window_insertions"], 1000);
  const nlohmann::json& port = j["ports"][0];
  EXPECT_EQ(port["ipackets"], frames.size());
  EXPECT_EQ(port["opackets"], j["tx"]);
  const std::string ports = "| port 0 rx " + std::to_string(port["ipackets"].get<uint64_t>()) + " tx " +
                            std::to_string(port["opackets"].get<uint64_t>()) + " imissed " +
                            std::to_string(port["imissed"].get<uint64_t>()) + " rx_nombuf " +
                            std::to_string(port["rx_nombuf"].get<uint64_t>());
  EXPECT_NE(line.find(ports), std::string::npos) << line;
}

// On the TSC clock an empty poll moves a time window's filter on, so that its
// epochs end while nothing arrives (interleaved-swept's sweep too), not inside
// the next burst: a capture delivered at once, then 400 ms of idle polls under
// a 100 ms TTL, leaves every lane of the one-line layout cleared (fill 0 at
// exit); before, the filter's clock stopped at the last burst and the capture's
// keys were still set.
TEST(DedupFwd, IdlePollsAdvanceATimeWindowOnTheTscClock) {
  std::vector<Frame> frames;
  for (uint32_t i = 0; i < 300; ++i) frames.push_back({0, ipv4(0x0a000000 + i, 0xc0a80001, 17, 1000, 53, "q")});
  const fs::path in = temp_dir() / "idle.pcap", out = temp_dir() / "idle.out.pcap", js = temp_dir() / "idle.json";
  write_pcap(in, frames);
  const Outcome r = dedup_fwd(eal(pcap_vdev(0, in, out)),
                              "--key src-ip --filter interleaved --ttl 100ms --capacity 1000 --seed 1 "
                              "--exit-on-idle 400 --stats-interval 0 --stats-json " + js.string());
  ASSERT_EQ(r.code, 0) << r.out;
  const nlohmann::json j = read_json(js);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["lcores"][0]["fill_ratio"].get<double>(), 0.0) << j["lcores"][0].dump();
  EXPECT_EQ(j["lcores"][0]["rx"].get<uint64_t>(), 300u) << j["lcores"][0].dump();
}

// --on-flood keep-fpr ends an epoch once it holds its design load, which
// shortens the window: the effective window is the span of the last r epochs.
// Distinct keys 100 us apart on the capture's clock end an epoch every
// epoch_capacity packets, so it is r * epoch_capacity * 100 us exactly;
// keep-window keeps the whole TTL.
TEST(DedupFwd, EffectiveWindowShrinksWhenEpochsEndEarly) {
  std::vector<Frame> frames;
  const uint64_t t0 = 1'700'000'000'000'000ull;
  for (uint32_t i = 0; i < 4000; ++i) frames.push_back({t0 + i * 100ull, ipv4(0x0a000000 + i, 0xc0a80001, 17, 1000, 53, "q")});
  const fs::path in = temp_dir() / "flood.pcap", out = temp_dir() / "flood.out.pcap", js = temp_dir() / "flood.json";
  write_pcap(in, frames);
  // interleaved-swept: its current lane cycles through r + 2 lanes, not r + 1.
  for (const char* filter : {"guarded-epoch", "interleaved-swept"})
  for (const char* policy : {"keep-fpr", "keep-window"}) {
    SCOPED_TRACE(std::string(filter) + " " + policy);
    const Outcome r = dedup_fwd(eal(pcap_vdev(0, in, out)),
                                std::string("--key flow --filter ") + filter + " --ttl 1s --capacity 800 --on-flood " +
                                    policy + " --time-source rx-timestamp --seed 1 --exit-on-idle 200 "
                                             "--stats-interval 1 --stats-json " + js.string());
    ASSERT_EQ(r.code, 0) << r.out;
    const nlohmann::json j = read_json(js);
    ASSERT_FALSE(j.is_discarded());
    const std::string line = r.out.substr(r.out.rfind("dedup_fwd: rx "));
    if (std::string(policy) == "keep-window") {
      EXPECT_EQ(j["filter"]["effective_window_s"], 1.0);
      EXPECT_NE(line.find(" window 1 s |"), std::string::npos) << line;
      continue;
    }
    const std::string params = j["filter"]["parameters"];
    const uint64_t r_epochs = std::stoull(params.substr(params.find("r=") + 2));
    const uint64_t cap = std::stoull(params.substr(params.find("epoch_capacity=") + 15));
    ASSERT_GT(frames.size(), (r_epochs + 1) * cap) << "more than r early rotations";
    const double expected = static_cast<double>(r_epochs * cap) * 100e-6;
    EXPECT_NEAR(j["filter"]["effective_window_s"].get<double>(), expected, 1e-9) << params;
    EXPECT_NEAR(j["lcores"][0]["effective_window_s"].get<double>(), expected, 1e-9);
    char want[96];
    std::snprintf(want, sizeof want, " window %.6g s (epochs ending early: 1 s configured)", expected);
    EXPECT_NE(line.find(want), std::string::npos) << line;
    EXPECT_GT(j["lcores"][0]["filter_stats"]["early_rotations"].get<double>(), 0);
  }
  // Without a stats line (--stats-interval 0) the flood is still said, at exit.
  for (const char* policy : {"keep-fpr", "keep-window"}) {
    SCOPED_TRACE(policy);
    const Outcome r = dedup_fwd(eal(pcap_vdev(0, in, out)),
                                std::string("--key flow --filter guarded-epoch --ttl 1s --capacity 800 --on-flood ") +
                                    policy + " --time-source rx-timestamp --seed 1 --exit-on-idle 200 --stats-interval 0");
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find(std::string(policy) == "keep-fpr" ? "dedup_fwd: warning: flood: "
                                                            : "dedup_fwd: warning: FLOOD: "),
              std::string::npos)
        << r.out;
  }
}

// A Linux SLL capture fed to a DPDK port (which carries Ethernet) keys
// nothing: the run says why, per reason, and warns instead of passing it all
// in silence.
TEST(DedupFwd, MostlyUnparsedInputWarnsWithReasons) {
  std::vector<size_t> copies;
  auto frames = keyed_trace(50, 17, &copies);
  // The Ethernet header replaced by a 16-byte cooked header, read as Ethernet.
  for (Frame& f : frames) {
    Bytes sll = {0, 0, 0, 1, 0, 6, 0x02, 0, 0, 0, 0, 1, 0, 0, f.bytes[12], f.bytes[13]};
    sll.insert(sll.end(), f.bytes.begin() + 14, f.bytes.end());
    f.bytes = sll;
  }
  const fs::path in = temp_dir() / "sll.pcap", out = temp_dir() / "sll.out.pcap";
  write_pcap(in, frames);
  const Outcome r = dedup_fwd(eal(pcap_vdev(0, in, out)), "--key flow --exit-on-idle 200 --stats-interval 0");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("dedup_fwd: unparsed by reason: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("dedup_fwd: warning: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Linux SLL"), std::string::npos) << r.out;
}

// Every structure the registry lists (agebloom-replay --list-filters, so a
// new structure is covered by being registered): dedup_fwd's verdicts equal
// replay's, packet for packet, over a count window and over a time window
// clocked by the capture's timestamps (10 us apart: a 2 ms TTL spans ~200).
TEST(DedupFwd, GoldenEveryStructureEqualsReplay) {
  const auto& listed = agebloom::testing::listed_filters(AGEBLOOM_REPLAY);  // tests/common/filter_list.hpp
  ASSERT_GE(listed.size(), 7u);
  const auto frames = keyed_trace(500, 13, nullptr);
  for (const auto& f : listed) {
    const std::string& name = f.name;
    SCOPED_TRACE(name);
    expect_same_as_replay("every-" + name, frames, "--key flow --filter " + name + " --window 64 --seed 5eed");
    if (!f.time_windows) continue;  // count windows only
    expect_same_as_replay("every-ttl-" + name, frames,
                          "--key flow --filter " + name + " --ttl 2ms --capacity 300 --seed 5eed",
                          "--time-source rx-timestamp");
  }
}

// --decide penalties: the inferential filter's verdicts in dedup_fwd equal
// replay's, packet for packet, with the same expected penalty, for fixed
// penalties and for a click's $FN read from its request (--penalty-param).
TEST(DedupFwd, PenaltyDecisionsEqualReplay) {
  const auto frames = keyed_trace(600, 7, nullptr);
  for (const std::string& common :
       {std::string("--key flow --filter btbf --window 64 --decide penalties --penalty-fp 3 --penalty-fn 1 --seed 5eed"),
        std::string("--key click --filter tbf --window 64 --decide penalties --penalty-fn 2 --prior 0.01 "
                    "--penalty-param id --seed 5eed")}) {
    SCOPED_TRACE(common);
    const nlohmann::json j = expect_same_as_replay("penalties", frames, common);
    nlohmann::json replay;
    (void)replay_verdicts(temp_dir() / "penalties.pcap", common, &replay);
    ASSERT_TRUE(j.contains("penalties")) << j.dump();
    EXPECT_NEAR(j["penalties"]["expected_penalty"].get<double>(),
                replay["penalties"]["expected_penalty"].get<double>(), 1e-3);
    EXPECT_GT(j["penalties"]["expected_penalty"].get<double>(), 0.0);
    if (common.find("penalty-param") != std::string::npos) {
      EXPECT_EQ(j["penalties"]["fn_from_param"], replay["penalties"]["fn_from_param"]);
      EXPECT_GT(j["penalties"]["fn_from_param"].get<uint64_t>(), 0u);
    }
  }
}

// Every key option of dedup_fwd exists in replay, so any run can be
// replayed: --click-ports (HTTP on other ports, or on any port).
TEST(DedupFwd, ClickPortsEqualReplay) {
  const auto frames = keyed_trace(400, 3, nullptr);
  for (const char* ports : {"any", "80", "8080,9000"}) {
    SCOPED_TRACE(ports);
    const auto j = expect_same_as_replay("click-ports", frames,
                                         std::string("--key click --window 64 --seed 5eed --click-ports ") + ports);
    if (std::string(ports) == "8080,9000") {
      EXPECT_GT(j["unparsed"].get<uint64_t>(), 0u);  // port 80 is not HTTP here
    }
  }
}

// Keyed hashing (hardening): without --seed the secret is random and never
// printed (stdout, stats JSON), so nobody reading them can grind colliding
// keys; a given --seed is printed, so the run can be reproduced.
TEST(DedupFwd, RandomSeedIsNeverPrintedAGivenOneIs) {
  const auto frames = keyed_trace(50, 3, nullptr);
  const fs::path in = temp_dir() / "seed.pcap", out = temp_dir() / "seed.out.pcap", js = temp_dir() / "seed.json";
  write_pcap(in, frames);
  Outcome r = dedup_fwd(eal(pcap_vdev(0, in, out)),
                        "--exit-on-idle 200 --stats-interval 0 --stats-json " + js.string());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("seed random"), std::string::npos) << r.out;
  nlohmann::json j = read_json(js);
  EXPECT_EQ(j["seed_given"], false);
  EXPECT_FALSE(j.contains("seed")) << j.dump();
  r = dedup_fwd(eal(pcap_vdev(0, in, out)), "--seed 5eed --exit-on-idle 200 --stats-interval 0 --stats-json " + js.string());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("seed 5eed"), std::string::npos) << r.out;
  j = read_json(js);
  EXPECT_EQ(j["seed_given"], true);
  EXPECT_EQ(j["seed"], "5eed");
}

// A stats file that takes the open but not the bytes (/dev/full: a full
// disk) is a failure at exit, not a silent success with no JSON: the write is
// checked after the file is closed, where a buffered stream finds it.
TEST(DedupFwd, AStatsJsonThatCannotBeWrittenFailsTheRun) {
  const auto frames = keyed_trace(50, 3, nullptr);
  const fs::path in = temp_dir() / "full.pcap", out = temp_dir() / "full.out.pcap";
  write_pcap(in, frames);
  const Outcome r = dedup_fwd(eal(pcap_vdev(0, in, out)), "--exit-on-idle 200 --stats-interval 0 --stats-json /dev/full");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("cannot write /dev/full: No space left on device"), std::string::npos) << r.out;
}

// At start, the promise in the user's units (the filter's own guarantee()),
// and with --mem alone the filter that fits it, with no target in the JSON.
TEST(DedupFwd, PrintsItsGuaranteeAndSizesByMemory) {
  const auto frames = keyed_trace(50, 3, nullptr);
  const fs::path in = temp_dir() / "g.pcap", out = temp_dir() / "g.out.pcap", js = temp_dir() / "g.json";
  write_pcap(in, frames);
  Outcome r = dedup_fwd(eal(pcap_vdev(0, in, out)),
                        "--ttl 10s --capacity 100000 --exit-on-idle 200 --stats-interval 0");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("guarantee: every repeat within 10s of its previous sighting is suppressed"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("may be remembered for up to"), std::string::npos) << r.out;
  r = dedup_fwd(eal(pcap_vdev(0, in, out)), "--mem 2 --exit-on-idle 200 --stats-interval 0 --stats-json " + js.string());
  ASSERT_EQ(r.code, 0) << r.out;
  const nlohmann::json j = read_json(js);
  EXPECT_TRUE(j["filter"]["fpr_target"].is_null()) << j["filter"].dump();
  EXPECT_EQ(j["filter"]["mem_bytes"], 2u << 20);
  EXPECT_LE(j["filter"]["bytes_per_lcore"].get<uint64_t>(), 2u << 20);
}

TEST(DedupFwd, ExactCopiesInsideTheWindowAreAllSuppressed) {
  std::vector<size_t> copies;
  const auto frames = keyed_trace(400, 11, &copies);
  ASSERT_GT(copies.size(), 300u);
  for (const char* key : {"src-ip", "dst-ip", "flow", "click", "packet"}) {
    SCOPED_TRACE(key);
    const fs::path in = temp_dir() / (std::string("copies-") + key + ".pcap");
    const fs::path out = temp_dir() / (std::string("copies-") + key + ".out.pcap");
    write_pcap(in, frames);
    const Outcome r = dedup_fwd(eal(pcap_vdev(0, in, out)), std::string("--key ") + key +
                                    " --window 100000 --exit-on-idle 200 --stats-interval 0 --seed 1");
    ASSERT_EQ(r.code, 0) << r.out;
    // A copy of a keyed packet, 8 packets or fewer after it, must never come out:
    // count the forwarded packets byte-equal to the copy.
    const std::vector<Bytes> got = read_pcap(out);
    for (size_t c : copies) {
      const Bytes& b = frames[c].bytes;
      if (b.size() == 42) continue;  // ARP copies are unparsed: they pass
      // click keys only the GETs; other frames pass unparsed in click mode.
      if (std::string(key) == "click" && (b.size() < 54 || b[23] != 6 || b[36] != 0 || b[37] != 80)) continue;
      if (std::string(key) == "click" && b.size() == 54) continue;  // bare TCP: no request
      size_t n = 0;
      for (const Bytes& g : got) n += g == b;
      EXPECT_LE(n, 1u) << "copy at " << c << " forwarded";
    }
  }
}

TEST(DedupFwd, TwoLcoresMainPlusOneWorker) {
  const auto frames = keyed_trace(300, 3, nullptr);
  expect_same_as_replay("two-lcores", frames, "--key flow --window 50 --seed 99", "", "0,1");
}

// net_pcap has one queue and no RSS: with two workers the main lcore
// dispatches keys in software. Equal keys always reach the same worker and
// time windows are exact, so (with stamps from the capture) the forwarded
// packets are those agebloom-replay passes; only their interleaving across
// the two workers' Tx may differ, so they are compared as multisets.
TEST(DedupFwd, SoftwareDispatcherTwoWorkersEqualsReplay) {
  std::vector<Frame> frames = keyed_trace(1500, 21, nullptr);
  // 1 ms apart under a 50 ms TTL: keys expire and return many times.
  uint64_t ts = 1'700'000'000'000'000ull;
  for (Frame& f : frames) f.ts_us = ts += 1000;
  for (const char* key : {"src-ip", "flow", "click"}) {
    SCOPED_TRACE(key);
    const std::string name = std::string("dispatch-") + key;
    const std::string common = std::string("--key ") + key + " --ttl 50ms --capacity 200 --fpr 0.00001 --seed d15";
    const fs::path in = temp_dir() / (name + ".pcap"), out = temp_dir() / (name + ".out.pcap"),
                   js = temp_dir() / (name + ".json");
    write_pcap(in, frames);
    nlohmann::json replay;
    const std::vector<bool> suppressed = replay_verdicts(in, common, &replay);
    const Outcome r = dedup_fwd(eal(pcap_vdev(0, in, out), three_lcores()),
                                common + " --time-source rx-timestamp --exit-on-idle 300 --stats-interval 0 "
                                         "--stats-json " + js.string());
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("dispatches keys to the 2 workers in software"), std::string::npos) << r.out;

    std::vector<Bytes> passed;
    for (size_t i = 0; i < frames.size(); ++i)
      if (!suppressed.at(i)) passed.push_back(frames[i].bytes);
    const std::vector<std::string> got = sorted_frames(read_pcap(out)), want = sorted_frames(passed);
    EXPECT_EQ(got.size(), want.size());
    EXPECT_TRUE(got == want) << "forwarded packets differ from replay's passed packets";

    const nlohmann::json j = read_json(js);
    ASSERT_FALSE(j.is_discarded()) << r.out;
    EXPECT_EQ(j["rx"], frames.size());
    EXPECT_EQ(j["suppressed"], replay["suppressed"]);
    EXPECT_EQ(j["unparsed"], replay["unparsed"]);
    EXPECT_EQ(j["unparsed_reasons"], replay["unparsed_reasons"]);
    EXPECT_TRUE(j["invariant_holds"].get<bool>());
    EXPECT_EQ(j["mempool"]["in_use_at_exit"], 0);
    ASSERT_TRUE(j["dispatcher"].is_object());
    EXPECT_EQ(j["dispatcher"]["rx"], frames.size());
    ASSERT_EQ(j["lcores"].size(), 2u);
    uint64_t sum = 0;
    for (const auto& lc : j["lcores"]) {
      EXPECT_GT(lc["rx"].get<uint64_t>(), 0u) << "a worker received nothing";
      EXPECT_GT(lc["keyed"].get<uint64_t>(), 0u);
      sum += lc["rx"].get<uint64_t>();
    }
    EXPECT_EQ(sum, frames.size());
  }

  // Stopping mid-trace (--max-packets) still returns every mbuf, including
  // those handed to a worker and not yet sent.
  const fs::path in = temp_dir() / "dispatch-src-ip.pcap", out = temp_dir() / "dispatch-max.out.pcap",
                 js = temp_dir() / "dispatch-max.json";
  const Outcome r = dedup_fwd(eal(pcap_vdev(0, in, out), three_lcores()),
                              "--key flow --window 100 --max-packets 777 --stats-interval 0 --stats-json " + js.string());
  ASSERT_EQ(r.code, 0) << r.out;
  const nlohmann::json j = read_json(js);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["rx"], 777);
  EXPECT_EQ(j["dispatcher"]["rx"], 777);
  EXPECT_TRUE(j["invariant_holds"].get<bool>());
  EXPECT_EQ(j["mempool"]["in_use_at_exit"], 0);
  EXPECT_EQ(read_pcap(out).size(), j["tx"].get<uint64_t>());

  // Two ports that both lack what per-worker queues need: the start-up line
  // names each (it named the first only, so fixing it met the next at the
  // next start).
  const fs::path out1 = temp_dir() / "dispatch-port1.out.pcap";
  const Outcome two = dedup_fwd(eal(pcap_vdev(0, in, out) + " " + pcap_vdev(1, in, out1), three_lcores()),
                                "--key flow --window 100 --max-packets 100 --stats-interval 0");
  ASSERT_EQ(two.code, 0) << two.out;
  const size_t line = two.out.find("dispatches keys to the 2 workers in software");
  ASSERT_NE(line, std::string::npos) << two.out;
  const std::string said = two.out.substr(two.out.rfind('\n', line) + 1, line - two.out.rfind('\n', line));
  EXPECT_NE(said.find("port 0 (net_pcap)"), std::string::npos) << said;
  EXPECT_NE(said.find("; port 1 (net_pcap)"), std::string::npos) << said;
}

TEST(DedupFwd, TimeWindowFromRxTimestamps) {
  // Key A (10.0.0.1) and B (10.0.0.2); TTL 1 s. Times in microseconds.
  const Bytes a = ipv4(0x0a000001, 0xc0a80001, 17, 1, 2, "a");
  const Bytes b = ipv4(0x0a000002, 0xc0a80001, 17, 1, 2, "b");
  const uint64_t t0 = 1'700'000'000'000'000ull;
  std::vector<Frame> frames = {
      {t0, a},              // pass: first A
      {t0 + 400'000, a},    // suppressed: 0.4 s after the last A
      {t0 + 500'000, b},    // pass: first B
      {t0 + 1'300'000, a},  // suppressed: 0.9 s after the last A (insert-always refreshed it)
      {t0 + 2'600'000, a},  // pass: 1.3 s after the last A, outside the window
      {t0 + 2'700'000, b},  // pass: 2.2 s after the last B
      {t0 + 2'650'000, b},  // suppressed; its stamp steps back: the clock holds
      {t0 + 9'000'000, a},  // pass
  };
  // Build a longer trace too, so several epochs rotate.
  for (int i = 0; i < 400; ++i)
    frames.push_back({t0 + 9'000'000 + i * 37'000ull, ipv4(0x0a000100 + i % 23, 0xc0a80001, 17, 1, 2, "x")});
  const std::string common = "--key src-ip --ttl 1s --capacity 1000 --fpr 0.0001 --seed 7";
  const auto j = expect_same_as_replay("ttl", frames, common, "--time-source rx-timestamp");
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["time_regressions"], 1);
  EXPECT_EQ(j["no_timestamp"], 0);
  const std::vector<Bytes> got = read_pcap(temp_dir() / "ttl.out.pcap");
  ASSERT_GE(got.size(), 5u);
  // The hand-made head: A, B, A (expired), B, A.
  EXPECT_EQ(got[0], a);
  EXPECT_EQ(got[1], b);
  EXPECT_EQ(got[2], a);
  EXPECT_EQ(got[3], b);
  EXPECT_EQ(got[4], a);
}

// The read-back of the tx_pcap captures at exit takes only the Tx queues
// dedup_fwd forwards on: a device outside --portmask, or a tx_pcap beyond the
// queues the workers use, holds nothing yet and is no failure; and the
// user's file there is left as it was, not replaced by an empty capture.
TEST(DedupFwd, TxCapturesNotForwardedOnAreNotChecked) {
  const fs::path in = temp_dir() / "unchecked-in.pcap";
  write_pcap(in, keyed_trace(50, 3, nullptr));
  auto out = [](const char* name) { return temp_dir() / name; };
  const std::string kept = "the user's own file, not a capture of this run";
  for (const char* name : {"u0.pcap", "u2.pcap", "u0b.pcap"}) std::ofstream(out(name), std::ios::binary | std::ios::trunc) << kept;
  auto content = [&](const char* name) {
    std::ifstream f(out(name), std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(f)), {});
  };
  const Outcome outside = dedup_fwd(eal(pcap_vdev(0, in, out("u0.pcap")) + " " + pcap_vdev(1, in, out("u1.pcap")) +
                                        " " + pcap_vdev(2, in, out("u2.pcap"))),
                                    "--key flow --portmask 0x3 --exit-on-idle 200 --stats-interval 0");
  EXPECT_EQ(outside.code, 0) << outside.out;
  EXPECT_EQ(outside.out.find("the capture holds"), std::string::npos) << outside.out;
  EXPECT_EQ(content("u2.pcap"), kept) << "port 2 is outside --portmask";
  const Outcome extra = dedup_fwd(eal("--vdev net_pcap0,rx_pcap=" + in.string() + ",tx_pcap=" + out("u0.pcap").string() +
                                      ",tx_pcap=" + out("u0b.pcap").string()),
                                  "--key flow --exit-on-idle 200 --stats-interval 0");
  EXPECT_EQ(extra.code, 0) << extra.out;
  EXPECT_EQ(extra.out.find("the capture holds"), std::string::npos) << extra.out;
  EXPECT_EQ(content("u0b.pcap"), kept) << "no worker sends on the second Tx queue";
  EXPECT_NE(content("u0.pcap"), kept) << "port 0 sent: its capture replaces the file";
}

// A tx_pcap that cannot be written whole (a full disk: net_pcap writes
// through stdio and never says) exits 1 naming it, and the file keeps what
// it held before; the capture written aside stays for inspection. The disk
// is a 64 KiB tmpfs in a mount namespace of the run's own (root only).
TEST(DedupFwd, ATxCaptureThatCannotBeWrittenExitsOneAndKeepsTheFile) {
  if (shell("unshare -m true").code != 0) GTEST_SKIP() << "needs a mount namespace (root) for a small tmpfs";
  const fs::path in = temp_dir() / "full-in.pcap", dir = temp_dir() / "small-disk";
  const std::vector<Frame> frames = keyed_trace(2000, 5, nullptr);
  write_pcap(in, frames);
  fs::create_directories(dir);
  const std::string out = (dir / "out.pcap").string();
  const Outcome r = shell("unshare -m sh -c 'mount -t tmpfs -o size=64k tmpfs " + dir.string() + " && printf before > " +
                          out + " && " + DEDUP_FWD + " " + eal(pcap_vdev(0, in, out)) +
                          " -- --key flow --seed 1 --action count --exit-on-idle 200 --stats-interval 0; rc=$?; "
                          "printf \"[file: %s]\" \"$(cat " + out + ")\"; exit $rc'");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("tx_pcap " + out + ": the capture holds"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("of the " + std::to_string(frames.size()) + " packets sent to it"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[file: before]"), std::string::npos) << "the earlier file was replaced: " << r.out;
}

// A tx_pcap that is not a regular file is written as given and cannot be read
// back: the exit says how many packets went to it (tx_pcap=/dev/full lost
// them all with exit 0 and not a word), and /dev/null stays a place to discard.
TEST(DedupFwd, ATxPcapThatIsNoFileSaysWhatWasSentToIt) {
  const fs::path in = temp_dir() / "as-given-in.pcap";
  const std::vector<Frame> frames = keyed_trace(300, 9, nullptr);
  write_pcap(in, frames);
  for (const char* device : {"/dev/full", "/dev/null"}) {
    const Outcome r = dedup_fwd(eal(pcap_vdev(0, in, device)),
                                "--key flow --seed 1 --action count --exit-on-idle 200 --stats-interval 0");
    EXPECT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find(std::string("dedup_fwd: note: tx_pcap ") + device + " is not a regular file: the " +
                         std::to_string(frames.size()) + " packets sent to it were written as given and not read back"),
              std::string::npos) << r.out;
  }
}

// Standard output that will not take the summary (or the usage, the version,
// the listing) is exit 1 said on standard error: it was exit 0, silently.
TEST(DedupFwd, AFullStandardOutputExitsOne) {
  const fs::path in = temp_dir() / "stdout-in.pcap", out = temp_dir() / "stdout-out.pcap";
  write_pcap(in, keyed_trace(50, 4, nullptr));
  for (const std::string& args :
       {std::string("--help"), std::string("--version"), std::string("-- --list-filters"),
        eal(pcap_vdev(0, in, out)) + " -- --key flow --exit-on-idle 200 --stats-interval 0"}) {
    // In a group, so the helper's 2>&1 sends standard error to the pipe, not to /dev/full.
    const Outcome r = shell("{ " + std::string(DEDUP_FWD) + " " + args + " >/dev/full; }");
    EXPECT_EQ(r.code, 1) << args << "\n" << r.out;
    EXPECT_NE(r.out.find("dedup_fwd: cannot write to standard output"), std::string::npos) << args << "\n" << r.out;
  }
}

// Started with standard output closed (`>&-`), the EAL's runtime config file
// took descriptor 1: the summary was printed into that shared file and the
// run never ended (seen: minutes of CPU at --exit-on-idle 200). Descriptor 1
// is now filled before anything opens (dedup/stdout_checked.hpp): the run
// ends, says the summary was lost (exit 1), and its capture is whole.
TEST(DedupFwd, AClosedStandardOutputEndsTheRunAndSaysSo) {
  const fs::path in = temp_dir() / "closed-in.pcap", out = temp_dir() / "closed-out.pcap";
  const std::vector<Frame> frames = keyed_trace(200, 7, nullptr);
  write_pcap(in, frames);
  fs::remove(out);
  // timeout: a return of the hang fails this test instead of the suite.
  const Outcome r = shell("{ timeout -s KILL 60 " + std::string(DEDUP_FWD) + " " + eal(pcap_vdev(0, in, out)) +
                          " -- --key flow --action count --exit-on-idle 200 --stats-interval 0 >&-; }");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("dedup_fwd: cannot write to standard output"), std::string::npos) << r.out;
  EXPECT_EQ(read_pcap(out).size(), frames.size()) << r.out;
}

// Captures across 2038-01-19, when a classic pcap's 32-bit unsigned seconds
// pass 2^31: libpcap reads them signed, so agebloom-replay skipped such
// records as out of range and net_pcap's stamps came out negative. Both now
// read the unsigned seconds, and their verdicts agree across the boundary.
TEST(DedupFwd, RxTimestampsAcrossTheYear2038) {
  const Bytes a = ipv4(0x0a000001, 0xc0a80001, 17, 1, 2, "a");
  const Bytes b = ipv4(0x0a000002, 0xc0a80001, 17, 1, 2, "b");
  const uint64_t t0 = (uint64_t{1} << 31) * 1'000'000 - 500'000;  // 0.5 s before the boundary
  std::vector<Frame> frames = {
      {t0, a},              // pass
      {t0 + 900'000, a},    // suppressed: 0.9 s later, across 2^31 s
      {t0 + 1'000'000, b},  // pass
      {t0 + 2'500'000, a},  // pass: 1.6 s after the last A
      {t0 + 2'600'000, b},  // pass: 1.6 s after the last B
      {t0 + 2'700'000, b},  // suppressed
  };
  for (int i = 0; i < 200; ++i)
    frames.push_back({t0 + 3'000'000 + i * 23'000ull, ipv4(0x0a000100 + i % 17, 0xc0a80001, 17, 1, 2, "x")});
  nlohmann::json replay;
  const fs::path in = temp_dir() / "y2038.pcap";
  write_pcap(in, frames);
  const std::string common = "--key src-ip --ttl 1s --capacity 1000 --fpr 0.0001 --seed 7";
  const std::vector<bool> suppressed = replay_verdicts(in, common, &replay);
  EXPECT_EQ(replay["bad_timestamps"], 0);
  EXPECT_EQ(replay["packets"], frames.size());
  ASSERT_GE(suppressed.size(), 6u);
  EXPECT_EQ((std::vector<bool>(suppressed.begin(), suppressed.begin() + 6)),
            (std::vector<bool>{false, true, false, false, false, true}));
  const auto j = expect_same_as_replay("y2038", frames, common, "--time-source rx-timestamp");
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["time_regressions"], 0);
}

// Rx timestamps that do not go forward: a record whose microsecond field is
// out of range (agebloom-replay skips it, net_pcap hands it on far ahead) is
// named before the run and makes a finite run exit 3; stamps behind the
// clock, within a run or after a restore of the same capture's snapshot, are
// held at it and counted.
TEST(DedupFwd, RxTimestampsThatStepBackAreCountedAndSaid) {
  const uint64_t t0 = 1'700'000'000'000'000ull;
  std::vector<Frame> frames;
  for (uint32_t i = 0; i < 100; ++i) frames.push_back({t0 + i * 1000ull, ipv4(0x0a000000 + i % 10, 0xc0a80001, 17, 1, 2, "t")});
  const fs::path in = temp_dir() / "stamps.pcap", out = temp_dir() / "stamps.out.pcap", js = temp_dir() / "stamps.json",
                 snap = temp_dir() / "stamps.bin";
  write_pcap(in, frames);
  const std::string ttl = "--key src-ip --ttl 1s --capacity 1000 --time-source rx-timestamp --seed 1 "
                          "--exit-on-idle 200 --stats-interval 0 --stats-json " + js.string();
  fs::remove(snap);
  Outcome r = dedup_fwd(eal(pcap_vdev(0, in, out)), ttl + " --snapshot " + snap.string());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(read_json(js)["time_regressions"], 0);
  EXPECT_EQ(r.out.find("stepped back"), std::string::npos) << r.out;
  // The same capture after a restore: every stamp but the last (the saved
  // clock itself) is behind the saved clock.
  r = dedup_fwd(eal(pcap_vdev(0, in, out)), ttl + " --snapshot " + snap.string() + " --require-snapshot");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(read_json(js)["time_regressions"], frames.size() - 1) << r.out;
  EXPECT_NE(r.out.find("99 packets' Rx timestamps stepped back in time"), std::string::npos) << r.out;
  EXPECT_EQ(read_json(js)["suppressed"], frames.size()) << "held at the saved clock, every source is live: " << r.out;

  // Record 0's microseconds set to 0x7FFFFFFF: out of range.
  const fs::path bad = temp_dir() / "stamps-bad.pcap";
  fs::copy_file(in, bad, fs::copy_options::overwrite_existing);
  {
    std::fstream f(bad, std::ios::binary | std::ios::in | std::ios::out);
    const uint32_t usec = 0x7FFFFFFF;
    f.seekp(24 + 4);  // the file header, then the record's seconds
    f.write(reinterpret_cast<const char*>(&usec), 4);
  }
  r = dedup_fwd(eal(pcap_vdev(0, bad, out)), ttl);
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_NE(r.out.find("1 record has its timestamp fields out of range"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("had timestamps out of range (said at start)"), std::string::npos) << r.out;
  // The TSC's clock does not read the stamps: nothing to say.
  r = dedup_fwd(eal(pcap_vdev(0, bad, out)), "--key src-ip --ttl 1s --capacity 1000 --seed 1 --exit-on-idle 200 "
                                             "--stats-interval 0");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.find("out of range"), std::string::npos) << r.out;
}

TEST(DedupFwd, MalformedFramesPassUnparsedAndNeverCrash) {
  std::vector<Frame> frames;
  uint64_t ts = 1'700'000'000'000'000ull;
  auto add = [&](Bytes b) { frames.push_back({ts += 1000, std::move(b)}); };
  const Bytes good = ipv4(0x0a000001, 0x0a000002, 6, 1234, 80, "GET / HTTP/1.1\r\n\r\n");
  for (int rep = 0; rep < 2; ++rep) {  // twice: a malformed repeat must not be "suppressed"
    add(Bytes(good.begin(), good.begin() + 10));  // truncated Ethernet
    add(Bytes(good.begin(), good.begin() + 24));  // truncated IPv4 header
    Bytes ihl = good;
    ihl[14] = 0x43;  // IHL 3
    add(ihl);
    Bytes len = good;
    len[16] = len[17] = 0;  // total length 0
    add(len);
    Bytes tcp = good;
    tcp.resize(14 + 20 + 8);  // TCP header cut
    tcp[16] = 0;
    tcp[17] = 28;
    add(tcp);
    // IPv6 with 12 hop-by-hop/destination-options headers (a hostile loop).
    Bytes v6 = ethernet(0x86dd);
    const int ext = 12;
    v6.insert(v6.end(), {0x60, 0, 0, 0});
    put16(v6, static_cast<uint16_t>(ext * 8 + 8));
    v6.insert(v6.end(), {0, 64});  // next header: hop-by-hop
    for (int i = 0; i < 32; ++i) v6.push_back(static_cast<uint8_t>(i));
    for (int i = 0; i < ext; ++i) v6.insert(v6.end(), {static_cast<uint8_t>(i + 1 < ext ? 60 : 17), 0, 1, 4, 0, 0, 0, 0});
    v6.insert(v6.end(), {0, 1, 0, 2, 0, 8, 0, 0});
    add(v6);
    Bytes v6cut = v6;
    v6cut.resize(14 + 40 + 4);  // extension header runs past the frame
    add(v6cut);
    // Three VLAN tags.
    Bytes vlan = ethernet(0x88a8);
    vlan.insert(vlan.end(), {0, 1, 0x81, 0x00, 0, 2, 0x81, 0x00, 0, 3, 0x08, 0x00});
    vlan.insert(vlan.end(), good.begin() + 14, good.end());
    add(vlan);
    add(ipv4(0x0a000009, 0x0a000002, 6, 1234, 80, ""));  // zero-length TCP payload
    add(ipv4(0x0a000009, 0x0a000002, 17, 1234, 80, ""));  // zero-length UDP payload
    add(Bytes(1, 0xff));                                  // one byte
  }
  for (const char* key : {"src-ip", "dst-ip", "flow", "click", "packet"}) {
    SCOPED_TRACE(key);
    const auto j = expect_same_as_replay(std::string("malformed-") + key, frames,
                                         std::string("--key ") + key + " --window 1000 --seed 3");
    ASSERT_FALSE(j.is_discarded());
    // src-ip/dst-ip/packet stop at the IP header, so the cut TCP header and the IPv6
    // chain still give them a key (documented in key_extract.hpp); flow and
    // click must refuse those too. Either way every frame was forwarded (the
    // verdict check above) and the reasons match replay's.
    const std::string k = key;
    const uint64_t unparsed = j["unparsed"];
    const uint64_t expected = k == "click" ? 22u : k == "flow" ? 18u : 14u;
    EXPECT_EQ(unparsed, expected);
    const auto& why = j["unparsed_reasons"];
    for (const char* r : {"truncated_l2", "truncated_l3", "bad_ipv4_ihl", "bad_ipv4_length", "too_many_vlans"})
      EXPECT_TRUE(why.contains(r)) << r;
    if (k == "flow") {
      EXPECT_TRUE(why.contains("ipv6_ext_chain_too_long"));
      EXPECT_TRUE(why.contains("truncated_l4"));
    }
  }
}

// Load with nothing lost (hardening): ten million packets through net_pcap
// (the trace looped in memory, the output to /dev/null) on one lcore, and a
// million through the software dispatcher with two workers (three busy
// lcores share this machine's two CPUs, so that run is slow, not lossy). At
// exit every packet is accounted for (rx = tx + suppressed + mirrored +
// dropped_error) and every mbuf is back in the pool.
TEST(DedupFwd, TenMillionPacketsNothingLost) {
  const fs::path in = temp_dir() / "load.pcap", js = temp_dir() / "load.json";
  write_pcap(in, keyed_trace(500, 17, nullptr));
  for (const char* lcores : {"0", "three"}) {
    SCOPED_TRACE(lcores);
    const uint64_t packets = std::string(lcores) == "0" ? 10'000'000 : 1'000'000;
    const std::string vdev = "--vdev net_pcap0,rx_pcap=" + in.string() + ",tx_pcap=/dev/null,infinite_rx=1";
    const Outcome r = dedup_fwd(eal(vdev, std::string(lcores) == "0" ? "0" : three_lcores()),
                                "--key flow --window 100000 --seed 1 --max-packets " + std::to_string(packets) +
                                    " --stats-interval 0 --stats-json " + js.string());
    ASSERT_EQ(r.code, 0) << r.out;
    const nlohmann::json j = read_json(js);
    ASSERT_FALSE(j.is_discarded()) << r.out;
    EXPECT_EQ(j["rx"], packets);
    EXPECT_TRUE(j["invariant_holds"].get<bool>());
    EXPECT_EQ(j["rx"].get<uint64_t>(), j["tx"].get<uint64_t>() + j["suppressed"].get<uint64_t>() +
                                           j["mirrored"].get<uint64_t>() + j["dropped_error"].get<uint64_t>());
    EXPECT_EQ(j["mempool"]["in_use_at_exit"], 0);
    // 500 keys looped: every keyed packet after the first pass is a repeat
    // (the trace's unparsed frames pass untouched).
    EXPECT_GE(j["suppressed"].get<uint64_t>() + 2000, j["keyed"].get<uint64_t>()) << "the looped trace repeats its keys";
    std::printf("%llu packets, %s: %.2f s, %.0f cycles/packet\n", static_cast<unsigned long long>(packets), lcores,
                j["seconds"].get<double>(), j["cycles_per_packet"].get<double>());
  }
}

TEST(DedupFwd, MaxPacketsStopsExactly) {
  const auto frames = keyed_trace(200, 5, nullptr);
  const fs::path in = temp_dir() / "max.pcap", out = temp_dir() / "max.out.pcap", js = temp_dir() / "max.json";
  write_pcap(in, frames);
  const Outcome r = dedup_fwd(eal(pcap_vdev(0, in, out)),
                              "--max-packets 77 --stats-interval 0 --stats-json " + js.string());
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = read_json(js);
  EXPECT_EQ(j["rx"], 77);
  EXPECT_EQ(j["mempool"]["in_use_at_exit"], 0);
}

TEST(DedupFwd, CountActionForwardsEverythingAndMirrorSendsDuplicatesAway) {
  const auto frames = keyed_trace(200, 9, nullptr);
  const fs::path in = temp_dir() / "act.pcap", out = temp_dir() / "act.out.pcap", js = temp_dir() / "act.json";
  write_pcap(in, frames);
  Outcome r = dedup_fwd(eal(pcap_vdev(0, in, out)),
                        "--action count --seed 1 --exit-on-idle 200 --stats-interval 0 --stats-json " + js.string());
  ASSERT_EQ(r.code, 0) << r.out;
  auto j = read_json(js);
  EXPECT_EQ(read_pcap(out).size(), frames.size());
  EXPECT_EQ(j["tx"], frames.size());
  EXPECT_GT(j["duplicates"].get<uint64_t>(), 0u);
  EXPECT_EQ(j["suppressed"], 0);

  // Two ports: 0 reads the trace and forwards back out of itself, duplicates go to 1.
  const fs::path empty = temp_dir() / "empty.pcap", mirror = temp_dir() / "mirror.out.pcap";
  write_pcap(empty, {});
  r = dedup_fwd(eal(pcap_vdev(0, in, out) + " " + pcap_vdev(1, empty, mirror)),
                "--same-port --action mirror:1 --seed 1 --exit-on-idle 200 --stats-interval 0 --stats-json " +
                    js.string());
  ASSERT_EQ(r.code, 0) << r.out;
  j = read_json(js);
  const uint64_t dups = j["duplicates"];
  EXPECT_EQ(j["mirrored"], dups);
  EXPECT_EQ(read_pcap(mirror).size(), dups);
  EXPECT_EQ(read_pcap(out).size(), frames.size() - dups);
  EXPECT_EQ(j["mempool"]["in_use_at_exit"], 0);
  EXPECT_EQ(r.out.find("leave together"), std::string::npos) << r.out;
  // Mirrored to the one port everything leaves by: the same as count, said.
  r = dedup_fwd(eal(pcap_vdev(0, in, out)), "--action mirror:0 --seed 1 --exit-on-idle 200 --stats-interval 0");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("warning: --action mirror:0 is the port every packet is forwarded out of"), std::string::npos)
      << r.out;
}

// The telemetry commands, asked of a running dedup_fwd over DPDK's telemetry
// socket as dpdk-telemetry.py does (SOCK_SEQPACKET, one JSON reply per
// command): the counters move while it forwards, the filter is described, and
// SIGTERM still ends the run cleanly with every mbuf returned.
class Telemetry {
 public:
  explicit Telemetry(const std::string& prefix) {
    const char* xdg = std::getenv("XDG_RUNTIME_DIR");
    const fs::path dirs[] = {fs::path("/var/run/dpdk") / prefix,
                             fs::path(xdg != nullptr ? xdg : "/tmp") / "dpdk" / prefix};
    for (int tries = 0; tries < 200 && fd_ < 0; ++tries) {
      for (const fs::path& d : dirs) {
        const fs::path sock = d / "dpdk_telemetry.v2";
        if (!fs::exists(sock)) continue;
        const int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", sock.c_str());
        if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
          fd_ = fd;
          hello_ = receive();
          break;
        }
        close(fd);
      }
      if (fd_ < 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  ~Telemetry() {
    if (fd_ >= 0) close(fd_);
  }
  bool connected() const { return fd_ >= 0; }
  const nlohmann::json& hello() const { return hello_; }
  nlohmann::json ask(const std::string& command) {
    if (send(fd_, command.data(), command.size(), 0) < 0) return {};
    nlohmann::json reply = receive();
    return reply.contains(command) ? reply[command] : nlohmann::json{};
  }

 private:
  nlohmann::json receive() {
    std::vector<char> buf(1 << 16);
    ssize_t n;
    do n = recv(fd_, buf.data(), buf.size(), 0);
    while (n < 0 && errno == EINTR);
    if (n <= 0) return {};
    return nlohmann::json::parse(std::string(buf.data(), static_cast<size_t>(n)), nullptr, false);
  }
  int fd_ = -1;
  nlohmann::json hello_;
};

// A dedup_fwd forwarding a looping trace (infinite_rx) in the background,
// and a telemetry connection to it once its commands answer.
class LiveRun {
 public:
  LiveRun(const std::string& name, const std::vector<Frame>& frames, const std::string& lcores, const std::string& args) {
    const fs::path in = temp_dir() / (name + ".pcap");
    json_ = temp_dir() / (name + ".json");
    log_ = temp_dir() / (name + ".log");
    write_pcap(in, frames);
    static std::atomic<int> n{0};
    prefix_ = "agebloom-tel" + std::to_string(getpid()) + "-" + std::to_string(n++);
    const std::string l = lcores.find('@') == std::string::npos ? " -l " + lcores : " --lcores '" + lcores + "'";
    const std::string cmd = std::string(DEDUP_FWD) + " --no-huge --no-pci -m 512 --log-level=lib.eal:error" +
                            " --file-prefix " + prefix_ + l + " --vdev net_pcap0,rx_pcap=" + in.string() +
                            ",infinite_rx=1 -- " + args + " --stats-json " + json_.string() + " >" +
                            log_.string() + " 2>&1";
    pid_ = fork();
    if (pid_ == 0) {
      execl("/bin/sh", "sh", "-c", ("exec " + cmd).c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    tel_ = std::make_unique<Telemetry>(prefix_);
    // The socket opens with the EAL; dedup_fwd registers its commands once
    // its ports are up (until then they answer null).
    for (int tries = 0; tries < 200 && tel_->connected() && !first_.is_object(); ++tries) {
      first_ = tel_->ask("/dedup_fwd/stats");
      if (!first_.is_object()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  ~LiveRun() {
    if (pid_ > 0) stop();
    std::error_code ec;
    fs::remove_all(fs::path("/var/run/dpdk") / prefix_, ec);
  }
  bool started() const { return pid_ > 0 && tel_->connected() && first_.is_object(); }
  Telemetry& tel() { return *tel_; }
  const std::string& prefix() const { return prefix_; }
  const nlohmann::json& first_stats() const { return first_; }
  // For a failure message when an answer is not what was asked: whether
  // dedup_fwd still runs (and how it ended if not), and its log's tail.
  std::string why_silent() {
    std::string why;
    int status = 0;
    const pid_t r = pid_ > 0 ? waitpid(pid_, &status, WNOHANG) : -1;
    if (r == 0)
      why = "dedup_fwd still runs";
    else if (r == pid_) {
      why = "dedup_fwd ended, status " + std::to_string(status);
      pid_ = -1;
    } else
      why = "dedup_fwd not running";
    std::ifstream in(log_);
    const std::string log((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return why + "; log tail:\n" + log.substr(log.size() > 2000 ? log.size() - 2000 : 0);
  }
  // SIGTERM; the exit status and the stats JSON it wrote.
  std::pair<int, nlohmann::json> stop() {
    tel_.reset();
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return {status, read_json(json_)};
  }

 private:
  std::string prefix_;
  fs::path json_, log_;
  pid_t pid_ = -1;
  std::unique_ptr<Telemetry> tel_;
  nlohmann::json first_;
};

// Telemetry numbers are JSON numbers (a figure sent as a string, e.g.
// "0.01", is what it used to do), and fractions are scaled integers whose
// unit the name says.
void expect_numbers_as_numbers(const nlohmann::json& reply) {
  for (const auto& [name, value] : reply.items()) {
    if (value.is_object()) {
      expect_numbers_as_numbers(value);
      continue;
    }
    if (!value.is_string()) continue;
    const std::string v = value.get<std::string>();
    char* end = nullptr;
    std::strtod(v.c_str(), &end);
    EXPECT_FALSE(!v.empty() && end == v.c_str() + v.size()) << name << " is a number sent as the string \"" << v << "\"";
  }
}

TEST(DedupFwd, TelemetryCommandsAnswerWhileItRuns) {
  LiveRun run("tel", keyed_trace(300, 5, nullptr), "0",
              "--key src-ip --window 1000 --seed 1 --stats-interval 0 --bpf 'not arp'");
  ASSERT_TRUE(run.started()) << "no telemetry from dedup_fwd";
  EXPECT_TRUE(run.tel().hello().contains("version")) << run.tel().hello().dump();
  const nlohmann::json& a = run.first_stats();
  for (const char* k : {"rx", "tx", "keyed", "duplicates", "suppressed", "unparsed", "lcores", "bpf_unmatched",
                        "suppression_ratio_ppm", "malformed", "dropped_error"})
    EXPECT_TRUE(a.contains(k) && a[k].is_number_unsigned()) << k << " missing from " << a.dump();
  EXPECT_EQ(a.value("lcores", 0), 1);
  // Telemetry answers (zeros) from the moment dedup_fwd registers it, which is
  // before its worker forwards the first burst: how long that takes is the
  // machine's (a sanitizer build on a loaded machine took over 300 ms). So ask
  // until the figures below have moved, for up to 20 s, then check them.
  nlohmann::json b;
  for (const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    b = run.tel().ask("/dedup_fwd/stats");
    if (!b.is_object() || std::chrono::steady_clock::now() > deadline) break;
    if (b.value("rx", uint64_t{0}) > a.value("rx", uint64_t{0}) && b.value("suppressed", uint64_t{0}) > 0 &&
        b.value("bpf_unmatched", uint64_t{0}) > 0)
      break;
  }
  ASSERT_TRUE(b.is_object()) << "no stats on a later ask (" << b.dump() << "): " << run.why_silent();
  EXPECT_GT(b.value("rx", uint64_t{0}), a.value("rx", uint64_t{0})) << "counters must move while it forwards";
  EXPECT_GT(b.value("suppressed", uint64_t{0}), 0u) << "the looping trace repeats its keys";
  EXPECT_GT(b.value("bpf_unmatched", uint64_t{0}), 0u) << "the trace's ARP frames pass --bpf 'not arp' untouched";
  const double ratio = b.value("duplicates", 0.0) / b.value("keyed", 1.0);
  EXPECT_NEAR(b.value("suppression_ratio_ppm", uint64_t{0}) / 1e6, ratio, 2e-6) << b.dump();
  // The port as DPDK counts it, by the names /ethdev/stats uses.
  ASSERT_TRUE(b.contains("port0") && b["port0"].is_object()) << b.dump();
  for (const char* k : {"ipackets", "opackets", "imissed", "rx_nombuf", "ierrors", "oerrors"})
    EXPECT_TRUE(b["port0"].contains(k) && b["port0"][k].is_number_unsigned()) << k << ": " << b.dump();
  EXPECT_GE(b["port0"].value("ipackets", uint64_t{0}), b.value("rx", uint64_t{0}));
  expect_numbers_as_numbers(b);
  const nlohmann::json f = run.tel().ask("/dedup_fwd/filter");
  ASSERT_TRUE(f.is_object()) << f.dump();
  EXPECT_EQ(f.value("key", ""), "src-ip");
  EXPECT_EQ(f.value("policy", ""), "insert-always");
  EXPECT_EQ(f.value("window_insertions", uint64_t{0}), 1000u);
  EXPECT_EQ(f.value("effective_window_insertions", uint64_t{0}), 1000u);
  EXPECT_EQ(f.value("window_kind", ""), "count");
  EXPECT_EQ(f.value("fpr_target_ppb", uint64_t{0}), 10'000'000u);
  EXPECT_GT(f.value("model_fpr_ppb", uint64_t{0}), 0u);
  EXPECT_FALSE(f.value("name", "").empty());
  EXPECT_GT(f.value("bytes_per_lcore", uint64_t{0}), 0u);
  expect_numbers_as_numbers(f);
  const auto [status, j] = run.stop();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  EXPECT_GT(j["rx"].get<uint64_t>(), 0u);
  EXPECT_EQ(j["mempool"]["in_use_at_exit"], 0);
}

// Telemetry asked without pause while dedup_fwd shuts down: the handlers
// read the workers' stats, which are freed before the EAL stops the
// telemetry thread, so close_telemetry() shuts them out first. Every answer
// is the figures or nothing; the run ends cleanly (and the sanitizer build
// sees no use after free).
TEST(DedupFwd, TelemetryAskedThroughShutdownIsSafe) {
  LiveRun run("tel-close", keyed_trace(300, 5, nullptr), "0", "--key src-ip --window 1000 --seed 1 --stats-interval 0");
  ASSERT_TRUE(run.started()) << "no telemetry from dedup_fwd";
  std::atomic<bool> done{false};
  std::atomic<int> answered{0};
  std::thread asker([&] {
    Telemetry tel(run.prefix());
    while (!done.load() && tel.connected()) {
      const nlohmann::json a = tel.ask("/dedup_fwd/filter");
      const nlohmann::json b = tel.ask("/dedup_fwd/stats");
      if (a.is_object() && b.is_object()) answered.fetch_add(1);
      else if (a.is_null() && b.is_null()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const auto [status, j] = run.stop();
  done.store(true);
  asker.join();
  EXPECT_GT(answered.load(), 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  EXPECT_EQ(j["mempool"]["in_use_at_exit"], 0);
}

// The filters' own figures reach telemetry only as their workers publish
// them (a worker's filter is read by no other thread): /dedup_fwd/filter asks
// every worker and waits for their answers. With no stats line to ask
// (--stats-interval 0) and two workers behind the dispatcher, a flood under
// keep-fpr still shows in it as it happens: early rotations that grow from
// one ask to the next, and the window they shorten.
TEST(DedupFwd, TelemetryFilterFiguresArePublishedByTheWorkers) {
  LiveRun run("tel-flood", keyed_trace(300, 5, nullptr), three_lcores(),
              "--key flow --filter guarded-epoch --ttl 1s --capacity 1000 --on-flood keep-fpr --seed 1 "
              "--stats-interval 0");
  ASSERT_TRUE(run.started()) << "no telemetry from dedup_fwd";
  EXPECT_EQ(run.first_stats().value("lcores", 0), 2);
  nlohmann::json a = nlohmann::json::object();
  for (int tries = 0; tries < 50 && a.value("early_rotations", uint64_t{0}) == 0; ++tries) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    a = run.tel().ask("/dedup_fwd/filter");
    if (!a.is_object()) a = nlohmann::json::object();
  }
  ASSERT_GT(a.value("early_rotations", uint64_t{0}), 0u) << a.dump();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const nlohmann::json b = run.tel().ask("/dedup_fwd/filter");
  EXPECT_GT(b.value("early_rotations", uint64_t{0}), a.value("early_rotations", uint64_t{0})) << b.dump();
  EXPECT_EQ(b.value("window_ns", uint64_t{0}), 1'000'000'000u);
  EXPECT_GT(b.value("effective_window_ns", uint64_t{0}), 0u) << b.dump();
  EXPECT_LT(b.value("effective_window_ns", uint64_t{0}), 1'000'000'000u) << "epochs ending early shorten it";
  expect_numbers_as_numbers(b);
  const auto [status, j] = run.stop();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  ASSERT_FALSE(j.is_discarded());
  double early = 0;
  for (const auto& lc : j["lcores"]) early += lc["filter_stats"]["early_rotations"].get<double>();
  EXPECT_GE(early, static_cast<double>(b.value("early_rotations", uint64_t{0})));
  // And in total, as agebloom-replay's JSON has them: filter.stats.
  ASSERT_TRUE(j["filter"].contains("stats")) << j["filter"].dump();
  EXPECT_EQ(j["filter"]["stats"]["early_rotations"].get<double>(), early) << j["filter"].dump();
  EXPECT_EQ(j["mempool"]["in_use_at_exit"], 0);
}

// --snapshot: a restart keeps the window. 200 sources seen before the
// restart are all suppressed after it (and none without the snapshot); a
// missing, damaged, foreign, crafted or mismatched snapshot is refused with its reason
// and the run starts empty, or stops (exit 1) with --require-snapshot.
std::vector<Frame> sources(uint32_t first, unsigned n) {
  std::vector<Frame> t;
  for (unsigned i = 0; i < n; ++i) t.push_back({1000u + i, ipv4(0x0a000000 + first + i, 0x0a640001, 17, 1000, 53, "q")});
  return t;
}

TEST(DedupFwd, SnapshotKeepsTheWindowAcrossARestart) {
  const fs::path a = temp_dir() / "snap-a.pcap", out = temp_dir() / "snap.out.pcap", snap = temp_dir() / "snap.bin",
                 js = temp_dir() / "snap.json";
  write_pcap(a, sources(0, 200));
  fs::remove(snap);
  // (--key src-ip is the default: a case's --key flow is the only one given.)
  const std::string common = " --window 1000 --seed 5eed --exit-on-idle 200 --stats-interval 0 --stats-json " +
                             js.string();
  Outcome r = dedup_fwd(eal(pcap_vdev(0, a, out)), "--snapshot " + snap.string() + common);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("no snapshot"), std::string::npos) << r.out;
  ASSERT_TRUE(fs::exists(snap)) << r.out;
  EXPECT_FALSE(fs::exists(snap.string() + ".tmp"));
  EXPECT_EQ(read_json(js)["suppressed"], 0);
  // The same sources again, after the restart: every one a repeat.
  r = dedup_fwd(eal(pcap_vdev(0, a, out)), "--snapshot " + snap.string() + " --require-snapshot" + common);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("restored"), std::string::npos) << r.out;
  EXPECT_EQ(read_json(js)["suppressed"], 200) << r.out;
  // Without the snapshot the window starts empty.
  r = dedup_fwd(eal(pcap_vdev(0, a, out)), common);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(read_json(js)["suppressed"], 0);

  // Refusals, each with its reason; the run goes on empty, or stops with --require-snapshot.
  std::ifstream in(snap, std::ios::binary);
  const std::string good((std::istreambuf_iterator<char>(in)), {});
  struct Case {
    const char* name;
    std::string bytes;
    std::string extra;  // options that change the filter
    const char* says;
  };
  std::string flipped = good, foreign = good;
  flipped[flipped.size() - 7] ^= 0x40;  // a bit in the last worker's filter state
  foreign[16 + 8 + 8] ^= 0x7f;          // the first image's format field (file header 16, length 8, magic 8)
  // A file of the previous version (its images did not name the key): another format, not another filter.
  std::string older = good;
  const uint32_t v1 = 1;
  std::memcpy(older.data() + 8, &v1, sizeof v1);
  // Crafted past the checksum: every byte of the filter's state set, the
  // image resealed (its checksum is unkeyed). Its counts and indices are out
  // of range, so it is refused on its state, before a byte reaches the arena.
  std::string crafted = good;
  {
    constexpr size_t at = 16 + 8;  // the first image: after the file header and its length
    uint64_t len = 0, state = 0;
    std::memcpy(&len, crafted.data() + 16, sizeof len);
    std::memcpy(&state, crafted.data() + at + SNAPSHOT_STATE_BYTES_AT, sizeof state);
    ASSERT_EQ(len, SNAPSHOT_HEADER_BYTES + state) << "the snapshot header's layout changed";
    auto* image = reinterpret_cast<unsigned char*>(crafted.data() + at);
    std::string resealed_good = good;
    reseal_snapshot(reinterpret_cast<unsigned char*>(resealed_good.data() + at), len);
    ASSERT_EQ(resealed_good, good) << "resealing a valid image must change nothing";
    std::memset(image + SNAPSHOT_HEADER_BYTES, 0xff, state);
    reseal_snapshot(image, len);
  }
  const Case cases[] = {{"truncated", good.substr(0, good.size() / 2), "", "damaged"},
                        {"flipped", flipped, "", "damaged"},
                        {"foreign", foreign, "", "another format"},
                        {"version 1", older, "", "another format"},
                        {"text", "not a snapshot at all\n", "", "not an agebloom snapshot"},
                        {"crafted", crafted, "", "filter state is impossible"},
                        {"mismatch", good, " --fpr 0.001", "another filter"},
                        // The same plan over other keys, or another policy: what the filter
                        // holds is not this run's (its src-ip keys read as flows would answer wrongly).
                        {"another key", good, " --key flow", "also name the key (--key and its options)"},
                        {"another policy", good, " --policy insert-on-miss", "and the --policy"}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    fs::remove(snap.string() + ".refused");
    std::ofstream(snap, std::ios::binary | std::ios::trunc) << c.bytes;
    r = dedup_fwd(eal(pcap_vdev(0, a, out)), "--snapshot " + snap.string() + common + c.extra);
    EXPECT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("refused"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(c.says), std::string::npos) << r.out;
    EXPECT_EQ(read_json(js)["suppressed"], 0) << "a refused snapshot starts empty";
    // The run saved over FILE at exit; the refused one is kept beside it.
    std::ifstream aside(snap.string() + ".refused", std::ios::binary);
    EXPECT_EQ(std::string((std::istreambuf_iterator<char>(aside)), {}), c.bytes) << "not kept as FILE.refused";
    EXPECT_NE(r.out.find("kept as " + snap.string() + ".refused"), std::string::npos) << r.out;
    std::ofstream(snap, std::ios::binary | std::ios::trunc) << c.bytes;
    r = dedup_fwd(eal(pcap_vdev(0, a, out)), "--snapshot " + snap.string() + " --require-snapshot" + common + c.extra);
    EXPECT_EQ(r.code, 1) << r.out;
  }
  // A second refusal keeps the first one's copy: FILE.refused.1 beside FILE.refused.
  std::ofstream(snap, std::ios::binary | std::ios::trunc) << "not a snapshot, the second time\n";
  r = dedup_fwd(eal(pcap_vdev(0, a, out)), "--snapshot " + snap.string() + common);
  EXPECT_NE(r.out.find("kept as " + snap.string() + ".refused.1"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::exists(snap.string() + ".refused")) << "the first refused copy is kept";
  fs::remove(snap.string() + ".refused");
  fs::remove(snap.string() + ".refused.1");
  fs::remove(snap);
  r = dedup_fwd(eal(pcap_vdev(0, a, out)), "--snapshot " + snap.string() + " --require-snapshot" + common);
  EXPECT_EQ(r.code, 1) << "a missing snapshot under --require-snapshot: " << r.out;

  // Without --seed (a random, secret seed per run) a restart still restores:
  // it takes the seed the snapshot was taken under.
  const std::string unseeded_any_window = " --exit-on-idle 200 --stats-interval 0 --stats-json " + js.string() +
                                          " --snapshot " + snap.string();
  const std::string unseeded = unseeded_any_window + " --window 1000";
  fs::remove(snap);
  r = dedup_fwd(eal(pcap_vdev(0, a, out)), unseeded);
  ASSERT_EQ(r.code, 0) << r.out;
  r = dedup_fwd(eal(pcap_vdev(0, a, out)), unseeded + " --require-snapshot");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("with the secret seed it was taken under"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("seed from the snapshot (secret)"), std::string::npos) << r.out;
  EXPECT_EQ(read_json(js)["suppressed"], 200) << r.out;
  EXPECT_FALSE(read_json(js).contains("seed")) << "the adopted seed stays secret";
  // Refused after its seed was read (another window): the run starts empty
  // under its own drawn seed, and does not say it took the snapshot's.
  r = dedup_fwd(eal(pcap_vdev(0, a, out)), unseeded_any_window + " --window 5000");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("refused"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("seed from the snapshot"), std::string::npos) << r.out;
  EXPECT_EQ(read_json(js)["suppressed"], 0) << r.out;
  fs::remove(snap.string() + ".refused");
}

// A time window is restored against the clock: right after a restart the
// keys are still live; once the process was down longer than the TTL, what
// expired meanwhile is gone.
TEST(DedupFwd, SnapshotOfATimeWindowHonoursTheTimeDown) {
  const fs::path a = temp_dir() / "snapt.pcap", out = temp_dir() / "snapt.out.pcap", snap = temp_dir() / "snapt.bin",
                 js = temp_dir() / "snapt.json";
  write_pcap(a, sources(0, 200));
  fs::remove(snap);
  const std::string common = " --key src-ip --ttl 3s --capacity 10000 --filter guarded-epoch --seed 5eed "
                             "--exit-on-idle 200 --stats-interval 0 --snapshot " + snap.string() + " --stats-json " +
                             js.string();
  Outcome r = dedup_fwd(eal(pcap_vdev(0, a, out)), common);
  ASSERT_EQ(r.code, 0) << r.out;
  r = dedup_fwd(eal(pcap_vdev(0, a, out)), common + " --require-snapshot");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(read_json(js)["suppressed"], 200) << "seconds after the first run, every source is still live: " << r.out;
  std::this_thread::sleep_for(std::chrono::milliseconds(4500));  // down longer than the 3 s TTL (+ one epoch)
  r = dedup_fwd(eal(pcap_vdev(0, a, out)), common + " --require-snapshot");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(read_json(js)["suppressed"], 0) << "expired while dedup_fwd was down: " << r.out;
}

// A restart that sees no traffic saves the clock it restored (plus the time
// down), not 0: a clock saved behind the filter's own would freeze its
// epochs after the next restore (every advance "time going backwards", the
// keys kept past their TTL).
TEST(DedupFwd, SnapshotWithoutTrafficKeepsTheRestoredClock) {
  const fs::path a = temp_dir() / "quiet.pcap", empty = temp_dir() / "quiet-empty.pcap",
                 out = temp_dir() / "quiet.out.pcap", snap = temp_dir() / "quiet.bin";
  write_pcap(a, sources(0, 50));
  write_pcap(empty, {});
  fs::remove(snap);
  const std::string common = " --key src-ip --ttl 30s --capacity 1000 --seed 5eed --stats-interval 0 --snapshot " +
                             snap.string();
  auto saved_clock = [](const Outcome& r) {
    const size_t at = r.out.find("its time window's clock at ");
    EXPECT_NE(at, std::string::npos) << r.out;
    return at == std::string::npos ? -1.0 : std::stod(r.out.substr(at + 27));
  };
  Outcome r = dedup_fwd(eal(pcap_vdev(0, a, out)), common + " --exit-on-idle 600");
  ASSERT_EQ(r.code, 0) << r.out;
  const double first = saved_clock(r);
  EXPECT_GT(first, 0.5) << "idle polls moved the clock to the exit: " << r.out;
  r = dedup_fwd(eal(pcap_vdev(0, empty, out)), common + " --exit-on-idle 200 --require-snapshot");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("restored"), std::string::npos) << r.out;
  EXPECT_GE(saved_clock(r), first) << r.out;
}

// A restored time window on the TSC clock is advanced by idle polls from the
// start, not only once traffic comes back: a restart with no traffic for
// longer than the TTL ends with nothing left in the filter (the keys of the
// first run cleared while the port was quiet, not inside the next burst).
TEST(DedupFwd, IdlePollsAdvanceARestoredTimeWindow) {
  const fs::path a = temp_dir() / "restidle.pcap", empty = temp_dir() / "restidle-empty.pcap",
                 out = temp_dir() / "restidle.out.pcap", snap = temp_dir() / "restidle.bin",
                 js = temp_dir() / "restidle.json";
  write_pcap(a, sources(0, 300));
  write_pcap(empty, {});
  fs::remove(snap);
  const std::string common = " --key src-ip --filter interleaved --ttl 1s --capacity 1000 --seed 5eed "
                             "--stats-interval 0 --snapshot " + snap.string() + " --stats-json " + js.string();
  auto fill = [&] {
    const nlohmann::json j = read_json(js);
    EXPECT_FALSE(j.is_discarded());
    return j.is_discarded() ? -1.0 : j["lcores"][0]["fill_ratio"].get<double>();
  };
  Outcome r = dedup_fwd(eal(pcap_vdev(0, a, out)), common + " --exit-on-idle 100");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_GT(fill(), 0.0) << "the first run's keys are saved";
  r = dedup_fwd(eal(pcap_vdev(0, empty, out)), common + " --exit-on-idle 1500 --require-snapshot");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("restored"), std::string::npos) << r.out;
  EXPECT_EQ(fill(), 0.0) << r.out;
}

// tlbf over a budget too small for its rate: the exhausted budget is said at
// exit once, as a warning (not "warning: WARNING"), and counted in filter.stats.
TEST(DedupFwd, AnExhaustedBudgetIsSaidOnce) {
  const fs::path a = temp_dir() / "budget.pcap", out = temp_dir() / "budget.out.pcap", js = temp_dir() / "budget.json";
  write_pcap(a, sources(0, 2000));
  const Outcome r = dedup_fwd(eal(pcap_vdev(0, a, out)),
                              "--key src-ip --filter tlbf --ttl 10s --capacity 20 --time-source rx-timestamp --seed 1 "
                              "--exit-on-idle 200 --stats-interval 0 --stats-json " + js.string());
  ASSERT_EQ(r.code, 0) << r.out;
  const nlohmann::json j = read_json(js);
  ASSERT_FALSE(j.is_discarded());
  const double exhausted = j["filter"]["stats"]["budget_saturations"].get<double>();
  ASSERT_GT(exhausted, 0) << j["filter"].dump();
  char want[96];
  std::snprintf(want, sizeof want, "dedup_fwd: warning: filter budget exhausted %.0f times", exhausted);
  EXPECT_NE(r.out.find(want), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("WARNING"), std::string::npos) << r.out;
}

// Killed mid-run (SIGKILL: no exit path runs), the last periodic snapshot is
// whole: the next run restores it.
TEST(DedupFwd, SnapshotSurvivesSigkill) {
  const fs::path a = temp_dir() / "kill.pcap", snap = temp_dir() / "kill.bin", empty = temp_dir() / "kill-empty.pcap",
                 out = temp_dir() / "kill.out.pcap";
  write_pcap(a, sources(0, 300));
  write_pcap(empty, {});
  fs::remove(snap);
  static std::atomic<int> n{0};
  const std::string prefix = "agebloom-kill" + std::to_string(getpid()) + "-" + std::to_string(n++);
  const std::string cmd = std::string(DEDUP_FWD) + " --no-huge --no-pci -m 512 --log-level=lib.eal:error" +
                          " --file-prefix " + prefix + " -l 0 --vdev net_pcap0,rx_pcap=" + a.string() +
                          ",infinite_rx=1 -- --key src-ip --window 1000 --seed 5eed --stats-interval 0 --snapshot " +
                          snap.string() + " --snapshot-interval 1 >" + (temp_dir() / "kill.log").string() + " 2>&1";
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", ("exec " + cmd).c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // Wait for two snapshots' worth of time, then kill it hard.
  for (int i = 0; i < 100 && !fs::exists(snap); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::this_thread::sleep_for(std::chrono::milliseconds(1300));
  kill(pid, SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  std::error_code ec;
  fs::remove_all(fs::path("/var/run/dpdk") / prefix, ec);
  ASSERT_TRUE(fs::exists(snap)) << "no periodic snapshot was written";
  const Outcome r = dedup_fwd(eal(pcap_vdev(0, empty, out)), "--key src-ip --window 1000 --seed 5eed --exit-on-idle 100 "
                                                            "--stats-interval 0 --require-snapshot --snapshot " +
                                                                snap.string());
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("restored"), std::string::npos) << r.out;
}

TEST(DedupFwd, BadCommandLinesExit2WithAMessage) {
  const fs::path in = temp_dir() / "bad.pcap", out = temp_dir() / "bad.out.pcap";
  write_pcap(in, keyed_trace(5, 1, nullptr));
  const char* cases[] = {
      "--key bogus",
      "--window 0",
      "--window 10 --ttl 1s",
      "--ttl 5parsecs",
      "--fpr 1.5",
      "--policy sometimes",
      "--action mirror:x",
      "--action explode",
      "--capacity 10",
      "--time-source rx-timestamp",
      "--time-source sundial --ttl 1s",
      "--click-param adid",
      "--portmask 0",
      "--portmask 0x4",
      "--action mirror:3",
      "--seed xyz",
      "--no-such-option",
      "--window",
      "--filter no-such-filter",
      "--window 100000000 --fpr 0.0001 --mem 1",
      "--mbufs 10",
      "--mbufs many",
      "--mbufs 4294967296",
      "--mbufs 1073741824",  // 2^30: its ring would need 2^31 entries (was exit 1 after the EAL)
      "stray-argument",
      "--stats-json /nonexistent/dir/s.json",  // found before the run, not after it
      "--snapshot /nonexistent/dir/s.bin",
      "--stats-json /tmp",  // a folder: found before the run, not when written at exit
      "--snapshot /tmp",
      "--snapshot-interval 5",              // without --snapshot
      "--require-snapshot",
      "--snapshot-interval x --snapshot s.bin",
      // --decide penalties: a filter that cannot infer, a time window, bad penalties and priors.
      "--decide penalties",
      "--decide penalties --filter interleaved",
      "--decide penalties --filter btbf --ttl 1s",
      "--decide sometimes",
      "--decide penalties --filter btbf --penalty-fp 0",
      "--decide penalties --filter btbf --penalty-fn -1",
      "--decide penalties --filter btbf --penalty-fn inf",
      "--decide penalties --filter btbf --prior 1",
      "--decide penalties --filter btbf --prior 0",
      "--penalty-fp 2 --filter btbf",
      "--decide penalties --filter btbf --penalty-param bid",
      // Given twice with two values: which was meant? (The last won without a word.)
      "--key flow --key src-ip",
      "--action count --action drop",
  };
  for (const char* args : cases) {
    const Outcome r = dedup_fwd(eal(pcap_vdev(0, in, out)), args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    EXPECT_NE(r.out.find("dedup_fwd: "), std::string::npos) << args << "\n" << r.out;
  }
  const Outcome help = dedup_fwd(eal(pcap_vdev(0, in, out)), "--help");
  EXPECT_EQ(help.code, 0);
  for (const char* opt : {"--key", "--filter", "--window", "--ttl", "--fpr", "--mem", "--policy", "--action",
                          "--portmask", "--same-port", "--stats-interval", "--stats-json", "--seed", "--max-packets",
                          "--exit-on-idle", "--mbufs", "--time-source"})
    EXPECT_NE(help.out.find(opt), std::string::npos) << opt;
  // Help without DPDK: `dedup_fwd --help` and `-h` before any "--", even
  // with EAL options that could not start (no hugepages asked, a device that
  // does not exist), print ours and exit 0 without a line from the EAL.
  for (const char* args : {"--help", "-h", "-l 0 --vdev net_nosuch0 --help", "--help -- --key flow", "-- -h"}) {
    const Outcome r = shell(std::string(DEDUP_FWD) + " " + args);
    EXPECT_EQ(r.code, 0) << args << "\n" << r.out;
    EXPECT_NE(r.out.find("--key src-ip|dst-ip"), std::string::npos) << args << "\n" << r.out;
    EXPECT_NE(r.out.find("--help-eal"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("EAL:"), std::string::npos) << args << "\n" << r.out;
  }
  // --version the same way, before or after the "--": ours and the DPDK's.
  for (const char* args : {"--version", "-l 0 --vdev net_nosuch0 --version", "-- --version",
                           "-- --version --key bogus"}) {  // at once, as --help: what follows is not read
    const Outcome r = shell(std::string(DEDUP_FWD) + " " + args);
    EXPECT_EQ(r.code, 0) << args << "\n" << r.out;
    // "dedup_fwd 0.1.0 (DPDK 22.11.4)": one line, ours and the DPDK's.
    EXPECT_EQ(r.out.rfind("dedup_fwd ", 0), 0u) << args << "\n" << r.out;
    EXPECT_NE(r.out.find(" (DPDK "), std::string::npos) << args << "\n" << r.out;
    EXPECT_EQ(r.out.find('\n'), r.out.size() - 1) << args << "\n" << r.out;
  }
  const Outcome twice = dedup_fwd(eal(pcap_vdev(0, in, out)), "--key flow --key src-ip");
  EXPECT_NE(twice.out.find("--key given twice ('flow', then 'src-ip'): give it once"), std::string::npos) << twice.out;
}

int main(int argc, char** argv) {
  return agebloom::testing::dpdk_suite_main(
      argc, argv, temp_dir(), "agebloom-t" + std::to_string(getpid()) + "-", [](const fs::path& in, const fs::path& out) {
        return dedup_fwd(eal(pcap_vdev(0, in, out)), "--exit-on-idle 10 --stats-interval 0");
      });
}
