// Every dedup_fwd command in dpdk_app/README.md, run as the page gives it
// (its own shell variables and command lines, from a folder laid out like the
// repository root) over the captures it names, and checked against what its
// comment says it does: the packets it forwards are recomputed here from the
// capture's bytes, independently of agebloom, and the "N in, M forwarded"
// figures of the comment must be the run's. The list of examples below is
// the page's: an example added, removed or changed there (command or claim)
// fails this test until it is checked here too. Exit code 77 (skip) with the
// reason when the EAL cannot start here.
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "../common/shell.hpp"
#include "../common/test_paths.hpp"
#include "captures.hpp"
#include "suite_main.hpp"

namespace fs = std::filesystem;
using agebloom::testing::Bytes;
using agebloom::testing::Frame;
using agebloom::testing::read_frames;
using agebloom::testing::write_pcap;
using agebloom::testing::Outcome;
using agebloom::testing::shell;

namespace {

const fs::path kRoot = AGEBLOOM_SOURCE_ROOT;
const fs::path kReadme = kRoot / "dpdk_app" / "README.md";
const fs::path kWeb = kRoot / "data" / "traces" / "pcapplusplus_example.pcap";
const fs::path kAds = kRoot / "data" / "traces" / "pcapplusplus_4KHttpRequests.pcap";

fs::path temp_dir() { return agebloom::testing::process_temp_dir("dedup-fwd-readme"); }

// Unique per run, so that runs never share EAL state (nor with other suites).
std::string next_prefix() {
  static std::atomic<int> n{0};
  return "agebloom-r" + std::to_string(getpid()) + "-" + std::to_string(n++);
}

// ---------------------------------------------------------------- the page

struct Example {
  int line = 0;         // of the command in README.md
  std::string comment;  // the comment right above it, '#' marks dropped, lines joined
  std::string command;  // continuation lines joined
};

struct Page {
  std::vector<std::pair<std::string, std::string>> vars;  // NAME="value" lines, in order
  std::vector<Example> examples;                          // lines running build/dpdk_app/dedup_fwd
  std::vector<std::string> others;                        // other lines naming dedup_fwd
};

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t");
  const size_t b = s.find_last_not_of(" \t");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

// The ```sh blocks of the page: a comment belongs to the command right under
// it; any other line (or a blank one) ends it.
Page read_page() {
  Page p;
  std::ifstream in(kReadme);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  bool block = false;
  std::string comment;
  static const std::regex var(R"re(^([A-Z_]+)="(.*)"$)re");
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string l = trim(lines[i]);
    if (!block) {
      block = l == "```sh";
      comment.clear();
      continue;
    }
    if (l == "```") {
      block = false;
      continue;
    }
    std::smatch m;
    if (l.rfind("#", 0) == 0) {
      comment += (comment.empty() ? "" : " ") + trim(l.substr(1));
    } else if (std::regex_match(l, m, var)) {
      p.vars.emplace_back(m[1], m[2]);
      comment.clear();
    } else if (l.find("dedup_fwd") != std::string::npos) {
      Example e{static_cast<int>(i + 1), comment, l};
      while (!e.command.empty() && e.command.back() == '\\' && i + 1 < lines.size())
        e.command = trim(e.command.substr(0, e.command.size() - 1)) + " " + trim(lines[++i]);
      if (e.command.rfind("build/dpdk_app/dedup_fwd ", 0) == 0) p.examples.push_back(e);
      else p.others.push_back(e.command);
      comment.clear();
    } else {
      comment.clear();
    }
  }
  return p;
}

// ---------------------------------------------------------------- captures

// Both shipped captures are untagged Ethernet + IPv4 throughout (checked
// below), so this is all the parsing the expectations need.
struct Ipv4 {
  size_t l3 = 0;  // offset of the IP header
  uint32_t src = 0, dst = 0;
  uint8_t proto = 0;
  uint16_t sport = 0, dport = 0;
  std::string payload;  // TCP/UDP payload
};

uint32_t be32(const Bytes& b, size_t at) {
  return uint32_t{b[at]} << 24 | uint32_t{b[at + 1]} << 16 | uint32_t{b[at + 2]} << 8 | b[at + 3];
}
uint16_t be16(const Bytes& b, size_t at) { return static_cast<uint16_t>(b[at] << 8 | b[at + 1]); }

std::optional<Ipv4> parse(const Bytes& b) {
  if (b.size() < 34 || be16(b, 12) != 0x0800 || (b[14] >> 4) != 4) return std::nullopt;
  Ipv4 v;
  v.l3 = 14;
  const size_t ihl = (b[14] & 15u) * 4;
  const size_t end = std::min(b.size(), size_t{14} + be16(b, 16));
  v.proto = b[23];
  v.src = be32(b, 26);
  v.dst = be32(b, 30);
  const size_t l4 = 14 + ihl;
  if ((v.proto == 6 || v.proto == 17) && l4 + 4 <= end) {
    v.sport = be16(b, l4);
    v.dport = be16(b, l4 + 2);
    const size_t data = v.proto == 6 ? l4 + (b[l4 + 12] >> 4) * 4 : l4 + 8;
    if (data < end) v.payload.assign(b.begin() + static_cast<long>(data), b.begin() + static_cast<long>(end));
  }
  return v;
}

// --key packet's key as the README describes it: the IP packet with TTL and
// checksum masked, plus the MACs and the VLAN tag unless left out.
// (A string: g++ 12 warns falsely on maps of byte vectors.)
std::string packet_key(const Bytes& b, bool ignore_vlan, bool ignore_l2) {
  const bool tagged = be16(b, 12) == 0x8100;
  const size_t l3 = tagged ? 18 : 14;
  std::string k;
  if (!ignore_l2) {
    k.assign(b.begin(), b.begin() + 12);
    if (tagged && !ignore_vlan) k += {static_cast<char>(b[14] & 0x0f), static_cast<char>(b[15])};
  }
  Bytes ip(b.begin() + static_cast<long>(l3), b.end());
  ip[8] = 0;
  ip[10] = ip[11] = 0;
  k.insert(k.end(), ip.begin(), ip.end());
  return k;
}

void fix_ipv4_checksum(Bytes& b, size_t l3) {
  b[l3 + 10] = b[l3 + 11] = 0;
  uint32_t sum = 0;
  for (size_t i = 0; i < (b[l3] & 15u) * 4; i += 2) sum += be16(b, l3 + i);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  b[l3 + 10] = static_cast<uint8_t>(~sum >> 8);
  b[l3 + 11] = static_cast<uint8_t>(~sum);
}

// The capture with every frame followed by a copy of it as a second tap would
// see it: one hop further (TTL one less, checksum redone), and changed by `edit`.
std::vector<Frame> with_copies(const std::vector<Frame>& in, const std::function<void(Bytes&)>& edit) {
  std::vector<Frame> out;
  for (const Frame& p : in) {
    out.push_back(p);
    Frame c = p;
    c.bytes[14 + 8] -= 1;
    fix_ipv4_checksum(c.bytes, 14);
    edit(c.bytes);
    out.push_back(c);
  }
  return out;
}

// ---------------------------------------------------------------- runs

struct Run {
  Outcome out;
  fs::path dir;  // its working directory (out.pcap, stats.json)
  uint64_t in = 0, forwarded = 0, suppressed = 0;
  bool summary = false;
  std::vector<Bytes> forwarded_packets() const { return agebloom::testing::read_pcap(dir / "out.pcap"); }
};

void read_summary(Run& r) {
  static const std::regex s(R"(packets in (\d+), forwarded (\d+), suppressed (\d+))");
  std::smatch m;
  if (!std::regex_search(r.out.out, m, s)) return;
  r.summary = true;
  r.in = std::stoull(m[1]);
  r.forwarded = std::stoull(m[2]);
  r.suppressed = std::stoull(m[3]);
}

// A folder laid out like the repository root for the page's relative paths:
// data/ is the repository's, build/dpdk_app/dedup_fwd the binary under test.
fs::path example_dir(const std::string& name) {
  const fs::path d = temp_dir() / name;
  fs::remove_all(d);
  fs::create_directories(d / "build" / "dpdk_app");
  fs::create_directory_symlink(kRoot / "data", d / "data");
  fs::create_symlink(DEDUP_FWD, d / "build" / "dpdk_app" / "dedup_fwd");
  return d;
}

// Runs the example as written: the page's variables (each with a file prefix
// of its own added, and `capture`, when given, read in place of the shipped
// capture it names), then the command line itself, plus `extra` options.
Run run_example(const Page& page, const Example& e, const std::string& name,
                const std::map<fs::path, fs::path>& capture = {}, const std::string& extra = "") {
  Run r;
  r.dir = example_dir(name);
  std::string script = "cd '" + r.dir.string() + "' || exit 99\n";
  for (auto [var, value] : page.vars) {
    for (const auto& [shipped, instead] : capture) {
      const std::string rel = fs::relative(shipped, kRoot).string();
      if (const size_t at = value.find(rel); at != std::string::npos) value.replace(at, rel.size(), instead.string());
    }
    script += var + "=\"" + value + " --file-prefix " + next_prefix() + " --log-level=lib.eal:error\"\n";
  }
  script += e.command + (extra.empty() ? "" : " " + extra) + "\n";
  std::ofstream(r.dir / "example.sh") << script;
  r.out = shell("bash '" + (r.dir / "example.sh").string() + "'");
  read_summary(r);
  return r;
}

// The "N in, M forwarded" of a comment (exactly one per example).
std::optional<std::pair<uint64_t, uint64_t>> claimed(const std::string& comment) {
  static const std::regex f(R"((\d+) in, (\d+) forwarded)");
  auto it = std::sregex_iterator(comment.begin(), comment.end(), f);
  if (it == std::sregex_iterator() || std::next(it) != std::sregex_iterator()) return std::nullopt;
  return std::make_pair(std::stoull((*it)[1]), std::stoull((*it)[2]));
}

void expect_same_packets(const std::vector<Bytes>& got, const std::vector<Bytes>& want) {
  EXPECT_EQ(got.size(), want.size());
  for (size_t i = 0; i < std::min(got.size(), want.size()); ++i)
    if (got[i] != want[i]) {
      ADD_FAILURE() << "forwarded packet " << i << " is not the one the comment says";
      break;
    }
}

// A run forwarded exactly `want`, in order, and said so; and its comment's figures are those.
void expect_forwarded(const Run& r, const Example& e, const std::vector<Bytes>& want, uint64_t in) {
  ASSERT_EQ(r.out.code, 0) << r.out.out;
  ASSERT_TRUE(r.summary) << r.out.out;
  EXPECT_EQ(r.in, in);
  EXPECT_EQ(r.forwarded, want.size()) << r.out.out;
  EXPECT_EQ(r.in, r.forwarded + r.suppressed);
  expect_same_packets(r.forwarded_packets(), want);
  const auto figures = claimed(e.comment);
  ASSERT_TRUE(figures) << "the comment should give the figures as 'N in, M forwarded': " << e.comment;
  EXPECT_EQ(figures->first, r.in) << e.comment;
  EXPECT_EQ(figures->second, r.forwarded) << e.comment;
}

const std::vector<Frame>& web() {
  static const std::vector<Frame> p = read_frames(kWeb);
  return p;
}
const std::vector<Frame>& ads() {
  static const std::vector<Frame> p = read_frames(kAds);
  return p;
}

// First sightings under insert-always over a count window of `window`
// insertions (every keyed packet is one).
template <class Key>
std::vector<Bytes> insert_always_count(const std::vector<Frame>& cap, uint64_t window, Key key) {
  std::map<decltype(key(cap[0].bytes)), uint64_t> last;
  std::vector<Bytes> pass;
  for (uint64_t i = 0; i < cap.size(); ++i) {
    const auto k = key(cap[i].bytes);
    const auto it = last.find(k);
    if (it == last.end() || i - it->second > window) pass.push_back(cap[i].bytes);
    last[k] = i;
  }
  return pass;
}

// --key packet over a time window of `ttl_us` on the capture's clock.
std::vector<Bytes> packet_copies_dropped(const std::vector<Frame>& cap, uint64_t ttl_us, bool ignore_vlan,
                                         bool ignore_l2) {
  std::map<std::string, uint64_t> last;
  std::vector<Bytes> pass;
  for (const Frame& p : cap) {
    const std::string k = packet_key(p.bytes, ignore_vlan, ignore_l2);
    const auto it = last.find(k);
    if (it == last.end() || p.ts_us - it->second > ttl_us) pass.push_back(p.bytes);
    last[k] = p.ts_us;
  }
  return pass;
}

// ---------------------------------------------------------------- the checks

using Verify = std::function<void(const Page&, const Example&)>;

struct Checked {
  std::string command;  // exactly as the page has it
  std::string claim;    // what the comment must say: the check below verifies it
  Verify verify;
};

// The --key packet examples: the shipped capture (one frame in it was
// captured twice), then a copy of it where every frame is seen twice, as
// `copies` changes the second sighting; and, for an option that makes such
// copies meet, the same without it: `plain_forwards` (both sightings pass). Those runs take the capture's clock
// (--time-source rx-timestamp) so that a stall of this shared machine between
// a frame and its copy cannot stretch their 50 ms apart.
void verify_packet_mode(const Page& page, const Example& e, const std::string& name, bool ignore_vlan,
                        bool ignore_l2, const std::function<void(Bytes&)>& copies, uint64_t plain_forwards) {
  const Run r = run_example(page, e, name);
  expect_forwarded(r, e, packet_copies_dropped(web(), 50'000, ignore_vlan, ignore_l2), web().size());
  const fs::path twice = temp_dir() / (name + "-twice.pcap");
  const std::vector<Frame> cap = with_copies(web(), copies);
  write_pcap(twice, cap);
  const Run t = run_example(page, e, name + "-twice", {{kWeb, twice}}, "--time-source rx-timestamp");
  ASSERT_EQ(t.out.code, 0) << t.out.out;
  ASSERT_TRUE(t.summary) << t.out.out;
  const std::vector<Bytes> want = packet_copies_dropped(cap, 50'000, ignore_vlan, ignore_l2);
  EXPECT_EQ(want.size(), web().size() - 1) << "every copy is dropped, and the capture's own duplicate";
  EXPECT_EQ(t.forwarded, want.size()) << t.out.out;
  expect_same_packets(t.forwarded_packets(), want);
  // Without the option, the copies are other keys: it is what makes them meet.
  if (plain_forwards) {
    Example plain = e;
    plain.command = std::regex_replace(e.command, std::regex(ignore_l2 ? " --ignore-l2" : " --ignore-vlan"), "");
    const Run p = run_example(page, plain, name + "-without", {{kWeb, twice}}, "--time-source rx-timestamp");
    ASSERT_TRUE(p.summary) << p.out.out;
    EXPECT_EQ(p.forwarded, plain_forwards) << p.out.out;
  }
}

// On real ports: the same options over two net_pcap ports (no NIC here), the
// lcores mapped onto this machine's CPUs. It runs until signalled, as on a NIC.
void verify_nic_example(const Page&, const Example& e) {
  const size_t dashes = e.command.find(" -- ");
  ASSERT_NE(dashes, std::string::npos);
  const std::string app = e.command.substr(dashes + 4);
  cpu_set_t set;
  CPU_ZERO(&set);
  std::string cpus;
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cpus += (cpus.empty() ? "" : ",") + std::to_string(c);
  const fs::path dir = example_dir("nic"), log = dir / "run.log";
  // -l 0-4 and -a PCI,... become the same five lcores and two ports; -m 1024
  // holds the four 124 MiB filters that --capacity 20000000 plans.
  ASSERT_NE(e.command.find("-l 0-4 "), std::string::npos) << "five lcores, as mapped here";
  const std::string cmd = std::string(DEDUP_FWD) + " --no-huge --no-pci -m 1024 --log-level=lib.eal:error --file-prefix " +
                          next_prefix() + " --lcores '(0-4)@(" + (cpus.empty() ? "0" : cpus) + ")' --vdev net_pcap0,rx_pcap=" +
                          kWeb.string() + ",tx_pcap=" + (dir / "out0.pcap").string() + " --vdev net_pcap1,rx_pcap=" +
                          kAds.string() + ",tx_pcap=" + (dir / "out1.pcap").string() + " -- " + app;
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", ("exec " + cmd + " >" + log.string() + " 2>&1").c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // Until a stats line shows both captures received (one a second), then SIGINT.
  const std::string all = "rx " + std::to_string(web().size() + ads().size()) + " ";
  std::string text;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    std::ifstream in(log);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (text.find("dedup_fwd: " + all) != std::string::npos) break;
  }
  kill(pid, SIGINT);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  std::ifstream in(log);
  text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << text;
  EXPECT_NE(text.find("dedup_fwd: " + all), std::string::npos) << "stats lines every second: " << text;
  // "lcore 0 keeps time and prints stats, lcores 1-4 are workers"
  for (int w = 0; w < 4; ++w)
    EXPECT_NE(text.find("worker " + std::to_string(w) + " on lcore " + std::to_string(w + 1) + " "), std::string::npos)
        << text;
  EXPECT_NE(text.find("dispatcher on lcore 0"), std::string::npos) << "net_pcap has no RSS: " << text;
  EXPECT_NE(text.find("forwarding to port 1"), std::string::npos) << "--portmask 0x3 pairs 0 and 1: " << text;
  EXPECT_NE(text.find("| port 1 rx " + std::to_string(ads().size()) + " "), std::string::npos) << text;
  Run r;
  r.out.out = text;
  read_summary(r);
  ASSERT_TRUE(r.summary) << text;
  EXPECT_EQ(r.in, web().size() + ads().size());
  EXPECT_EQ(r.in, r.forwarded + r.suppressed);
  EXPECT_EQ(text.find("BUG"), std::string::npos) << text;
}

const std::vector<Checked>& checks() {
  static const std::vector<Checked> c = {
      {"build/dpdk_app/dedup_fwd $WEB -- --key src-ip --window 10000 --exit-on-idle 200",
       "the first packet of each source",
       [](const Page& page, const Example& e) {
         const Run r = run_example(page, e, "src-ip");
         expect_forwarded(r, e, insert_always_count(web(), 10000, [](const Bytes& b) { return parse(b)->src; }),
                          web().size());
       }},
      {"build/dpdk_app/dedup_fwd $ADS -- --key dst-ip --ttl 60s --capacity 100000 --time-source rx-timestamp "
       "--exit-on-idle 200",
       "silence of more than 60 s",
       [](const Page& page, const Example& e) {
         const Run r = run_example(page, e, "dst-ip");
         std::smatch m;
         ASSERT_TRUE(std::regex_search(r.out.out, m, std::regex(R"( epoch=(\d+))"))) << r.out.out;
         const uint64_t epoch_us = std::stoull(m[1]) / 1000;
         char slack[32];
         std::snprintf(slack, sizeof slack, "here %.1f s", epoch_us / 1e6);
         EXPECT_NE(e.comment.find(slack), std::string::npos) << "the slack is one epoch: " << slack;
         // Repeats within 60 s are suppressed, after 60 s plus an epoch they
         // pass; in between the filter may still hold the key (the slack), and
         // what this run did there is what the comment counts.
         std::map<uint32_t, uint64_t> last;
         std::vector<Bytes> must, may;
         uint64_t first = 0, again = 0;
         for (const Frame& p : ads()) {
           const uint32_t d = parse(p.bytes)->dst;
           const auto it = last.find(d);
           const uint64_t gap = it == last.end() ? ~uint64_t{0} : p.ts_us - it->second;
           if (it == last.end()) ++first;
           else if (gap > 60'000'000) ++again;
           if (gap > 60'000'000 + epoch_us) must.push_back(p.bytes);
           else if (gap > 60'000'000) may.push_back(p.bytes);
           last[d] = p.ts_us;
         }
         const std::vector<Bytes> got = r.forwarded_packets();
         auto text = [](const Bytes& b) { return std::string(b.begin(), b.end()); };
         std::set<std::string> allowed, forwarded;
         for (const auto* v : {&must, &may})
           for (const Bytes& b : *v) allowed.insert(text(b));
         for (const Bytes& b : got) forwarded.insert(text(b));
         for (const Bytes& b : got) EXPECT_TRUE(allowed.count(text(b))) << "a repeat within 60 s was forwarded";
         for (const Bytes& b : must) EXPECT_TRUE(forwarded.count(text(b))) << "a destination silent for longer was suppressed";
         EXPECT_NE(e.comment.find("first packet to each of " + std::to_string(first) + " destinations"),
                   std::string::npos) << e.comment;
         EXPECT_NE(e.comment.find(std::to_string(r.forwarded - first) + " after a silence"), std::string::npos)
             << e.comment;
         EXPECT_LE(r.forwarded - first, again);
         expect_forwarded(r, e, got, ads().size());  // the packets were checked above: the figures
       }},
      {"build/dpdk_app/dedup_fwd $WEB -- --key flow --fpr 0.001 --stats-json stats.json --exit-on-idle 200",
       "the first packet of each flow passes",
       [](const Page& page, const Example& e) {
         const Run r = run_example(page, e, "flow");
         expect_forwarded(r, e, insert_always_count(web(), 1'000'000, [](const Bytes& b) {
                            const Ipv4 v = *parse(b);
                            return std::make_tuple(v.src, v.dst, v.proto, v.sport, v.dport);
                          }),
                          web().size());
         std::ifstream in(r.dir / "stats.json");
         const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
         ASSERT_FALSE(j.is_discarded()) << "stats.json, in the folder it ran from";
         EXPECT_EQ(j["rx"], r.in);
         EXPECT_EQ(j["tx"], r.forwarded);
         EXPECT_EQ(j["suppressed"], r.suppressed);
         EXPECT_TRUE(j["invariant_holds"].get<bool>());
       }},
      {"build/dpdk_app/dedup_fwd $ADS -- --key click --click-param adk --ttl 10m --capacity 1000000 --exit-on-idle 200",
       "ad slot (Google's adk query parameter)",
       [](const Page& page, const Example& e) {
         const Run r = run_example(page, e, "click");
         // Client, method and the adk value of each HTTP request to port 80
         // or 8080 that has one; insert-on-miss, and the capture is shorter
         // than 10 minutes, so a key passes once.
         std::set<std::tuple<uint32_t, std::string, std::string>> passed;
         std::vector<Bytes> want;
         uint64_t keyed = 0;
         static const std::regex request(R"(^([A-Z]+) ([^ \r\n]*))");
         static const std::regex adk(R"([?&]adk=([^&]*))");
         ASSERT_LT(ads().back().ts_us - ads().front().ts_us, 600'000'000u);
         for (const Frame& p : ads()) {
           const Ipv4 v = *parse(p.bytes);
           std::smatch m, a;
           if (v.proto == 6 && (v.dport == 80 || v.dport == 8080) && std::regex_search(v.payload, m, request)) {
             const std::string target = m[2];
             if (std::regex_search(target, a, adk)) {
               ++keyed;
               if (!passed.insert({v.src, m[1], a[1]}).second) continue;
             }
           }
           want.push_back(p.bytes);
         }
         expect_forwarded(r, e, want, ads().size());
         EXPECT_NE(e.comment.find("of the " + std::to_string(keyed) + " requests with an adk, the " +
                                  std::to_string(r.suppressed) + " repeats are suppressed"),
                   std::string::npos) << e.comment;
         EXPECT_NE(r.out.out.find("no_click_param " + std::to_string(ads().size() - keyed)), std::string::npos)
             << r.out.out;
       }},
      {"build/dpdk_app/dedup_fwd $WEB -- --key packet --ttl 50ms --capacity 100000 --exit-on-idle 200",
       "every copy of a frame (TTL and IPv4 checksum may differ) within 50 ms is dropped",
       [](const Page& page, const Example& e) {
         verify_packet_mode(page, e, "packet", false, false, [](Bytes&) {}, 0);
       }},
      {"build/dpdk_app/dedup_fwd $WEB -- --key packet --ignore-vlan --ttl 50ms --capacity 100000 --exit-on-idle 200",
       "copies carry different VLAN tags",
       [](const Page& page, const Example& e) {
         // The copy tagged VLAN 20.
         verify_packet_mode(page, e, "packet-vlan", true, false,
                            [](Bytes& b) { b.insert(b.begin() + 12, {0x81, 0x00, 0x00, 20}); },
                            2 * web().size() - 2);
       }},
      {"build/dpdk_app/dedup_fwd $WEB -- --key packet --ignore-l2 --ttl 50ms --capacity 100000 --exit-on-idle 200",
       "both sides of a router",
       [](const Page& page, const Example& e) {
         // The router's MACs on the copy.
         verify_packet_mode(page, e, "packet-l2", false, true,
                            [](Bytes& b) {
                              for (int i = 0; i < 12; ++i) b[i] ^= 0x5a;
                            },
                            2 * web().size() - 2);
       }},
      {"build/dpdk_app/dedup_fwd -l 0-4 -n 4 -a 0000:3b:00.0 -a 0000:3b:00.1 -- --key src-ip --ttl 1s "
       "--capacity 20000000 --fpr 0.001 --portmask 0x3 --stats-interval 1",
       "lcore 0 keeps time and prints stats, lcores 1-4 are workers", verify_nic_example},
  };
  return c;
}

}  // namespace

// ---------------------------------------------------------------- tests

// What the checks assume of the shipped captures.
TEST(ReadmeExamples, ShippedCapturesAreEthernetIpv4) {
  ASSERT_FALSE(web().empty());
  ASSERT_FALSE(ads().empty());
  for (const auto* cap : {&web(), &ads()})
    for (const Frame& p : *cap) ASSERT_TRUE(parse(p.bytes)) << "every frame untagged Ethernet + IPv4";
}

// The page's examples are exactly the ones checked here, each with the claim
// its check verifies; and the page's only other dedup_fwd line is the synopsis.
TEST(ReadmeExamples, EveryExampleOfThePageIsChecked) {
  const Page page = read_page();
  ASSERT_FALSE(page.examples.empty()) << kReadme;
  std::set<std::string> listed;
  for (const Checked& c : checks()) listed.insert(c.command);
  for (const Example& e : page.examples) {
    EXPECT_TRUE(listed.count(e.command)) << "README.md:" << e.line << " is an example this test does not check: "
                                         << e.command;
    listed.erase(e.command);
  }
  for (const std::string& gone : listed) ADD_FAILURE() << "no longer in the README: " << gone;
  EXPECT_EQ(page.others, std::vector<std::string>{"dedup_fwd [EAL options] -- [options]"});
  std::set<std::string> vars;
  for (const auto& [name, value] : page.vars) vars.insert(name);
  EXPECT_EQ(vars, (std::set<std::string>{"WEB", "ADS"}));
}

TEST(ReadmeExamples, EachDoesWhatItsCommentSays) {
  const Page page = read_page();
  for (const Checked& c : checks()) {
    SCOPED_TRACE(c.command);
    const auto e = std::find_if(page.examples.begin(), page.examples.end(),
                                [&](const Example& x) { return x.command == c.command; });
    if (e == page.examples.end()) continue;  // EveryExampleOfThePageIsChecked says so
    EXPECT_NE(e->comment.find(c.claim), std::string::npos)
        << "README.md:" << e->line << ": the comment no longer says \"" << c.claim << "\", which this test checks: "
        << e->comment;
    c.verify(page, *e);
  }
}

int main(int argc, char** argv) {
  return agebloom::testing::dpdk_suite_main(
      argc, argv, temp_dir(), "agebloom-r" + std::to_string(getpid()) + "-", [](const fs::path& in, const fs::path& out) {
        return shell(std::string(DEDUP_FWD) + " --no-huge --no-pci -m 512 --log-level=lib.eal:error -l 0 --file-prefix " +
                     next_prefix() + " --vdev net_pcap0,rx_pcap=" + in.string() + ",tx_pcap=" + out.string() +
                     " -- --exit-on-idle 10 --stats-interval 0");
      });
}
