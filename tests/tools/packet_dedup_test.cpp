// agebloom-replay --key packet on a real capture, as a SPAN/TAP operator meets
// it: every packet of pcapplusplus_example.pcap followed by the copy a second
// mirror point delivers (TTL one lower, header checksum recomputed, same
// stamp). Every copy must be suppressed, no distinct packet may be, and
// --write / --write-suppressed must give back the original capture and the
// copies, stamps and link type kept (editcap -D's job).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../common/shell.hpp"
#include "../common/test_paths.hpp"
#include "agebloom/trace/pcap_trace.hpp"
#include "agebloom/trace/pcap_writer.hpp"

namespace fs = std::filesystem;
namespace tr = agebloom::trace;

namespace {

using agebloom::testing::trace;

fs::path temp_dir() { return agebloom::testing::process_temp_dir("agebloom-packet-dedup-test"); }

nlohmann::json replay_json(const std::string& args) {
  const auto r = agebloom::testing::shell_split(std::string(AGEBLOOM_REPLAY) + " " + args + " --json");
  EXPECT_EQ(r.code, 0) << args << "\n" << r.out << r.err;
  return nlohmann::json::parse(r.out, nullptr, false);
}

struct Record {
  uint64_t ts;
  uint32_t wirelen;
  std::vector<uint8_t> bytes;
};

std::vector<Record> read_all(const std::string& path, uint32_t* linktype = nullptr) {
  auto opened = tr::PcapReader::open(path);
  EXPECT_TRUE(opened.ok()) << opened.error;
  if (linktype) *linktype = opened.reader.linktype();
  std::vector<Record> out;
  tr::Packet p;
  while (opened.reader.next(p) == tr::PcapReader::Status::ok)
    out.push_back({p.timestamp_ns, p.wirelen, std::vector<uint8_t>(p.data, p.data + p.caplen)});
  return out;
}

// The copy a router hop later: TTL - 1 and the checksum redone (RFC 1071).
// False when the frame is not untagged Ethernet + a whole IPv4 header.
bool next_hop(std::vector<uint8_t>& f) {
  if (f.size() < 34 || f[12] != 0x08 || f[13] != 0x00 || (f[14] >> 4) != 4 || f[22] == 0) return false;
  const std::size_t ihl = (f[14] & 0x0F) * 4u;
  if (ihl < 20 || f.size() < 14 + ihl) return false;
  f[22] -= 1;
  f[24] = f[25] = 0;
  uint32_t sum = 0;
  for (std::size_t i = 0; i < ihl; i += 2) sum += f[14 + i] << 8 | f[14 + i + 1];
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  f[24] = static_cast<uint8_t>(~sum >> 8);
  f[25] = static_cast<uint8_t>(~sum);
  return true;
}

}  // namespace

TEST(PacketDedup, CopiesDifferingInTtlAndChecksumAreAllSuppressedOnARealCapture) {
  const fs::path dir = temp_dir();
  uint32_t linktype = 0;
  const std::vector<Record> original = read_all(trace("pcapplusplus_example.pcap"), &linktype);
  ASSERT_GT(original.size(), 1000u);

  // The capture as two mirror points deliver it: each IPv4 packet, then its copy.
  const std::string doubled = (dir / "doubled.pcap").string();
  uint64_t copies = 0;
  {
    tr::PcapWriter w;
    ASSERT_EQ(w.open(doubled, linktype), "");
    for (const Record& r : original) {
      tr::Packet p{r.ts, static_cast<uint32_t>(r.bytes.size()), r.wirelen, r.bytes.data(), linktype};
      w.write(p);
      std::vector<uint8_t> copy = r.bytes;
      if (!next_hop(copy)) continue;
      ASSERT_NE(copy, r.bytes);
      p.data = copy.data();
      w.write(p);
      ++copies;
    }
    ASSERT_EQ(w.close(), "");
  }
  ASSERT_GT(copies, 1000u);

  const std::string common = " --key packet --ttl 50ms --capacity 100000 --seed 5 --truth";
  const nlohmann::json base = replay_json(trace("pcapplusplus_example.pcap") + common);
  const std::string passed = (dir / "passed.pcap").string(), suppressed = (dir / "suppressed.pcap").string();
  const nlohmann::json j =
      replay_json(doubled + common + " --write " + passed + " --write-suppressed " + suppressed);
  ASSERT_FALSE(base.is_discarded());
  ASSERT_FALSE(j.is_discarded());
  // The trace's own exact repeats within 50 ms (if any) stay suppressed; on
  // top of them, exactly the copies.
  EXPECT_EQ(j["suppressed"].get<uint64_t>(), base["suppressed"].get<uint64_t>() + copies);
  EXPECT_EQ(j["live_fnr"], 0.0);  // no copy passed
  EXPECT_EQ(j["fpr"], 0.0) << "a distinct packet was suppressed";
  EXPECT_EQ(base["fpr"], 0.0);
  EXPECT_LE(j["filter"]["model_fpr"].get<double>(), 2e-6) << "packet mode's default FPR is 1e-6";

  // --write: the capture without the copies (and without the trace's own
  // exact repeats), every record as it was; --write-suppressed: the rest.
  uint32_t lt = 0;
  const std::vector<Record> kept = read_all(passed, &lt);
  const std::vector<Record> dropped = read_all(suppressed);
  EXPECT_EQ(lt, linktype);
  EXPECT_EQ(kept.size(), j["passed"].get<uint64_t>());
  EXPECT_EQ(dropped.size(), j["suppressed"].get<uint64_t>());
  std::size_t k = 0, matched = 0;
  for (const Record& r : original) {
    if (k < kept.size() && kept[k].bytes == r.bytes && kept[k].ts == r.ts && kept[k].wirelen == r.wirelen) {
      ++k;
      ++matched;
    }
  }
  EXPECT_EQ(matched, kept.size()) << "--write must hold original records only, in order, stamps kept";
  EXPECT_EQ(matched + base["suppressed"].get<uint64_t>(), original.size());
  fs::remove_all(dir);
}

TEST(PacketDedup, DistinctPacketsAreNeverSuppressed) {
  // Another real capture: no first sighting of a packet suppressed (the FPR
  // 1e-6 default makes one unlikely over a few hundred packets), and every
  // exact repeat within the window caught.
  const nlohmann::json j = replay_json(trace("pcapplusplus_4KHttpRequests.pcap") + " --key packet --ttl 1s --seed 9 --truth");
  ASSERT_FALSE(j.is_discarded());
  EXPECT_GT(j["first_occurrences"].get<uint64_t>(), 300u);
  EXPECT_EQ(j["fpr"], 0.0);
  EXPECT_EQ(j["live_fnr"], 0.0);
}

TEST(PacketDedup, WriteOptionsAreChecked) {
  const auto r = agebloom::testing::shell(std::string(AGEBLOOM_REPLAY) + " " + trace("pcapplusplus_example.pcap") +
                                          " --write " + trace("pcapplusplus_example.pcap"));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("overwrite"), std::string::npos) << r.out;
  const auto nodir = agebloom::testing::shell(std::string(AGEBLOOM_REPLAY) + " " + trace("pcapplusplus_example.pcap") +
                                              " --write /nonexistent-dir/x.pcap");
  EXPECT_EQ(nodir.code, 2);  // found before the trace is read
  EXPECT_NE(nodir.out.find("/nonexistent-dir/x.pcap"), std::string::npos) << nodir.out;
  const auto opts = agebloom::testing::shell(std::string(AGEBLOOM_REPLAY) + " " + trace("pcapplusplus_example.pcap") +
                                             " --key flow --ignore-vlan");
  EXPECT_EQ(opts.code, 2);
  EXPECT_NE(opts.out.find("--key packet"), std::string::npos) << opts.out;
}

TEST(PacketDedup, TheTraceUnderAnotherNameIsNeverAnOutput) {
  // The same file spelled otherwise ("./", an absolute path, a symbolic or a
  // hard link): refused before anything is opened, the trace left whole.
  const fs::path dir = temp_dir() / "same-file";
  fs::create_directories(dir);
  const fs::path copy = dir / "t.pcap";
  fs::copy_file(trace("pcapplusplus_example.pcap"), copy, fs::copy_options::overwrite_existing);
  const auto size = fs::file_size(copy);
  fs::remove(dir / "sym.pcap");
  fs::remove(dir / "hard.pcap");
  fs::create_symlink("t.pcap", dir / "sym.pcap");
  fs::create_hard_link(copy, dir / "hard.pcap");
  const std::string run = "cd " + dir.string() + " && " + AGEBLOOM_REPLAY + " t.pcap ";
  const std::vector<std::string> spellings = {"--write ./t.pcap", "--verdicts " + copy.string(),
                                                "--write-suppressed sym.pcap", "--write hard.pcap",
                                                "--write ../same-file/t.pcap"};
  for (const std::string& outputs : spellings) {
    const auto r = agebloom::testing::shell(run + outputs);
    EXPECT_EQ(r.code, 2) << outputs << "\n" << r.out;
    EXPECT_NE(r.out.find("would overwrite the TRACE"), std::string::npos) << outputs << "\n" << r.out;
    EXPECT_EQ(fs::file_size(copy), size) << outputs;
  }
  // Two outputs that are one file, neither there yet.
  const auto both = agebloom::testing::shell(run + "--write new.pcap --write-suppressed ./new.pcap");
  EXPECT_EQ(both.code, 2) << both.out;
  EXPECT_NE(both.out.find("name the same file"), std::string::npos) << both.out;
  EXPECT_FALSE(fs::exists(dir / "new.pcap"));
  // Through a link to a file not made yet, and split pieces that links make one file.
  fs::remove(dir / "dangling.pcap");
  fs::create_symlink("later.pcap", dir / "dangling.pcap");
  const auto linked = agebloom::testing::shell(run + "--write later.pcap --write-suppressed dangling.pcap");
  EXPECT_EQ(linked.code, 2) << linked.out;
  for (const char* piece : {"q0.pcap", "q1.pcap"}) {
    fs::remove(dir / piece);
    fs::create_symlink("p1.pcap", dir / piece);
  }
  const auto pieces = agebloom::testing::shell(run + "--split 2 --split-prefix q");
  EXPECT_EQ(pieces.code, 2) << pieces.out;
  EXPECT_NE(pieces.out.find("are one file"), std::string::npos) << pieces.out;
  // A trace named "-" (a file, read as ./-) and an output "-" (always a file).
  fs::copy_file(copy, dir / "-", fs::copy_options::overwrite_existing);
  const auto dash = agebloom::testing::shell("cd " + dir.string() + " && " + AGEBLOOM_REPLAY + " ./- --write -");
  EXPECT_EQ(dash.code, 2) << dash.out;
  EXPECT_EQ(fs::file_size(dir / "-"), size);
}

TEST(PacketDedup, WriteNeedsATraceItCanReadTwice) {
  // --write reads the trace again after the replay: standard input or a pipe
  // is refused up front, not found empty after the whole run.
  const fs::path dir = temp_dir() / "read-twice";
  fs::create_directories(dir);
  const std::string t = trace("pcapplusplus_example.pcap"), w = (dir / "w.pcap").string();
  const auto in = agebloom::testing::shell("cat " + t + " | " + AGEBLOOM_REPLAY + " - --write " + w);
  EXPECT_EQ(in.code, 2) << in.out;
  EXPECT_NE(in.out.find("'-' is standard input"), std::string::npos) << in.out;
  const fs::path fifo = dir / "fifo";
  fs::remove(fifo);
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const auto pipe = agebloom::testing::shell(std::string(AGEBLOOM_REPLAY) + " " + fifo.string() + " --write-suppressed " + w);
  EXPECT_EQ(pipe.code, 2) << pipe.out;  // refused without opening it: a reader would wait for a writer
  EXPECT_NE(pipe.out.find("not a regular file"), std::string::npos) << pipe.out;
  EXPECT_FALSE(fs::exists(w));
  // One pass is fine from standard input.
  const auto verdicts = agebloom::testing::shell("cat " + t + " | " + AGEBLOOM_REPLAY + " - --verdicts " +
                                                 (dir / "v.bin").string());
  EXPECT_EQ(verdicts.code, 0) << verdicts.out;
}
