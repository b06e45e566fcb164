// Several traces on one agebloom-replay command line: one stream merged by
// timestamp (tools/replay_input.hpp), directly and as a user runs it; traces
// of different link types refused (exit 2), an unreadable one exit 1. And
// --shard I/N: the N shards partition the keys, whatever the seed; --split N
// writes each shard's packets to its own piece; --check replays no trace.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../common/shell.hpp"
#include "../common/test_paths.hpp"
#include "agebloom/packet/key_extract.hpp"
#include "agebloom/trace/pcap_writer.hpp"
#include "replay_input.hpp"

namespace fs = std::filesystem;
using agebloom::testing::Outcome;
using agebloom::trace::Packet;
using agebloom::trace::PcapReader;

namespace {

Outcome run(const std::string& args) { return agebloom::testing::shell(std::string(AGEBLOOM_REPLAY) + " " + args); }

using agebloom::testing::trace;

fs::path temp_dir() { return agebloom::testing::process_temp_dir("agebloom-shard-test"); }

nlohmann::json json_of(const Outcome& r) {
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.out;
  return j;
}

// A packet as far as order goes: its stamp and its length.
struct Seen {
  uint64_t ns;
  uint32_t caplen;
  bool operator==(const Seen&) const = default;
};

std::vector<Seen> read_alone(const std::string& path) {
  auto opened = PcapReader::open(path);
  EXPECT_TRUE(opened.ok()) << opened.error;
  std::vector<Seen> out;
  Packet p;
  while (opened.reader.next(p) == PcapReader::Status::ok) out.push_back({p.timestamp_ns, p.caplen});
  return out;
}

agebloom::tools::MergedTraces merged(const std::vector<std::string>& paths) {
  agebloom::tools::MergedTraces m;
  for (const std::string& path : paths) {
    auto opened = PcapReader::open(path);
    EXPECT_TRUE(opened.ok()) << opened.error;
    m.add(path, std::move(opened.reader));
  }
  return m;
}

}  // namespace

// The merge hands out every packet of both captures once, stamps never
// stepping back, and each capture's packets in the capture's own order.
TEST(ReplayMerge, TwoCapturesInTimestampOrder) {
  const std::string web = trace("pcapplusplus_example.pcap"), ads = trace("pcapplusplus_4KHttpRequests.pcap");
  const std::vector<Seen> a = read_alone(web), b = read_alone(ads);
  // Given in either order on the command line, the stream is the same.
  for (const auto& order : {std::vector<std::string>{web, ads}, std::vector<std::string>{ads, web}}) {
    auto m = merged(order);
    std::vector<Seen> all;
    Packet p;
    uint64_t last = 0;
    while (m.next(p) == PcapReader::Status::ok) {
      EXPECT_GE(p.timestamp_ns, last);
      last = p.timestamp_ns;
      all.push_back({p.timestamp_ns, p.caplen});
    }
    EXPECT_EQ(m.next(p), PcapReader::Status::end);  // and stays at the end
    ASSERT_EQ(all.size(), a.size() + b.size());
    // The captures do not overlap in time (2013 and 2014): one after the other.
    const bool web_first = a.back().ns <= b.front().ns;
    const std::vector<Seen>& first = web_first ? a : b;
    EXPECT_TRUE(std::equal(first.begin(), first.end(), all.begin()));
  }
}

// Equal stamps: the earlier capture on the command line first, so a capture
// merged with itself gives each packet twice in a row.
TEST(ReplayMerge, EqualStampsKeepTheCommandLineOrder) {
  const std::string ads = trace("pcapplusplus_4KHttpRequests.pcap");
  const std::vector<Seen> a = read_alone(ads);
  auto m = merged({ads, ads});
  Packet p;
  std::vector<Seen> all;
  while (m.next(p) == PcapReader::Status::ok) all.push_back({p.timestamp_ns, p.caplen});
  ASSERT_EQ(all.size(), 2 * a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(all[2 * i], a[i]);
    EXPECT_EQ(all[2 * i + 1], a[i]);
  }
}

// A damaged capture ends the stream in an error naming it, after the
// packets merged before it.
TEST(ReplayMerge, AReadErrorEndsTheStream) {
  const fs::path d = temp_dir();
  const std::string web = trace("pcapplusplus_example.pcap");
  const std::string bytes = [&] {
    std::ifstream in(web, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), {});
  }();
  std::ofstream(d / "cut.pcap", std::ios::binary) << bytes.substr(0, bytes.size() / 2 + 3);
  auto m = merged({trace("pcapplusplus_4KHttpRequests.pcap"), (d / "cut.pcap").string()});
  Packet p;
  uint64_t n = 0;
  PcapReader::Status st;
  while ((st = m.next(p)) == PcapReader::Status::ok) ++n;
  EXPECT_EQ(st, PcapReader::Status::error);
  EXPECT_GT(n, 0u);
  EXPECT_NE(m.error().find("cut.pcap"), std::string::npos) << m.error();
  EXPECT_EQ(m.next(p), PcapReader::Status::error);
}

// As a user runs it: a capture replayed beside itself is every packet
// followed by its copy with the same stamp, so the ground truth gains
// exactly one live repeat per packet and nothing else changes.
TEST(ReplayMerge, SeveralTracesAreOneStream) {
  const std::string web = trace("pcapplusplus_example.pcap"), ads = trace("pcapplusplus_4KHttpRequests.pcap");
  const std::string opts = " --key flow --ttl 10s --truth --json --seed 5";
  const auto one = json_of(run(web + opts));
  const auto twice = json_of(run(web + " " + web + opts));
  EXPECT_EQ(twice["packets"], 2 * one["packets"].get<uint64_t>());
  EXPECT_EQ(twice["truth_duplicates"], one["truth_duplicates"].get<uint64_t>() + one["packets"].get<uint64_t>());
  EXPECT_EQ(twice["first_occurrences"], one["first_occurrences"]);
  EXPECT_EQ(twice["expired_occurrences"], one["expired_occurrences"]);
  EXPECT_EQ(twice["live_fnr"], 0.0);
  EXPECT_EQ(twice["time_regressions"], 0);  // merged by time: the clock never steps back
  EXPECT_EQ(twice["traces"], nlohmann::json::array({web, web}));
  // Two different captures: their packets and keys add up (their flows are apart).
  const auto b = json_of(run(ads + opts));
  const auto both = json_of(run(web + " " + ads + opts));
  EXPECT_EQ(both["packets"], one["packets"].get<uint64_t>() + b["packets"].get<uint64_t>());
  EXPECT_EQ(both["distinct_keys"], one["distinct_keys"].get<uint64_t>() + b["distinct_keys"].get<uint64_t>());
  EXPECT_EQ(both["time_regressions"], 0);
  // --write of the merged stream holds its passed packets in time order.
  const fs::path out = temp_dir() / "passed.pcap";
  ASSERT_EQ(run(ads + " " + web + " --key flow --ttl 10s --seed 5 --write " + out.string()).code, 0);
  const std::vector<Seen> passed = read_alone(out.string());
  EXPECT_EQ(passed.size(), both["passed"].get<uint64_t>());
  for (size_t i = 1; i < passed.size(); ++i) EXPECT_GE(passed[i].ns, passed[i - 1].ns);
}

// Frames of different link types cannot be keyed or written as one capture:
// exit 2 naming both files; an unreadable trace among several, exit 1.
TEST(ReplayMerge, MixedLinkTypesAndUnreadableTraces) {
  const fs::path d = temp_dir();
  const std::string raw = (d / "raw.pcap").string();
  {
    agebloom::trace::PcapWriter w;
    ASSERT_EQ(w.open(raw, agebloom::packet::linktype::raw), "");
    // One IPv4 header, 10.0.0.1 -> 10.0.0.2, no payload.
    const uint8_t ip[20] = {0x45, 0, 0, 20, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2};
    Packet p;
    p.timestamp_ns = 1'000'000'000;
    p.caplen = p.wirelen = sizeof ip;
    p.data = ip;
    w.write(p);
    ASSERT_EQ(w.close(), "");
  }
  ASSERT_EQ(run(raw + " --json --seed 1").code, 0);  // a good capture on its own
  const std::string web = trace("pcapplusplus_example.pcap");
  Outcome r = run(web + " " + raw + " --seed 1");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("different link types"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("raw.pcap"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("EN10MB"), std::string::npos) << r.out;
  r = run(web + " " + (d / "missing.pcap").string() + " --seed 1");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("missing.pcap"), std::string::npos) << r.out;
  fs::remove_all(d);
}

// The shard hash is the documented one, pinned: a change would send keys to
// other shards than pieces split by an earlier build.
TEST(ReplayShard, TheHashIsFixed) {
  using agebloom::tools::shard_of;
  EXPECT_EQ(shard_of("agebloom", 8, 1000), 35u);
  EXPECT_EQ(shard_of("10.0.0.1", 8, 1000), 897u);
  EXPECT_EQ(shard_of("10.0.0.1", 8, 7), 6u);
  EXPECT_EQ(shard_of("", 0, 1000), 802u);
  EXPECT_EQ(shard_of("anything", 8, 1), 0u);
  uint32_t i = 9, n = 9;
  EXPECT_EQ(agebloom::tools::parse_shard("2/5", i, n), "");
  EXPECT_EQ(i, 2u);
  EXPECT_EQ(n, 5u);
  for (const char* bad : {"1/0", "0/0", "4/4", "5/4", "x", "3", "-1/2", "1/", "/2", "1/2/3", " 1/2", "1/99999999999"})
    EXPECT_NE(agebloom::tools::parse_shard(bad, i, n), "") << bad;
}

// Over both captures merged, for each key mode and several N: the shards'
// packets, keys and ground truth add up to the whole replay's, exactly,
// with a time window (a key's history is its own packets'), and live FNR 0
// in every shard. The shards do not depend on the filter's seed.
TEST(ReplayShard, ShardsPartitionTheKeys) {
  const std::string both = trace("pcapplusplus_example.pcap") + " " + trace("pcapplusplus_4KHttpRequests.pcap");
  for (const char* key : {"src-ip", "flow", "click"}) {
    const std::string opts = std::string(" --key ") + key + " --ttl 10s --truth --json --filter guarded-epoch --capacity 5000";
    const auto whole = json_of(run(both + opts + " --seed 1"));
    for (uint32_t n : {1u, 3u, 4u}) {
      uint64_t packets = 0, keyed = 0, unparsed = 0, dups = 0, firsts = 0, expired = 0, keys = 0;
      for (uint32_t i = 0; i < n; ++i) {
        const std::string shard = " --shard " + std::to_string(i) + "/" + std::to_string(n);
        const auto j = json_of(run(both + opts + shard + " --seed " + std::to_string(10 + i)));
        EXPECT_EQ(j["shard"]["index"], i);
        EXPECT_EQ(j["shard"]["count"], n);
        EXPECT_EQ(j["shard"]["packets_outside"].get<uint64_t>() + j["packets"].get<uint64_t>(),
                  whole["packets"].get<uint64_t>());
        EXPECT_EQ(j["live_fnr"], 0.0) << key << shard;
        // Packets without a key are shard 0's.
        if (i > 0) {
          EXPECT_EQ(j["unparsed"], 0) << key << shard;
        }
        // Another seed, the same shard.
        const auto again = json_of(run(both + opts + shard + " --seed 99"));
        EXPECT_EQ(again["packets"], j["packets"]) << key << shard;
        packets += j["packets"].get<uint64_t>();
        keyed += j["keyed"].get<uint64_t>();
        unparsed += j["unparsed"].get<uint64_t>();
        dups += j["truth_duplicates"].get<uint64_t>();
        firsts += j["first_occurrences"].get<uint64_t>();
        expired += j["expired_occurrences"].get<uint64_t>();
        keys += j["distinct_keys"].get<uint64_t>();
      }
      EXPECT_EQ(packets, whole["packets"].get<uint64_t>()) << key << " " << n;
      EXPECT_EQ(keyed, whole["keyed"].get<uint64_t>()) << key << " " << n;
      EXPECT_EQ(unparsed, whole["unparsed"].get<uint64_t>()) << key << " " << n;
      EXPECT_EQ(dups, whole["truth_duplicates"].get<uint64_t>()) << key << " " << n;
      EXPECT_EQ(firsts, whole["first_occurrences"].get<uint64_t>()) << key << " " << n;
      EXPECT_EQ(expired, whole["expired_occurrences"].get<uint64_t>()) << key << " " << n;
      EXPECT_EQ(keys, whole["distinct_keys"].get<uint64_t>()) << key << " " << n;
    }
  }
}

// The outputs cover the shard's packets only: one verdict bit each, and
// --write's passed packets.
TEST(ReplayShard, OutputsHoldTheShardsPackets) {
  const fs::path d = temp_dir();
  const std::string web = trace("pcapplusplus_example.pcap");
  const Outcome r = run(web + " --key flow --ttl 1s --seed 2 --json --shard 1/3 --verdicts " + (d / "v.bin").string() +
                        " --write " + (d / "passed.pcap").string() + " --write-suppressed " +
                        (d / "dropped.pcap").string());
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = json_of(r);
  EXPECT_EQ(fs::file_size(d / "v.bin"), (j["packets"].get<uint64_t>() + 7) / 8);
  EXPECT_EQ(read_alone((d / "passed.pcap").string()).size(), j["passed"].get<uint64_t>());
  EXPECT_EQ(read_alone((d / "dropped.pcap").string()).size(), j["suppressed"].get<uint64_t>());
  // The text report names the shard.
  const Outcome text = run(web + " --key flow --ttl 1s --seed 2 --shard 1/3");
  EXPECT_NE(text.out.find("shard 1 of 3"), std::string::npos) << text.out;
  // Bad shards: exit 2, naming the problem.
  for (const char* bad : {"1/0", "3/3", "two/3"}) {
    const Outcome b = run(web + " --shard " + bad);
    EXPECT_EQ(b.code, 2) << bad << "\n" << b.out;
    EXPECT_NE(b.out.find("--shard"), std::string::npos) << b.out;
  }
  fs::remove_all(d);
}

// --split N writes each packet once, to its shard's piece; replaying piece I
// of every trace with --shard I/N drops nothing and decides exactly what
// --shard I/N over the whole traces decides (same packets, same order, same
// seed). Keyless packets are piece 0's.
TEST(ReplaySplit, PiecesReplayAsTheirShards) {
  const fs::path d = temp_dir();
  const std::string web = trace("pcapplusplus_example.pcap"), ads = trace("pcapplusplus_4KHttpRequests.pcap");
  const uint32_t n = 3;
  for (const char* key : {"flow", "click"}) {
    uint64_t pieces_total = 0;
    for (const auto& [t, name] : {std::pair{web, "web"}, std::pair{ads, "ads"}}) {
      const std::string prefix = (d / (std::string(name) + "-" + key + "-")).string();
      const Outcome r = run(t + " --key " + key + " --split 3 --split-prefix " + prefix + " --json --ttl 10s --fpr 0.001");
      ASSERT_EQ(r.code, 0) << r.out;
      const auto j = json_of(r);
      EXPECT_EQ(j["linktype_name"], "EN10MB");
      uint64_t sum = 0;
      for (uint32_t i = 0; i < n; ++i) {
        const auto& piece = j["pieces"][i];
        EXPECT_EQ(piece["file"], prefix + std::to_string(i) + ".pcap");
        EXPECT_EQ(read_alone(piece["file"]).size(), piece["packets"].get<uint64_t>());
        sum += piece["packets"].get<uint64_t>();
      }
      EXPECT_EQ(sum, j["packets"].get<uint64_t>());
      EXPECT_EQ(sum, read_alone(t).size());
      pieces_total += sum;
    }
    const std::string opts = std::string(" --key ") + key + " --ttl 10s --truth --json --seed 4";
    for (uint32_t i = 0; i < n; ++i) {
      const std::string shard = " --shard " + std::to_string(i) + "/3";
      const std::string piece = std::string("-") + key + "-" + std::to_string(i) + ".pcap";
      const auto from_pieces =
          json_of(run((d / ("web" + piece)).string() + " " + (d / ("ads" + piece)).string() + opts + shard));
      const auto from_whole = json_of(run(web + " " + ads + opts + shard));
      EXPECT_EQ(from_pieces["shard"]["packets_outside"], 0) << key << shard;
      for (const char* field : {"packets", "keyed", "unparsed", "suppressed", "truth_duplicates", "first_occurrences",
                                "expired_occurrences", "false_positives"})
        EXPECT_EQ(from_pieces[field], from_whole[field]) << key << shard << " " << field;
      if (i > 0) {
        EXPECT_EQ(from_pieces["unparsed"], 0) << key << shard;
      }
    }
    EXPECT_EQ(pieces_total, read_alone(web).size() + read_alone(ads).size());
  }
  fs::remove_all(d);
}

// --split and --check refuse what does not apply, before reading a trace;
// --check plans the filter without a trace, opens the traces given (their
// headers, as the run would: a missing one is exit 1) and checks the outputs,
// and replays and writes nothing.
TEST(ReplaySplit, BadSplitsAndCheck) {
  const fs::path d = temp_dir();
  const std::string web = trace("pcapplusplus_example.pcap");
  const std::string prefix = (d / "p-").string();
  struct Case {
    std::string args, says;
  };
  for (const Case& c : {Case{web + " --split 0 --split-prefix " + prefix, "--split needs a number"},
                        Case{web + " --split 513 --split-prefix " + prefix, "--split needs a number"},
                        Case{web + " --split 2", "needs --split-prefix"},
                        Case{web + " --split-prefix " + prefix, "goes with --split"},
                        Case{web + " --split 2 --split-prefix " + prefix + " --truth", "--truth does not apply"},
                        Case{web + " --split 2 --split-prefix " + prefix + " --shard 0/2", "--shard does not apply"},
                        Case{web + " --split 2 --split-prefix /nonexistent/p-", "cannot write into /nonexistent"},
                        Case{"--check --fpr 2", "--fpr"},
                        Case{"--check --ttl 1s --window 5", "exclude"},
                        Case{"--check --write /nonexistent/w.pcap", "cannot write into /nonexistent"}}) {
    const Outcome r = run(c.args);
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find(c.says), std::string::npos) << c.args << "\n" << r.out;
  }
  // A piece that would overwrite a trace.
  fs::copy_file(web, d / "p-1.pcap");
  const Outcome over = run((d / "p-1.pcap").string() + " --split 2 --split-prefix " + prefix);
  EXPECT_EQ(over.code, 2) << over.out;
  EXPECT_NE(over.out.find("would overwrite"), std::string::npos) << over.out;
  EXPECT_EQ(run("--check --key flow --ttl 10s --fpr 0.001").code, 0);
  const Outcome unread = run((d / "missing.pcap").string() + " --check --key flow");
  EXPECT_EQ(unread.code, 1) << unread.out;
  EXPECT_NE(unread.out.find("missing.pcap"), std::string::npos) << unread.out;
  // As --help says (it once promised 0 or 2 only).
  const Outcome help = run("--help");
  EXPECT_NE(help.out.find("1 for a TRACE that cannot be"), std::string::npos) << help.out;
  EXPECT_EQ(run(web + " --check --key flow --write " + (d / "w.pcap").string()).code, 0);
  EXPECT_FALSE(fs::exists(d / "w.pcap"));
  EXPECT_EQ(run("--check --key flow --split 4 --split-prefix " + prefix).code, 0);
  EXPECT_FALSE(fs::exists(d / "p-0.pcap"));  // --check writes nothing
  // An unreadable trace: exit 1, naming it.
  const Outcome missing = run((d / "missing.pcap").string() + " --split 2 --split-prefix " + prefix);
  EXPECT_EQ(missing.code, 1) << missing.out;
  EXPECT_NE(missing.out.find("missing.pcap"), std::string::npos) << missing.out;
  fs::remove_all(d);
}
