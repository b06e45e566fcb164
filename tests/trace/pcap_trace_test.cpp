// PcapReader: real captures, plus edge-case files written at test time.
#include "agebloom/trace/pcap_trace.hpp"

#include <gtest/gtest.h>
#include <pcap/pcap.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "test_data.hpp"

namespace agebloom::trace {
namespace {

namespace fs = std::filesystem;
using Status = PcapReader::Status;

#define REQUIRE_DATA_DIR(dir)                                                                      \
  const fs::path dir = testdata::data_dir();                                                       \
  if (dir.empty()) GTEST_SKIP() << "real captures not found: set AGEBLOOM_DATA_DIR to the shared " \
                                   "data directory (holding pcap/ and pcap_manifest.csv)"

// A per-process scratch directory, removed at the end of each test.
class ScratchDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("agebloom_trace_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path dir_;
};

std::vector<char> read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
void write_bytes(const fs::path& p, const char* data, std::size_t n) {
  std::ofstream out(p, std::ios::binary);
  out.write(data, static_cast<std::streamsize>(n));
}
uint32_t le32_at(const std::vector<char>& b, std::size_t off) {
  return static_cast<uint32_t>(static_cast<uint8_t>(b[off])) |
         static_cast<uint32_t>(static_cast<uint8_t>(b[off + 1])) << 8 |
         static_cast<uint32_t>(static_cast<uint8_t>(b[off + 2])) << 16 |
         static_cast<uint32_t>(static_cast<uint8_t>(b[off + 3])) << 24;
}

// Writes a pcap of `linktype` with the given frames at the given times.
void write_pcap(const fs::path& p, int linktype, const std::vector<std::vector<uint8_t>>& frames,
                const std::vector<timeval>& times = {}, bool nano = false) {
  pcap_t* dead = pcap_open_dead_with_tstamp_precision(linktype, 65535,
                                                       nano ? PCAP_TSTAMP_PRECISION_NANO : PCAP_TSTAMP_PRECISION_MICRO);
  ASSERT_NE(dead, nullptr);
  pcap_dumper_t* dumper = pcap_dump_open(dead, p.c_str());
  ASSERT_NE(dumper, nullptr) << pcap_geterr(dead);
  for (std::size_t i = 0; i < frames.size(); ++i) {
    pcap_pkthdr hdr{};
    if (i < times.size()) hdr.ts = times[i];
    hdr.caplen = hdr.len = static_cast<bpf_u_int32>(frames[i].size());
    pcap_dump(reinterpret_cast<u_char*>(dumper), &hdr, frames[i].data());
  }
  pcap_dump_close(dumper);
  pcap_close(dead);
}

uint64_t count_packets(PcapReader& r, Status& final_status) {
  Packet p;
  uint64_t n = 0;
  while ((final_status = r.next(p)) == Status::ok) ++n;
  return n;
}

TEST(PcapReader, RealCaptureYieldsDocumentedCount) {
  REQUIRE_DATA_DIR(dir);
  const auto manifest = testdata::read_manifest(dir);
  for (const char* name : {"pcap/http/pcapplusplus_4KHttpRequests.pcap", "pcap/http/zeek_bro.org.pcap",
                           "pcap/ndpi/ocs.pcap" /* RAW */, "pcap/ndpi/opc-ua.pcap" /* NULL */,
                           "pcap/ndpi/someip_sd_sample.pcap" /* PPI */}) {
    auto opened = PcapReader::open((dir / name).string());
    ASSERT_TRUE(opened.ok()) << opened.error;
    Status st;
    EXPECT_EQ(count_packets(opened.reader, st), testdata::manifest_u64(manifest.at(name), "packets")) << name;
    EXPECT_EQ(st, Status::end) << opened.reader.error();
    EXPECT_TRUE(opened.reader.error().empty());
    // End is sticky.
    Packet p;
    EXPECT_EQ(opened.reader.next(p), Status::end);
  }
}

TEST(PcapReader, PacketFieldsAndTimestamps) {
  REQUIRE_DATA_DIR(dir);
  auto opened = PcapReader::open((dir / "pcap/http/pcapplusplus_4KHttpRequests.pcap").string());
  ASSERT_TRUE(opened.ok()) << opened.error;
  EXPECT_EQ(opened.reader.linktype(), 1u);  // EN10MB
  Packet p;
  ASSERT_EQ(opened.reader.next(p), Status::ok);
  EXPECT_EQ(p.linktype, 1u);
  EXPECT_NE(p.data, nullptr);
  EXPECT_GT(p.caplen, 54u);
  EXPECT_LE(p.caplen, p.wirelen);
  // Manifest: first packet 2014-10-19; in nanoseconds since the epoch.
  EXPECT_GE(p.timestamp_ns, 1413676800ull * 1'000'000'000ull);  // 2014-10-19 00:00 UTC
  EXPECT_LT(p.timestamp_ns, 1413763200ull * 1'000'000'000ull);  // 2014-10-20 00:00 UTC
  EXPECT_EQ(opened.reader.packets_read(), 1u);
}

TEST(PcapReader, PcapngOpens) {
  REQUIRE_DATA_DIR(dir);
  const auto manifest = testdata::read_manifest(dir);
  for (const char* name : {"pcap/http/chrissanders_http_espn.pcapng", "pcap/ndpi/openwire.pcapng"}) {
    auto opened = PcapReader::open((dir / name).string());
    ASSERT_TRUE(opened.ok()) << opened.error;
    Status st;
    EXPECT_EQ(count_packets(opened.reader, st), testdata::manifest_u64(manifest.at(name), "packets")) << name;
    EXPECT_EQ(st, Status::end) << opened.reader.error();
  }
}

TEST_F(ScratchDir, TruncatedFileIsAnErrorNotEnd) {
  // Two frames, then cut the file inside the second record's data and inside
  // its record header.
  const std::vector<uint8_t> frame(100, 0xAB);
  const fs::path full = dir_ / "full.pcap";
  write_pcap(full, DLT_EN10MB, {frame, frame, frame});
  const std::vector<char> bytes = read_bytes(full);
  const std::size_t first_record = 24;
  const std::size_t second_record = first_record + 16 + le32_at(bytes, first_record + 8);
  ASSERT_LT(second_record + 16 + 50, bytes.size());

  for (std::size_t cut : {second_record + 16 + 50 /* in data */, second_record + 5 /* in header */}) {
    const fs::path truncated = dir_ / ("cut_" + std::to_string(cut) + ".pcap");
    write_bytes(truncated, bytes.data(), cut);
    auto opened = PcapReader::open(truncated.string());
    ASSERT_TRUE(opened.ok()) << opened.error;
    Packet p;
    EXPECT_EQ(opened.reader.next(p), Status::ok);
    EXPECT_EQ(opened.reader.next(p), Status::error) << "cut at " << cut;
    EXPECT_NE(opened.reader.error().find("truncated"), std::string::npos) << opened.reader.error();
    EXPECT_NE(opened.reader.error().find(truncated.string()), std::string::npos) << opened.reader.error();
    EXPECT_EQ(opened.reader.next(p), Status::error);  // sticky
  }
  // A cut exactly between records is a clean, shorter file.
  const fs::path clean = dir_ / "clean.pcap";
  write_bytes(clean, bytes.data(), second_record);
  auto opened = PcapReader::open(clean.string());
  ASSERT_TRUE(opened.ok()) << opened.error;
  Status st;
  EXPECT_EQ(count_packets(opened.reader, st), 1u);
  EXPECT_EQ(st, Status::end);
}

TEST_F(ScratchDir, TruncatedRealCapture) {
  REQUIRE_DATA_DIR(data);
  const std::vector<char> bytes = read_bytes(data / "pcap/http/pcapplusplus_4KHttpRequests.pcap");
  ASSERT_GT(bytes.size(), 1000u);
  // Walk records to the middle of the file and cut inside one.
  std::size_t off = 24;
  uint64_t whole = 0;
  while (off + 16 + le32_at(bytes, off + 8) < bytes.size() / 2) {
    off += 16 + le32_at(bytes, off + 8);
    ++whole;
  }
  const fs::path cut = dir_ / "half.pcap";
  write_bytes(cut, bytes.data(), off + 16 + le32_at(bytes, off + 8) / 2);
  auto opened = PcapReader::open(cut.string());
  ASSERT_TRUE(opened.ok()) << opened.error;
  Status st;
  EXPECT_EQ(count_packets(opened.reader, st), whole);
  EXPECT_EQ(st, Status::error);
  EXPECT_FALSE(opened.reader.error().empty());
}

TEST_F(ScratchDir, NotACaptureAndMissingFile) {
  const fs::path text = dir_ / "notes.txt";
  const std::string content = "this is not a capture file, just some text\n";
  write_bytes(text, content.data(), content.size());
  const OpenResult bad = PcapReader::open(text.string());
  EXPECT_FALSE(bad.ok());
  EXPECT_FALSE(bad.reader.is_open());
  EXPECT_NE(bad.error.find(text.string()), std::string::npos) << bad.error;
  EXPECT_NE(bad.error.find("unknown file format"), std::string::npos) << bad.error;

  const fs::path empty = dir_ / "empty.pcap";
  write_bytes(empty, "", 0);
  EXPECT_FALSE(PcapReader::open(empty.string()).ok());

  const OpenResult missing = PcapReader::open((dir_ / "missing.pcap").string());
  EXPECT_FALSE(missing.ok());
  EXPECT_NE(missing.error.find("No such file"), std::string::npos) << missing.error;
}

TEST_F(ScratchDir, HeaderOnlyPcapEndsImmediately) {
  const fs::path p = dir_ / "empty_capture.pcap";
  write_pcap(p, DLT_EN10MB, {});
  EXPECT_EQ(fs::file_size(p), 24u);
  auto opened = PcapReader::open(p.string());
  ASSERT_TRUE(opened.ok()) << opened.error;
  Packet pkt;
  EXPECT_EQ(opened.reader.next(pkt), Status::end);
  EXPECT_EQ(opened.reader.packets_read(), 0u);
}

TEST_F(ScratchDir, UnsupportedLinkTypeRejectedAtOpen) {
  const fs::path p = dir_ / "wifi.pcap";
  write_pcap(p, DLT_IEEE802_11, {std::vector<uint8_t>(40, 0)});
  const OpenResult r = PcapReader::open(p.string());
  EXPECT_FALSE(r.ok());
  EXPECT_FALSE(r.reader.is_open());
  EXPECT_NE(r.error.find("unsupported link type 105"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("IEEE802_11"), std::string::npos) << r.error;
}

TEST_F(ScratchDir, SupportedSyntheticLinkTypesOpen) {
  for (int dlt : {DLT_RAW, DLT_NULL, DLT_LINUX_SLL, DLT_LINUX_SLL2, DLT_LOOP}) {
    const fs::path p = dir_ / ("dlt" + std::to_string(dlt) + ".pcap");
    write_pcap(p, dlt, {std::vector<uint8_t>(40, 0)});
    auto opened = PcapReader::open(p.string());
    ASSERT_TRUE(opened.ok()) << opened.error;
    Packet pkt;
    EXPECT_EQ(opened.reader.next(pkt), Status::ok);
    EXPECT_EQ(pkt.linktype, static_cast<uint32_t>(dlt));
  }
}

TEST_F(ScratchDir, TimestampsInNanoseconds) {
  const fs::path micro = dir_ / "micro.pcap";
  write_pcap(micro, DLT_EN10MB, {std::vector<uint8_t>(60, 0)}, {timeval{1'600'000'000, 123'456}});
  auto m = PcapReader::open(micro.string());
  ASSERT_TRUE(m.ok()) << m.error;
  Packet p;
  ASSERT_EQ(m.reader.next(p), Status::ok);
  EXPECT_EQ(p.timestamp_ns, 1'600'000'000'123'456'000ull);
  EXPECT_EQ(p.caplen, 60u);
  EXPECT_EQ(p.wirelen, 60u);

  // A nanosecond file keeps every digit (libpcap stores ns in tv_usec).
  const fs::path nano = dir_ / "nano.pcap";
  write_pcap(nano, DLT_EN10MB, {std::vector<uint8_t>(60, 0)}, {timeval{1'600'000'000, 123'456'789}}, true);
  auto n = PcapReader::open(nano.string());
  ASSERT_TRUE(n.ok()) << n.error;
  ASSERT_EQ(n.reader.next(p), Status::ok);
  EXPECT_EQ(p.timestamp_ns, 1'600'000'000'123'456'789ull);
}

TEST(PcapReader, DefaultAndMovedFromReadersReportErrors) {
  PcapReader closed;
  Packet p;
  EXPECT_FALSE(closed.is_open());
  EXPECT_EQ(closed.next(p), Status::error);
  EXPECT_FALSE(closed.error().empty());

  REQUIRE_DATA_DIR(dir);
  auto opened = PcapReader::open((dir / "pcap/http/zeek_bro.org.pcap").string());
  ASSERT_TRUE(opened.ok()) << opened.error;
  ASSERT_EQ(opened.reader.next(p), Status::ok);
  PcapReader moved = std::move(opened.reader);
  EXPECT_FALSE(opened.reader.is_open());  // NOLINT: testing the moved-from state
  Status st;
  EXPECT_EQ(count_packets(moved, st) + 1, 751u);
  EXPECT_EQ(st, Status::end);
}

}  // namespace
}  // namespace agebloom::trace
