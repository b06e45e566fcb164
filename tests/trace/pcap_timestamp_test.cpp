// PcapReader and corrupt timestamps: a record whose timestamp is out of range
// is skipped and counted (bad_timestamps()), and the records after it keep
// their own times, so a replay's clock never freezes; a classic pcap's
// seconds are unsigned (2038 to 2106 are times, not negative ones). Captures
// are written byte by byte here.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../common/capture_bytes.hpp"
#include "agebloom/trace/pcap_trace.hpp"

namespace agebloom::trace {
namespace {

namespace fs = std::filesystem;
using Status = PcapReader::Status;
using testing::Bytes;
using testing::le16;
using testing::le32;

constexpr uint32_t kMicroMagic = testing::kPcapMicroMagic, kNanoMagic = testing::kPcapNanoMagic;

Bytes header(uint32_t magic) { return testing::pcap_file_header(magic); }

// A 60-byte frame whose first byte tells the records apart; sec and frac are
// written as the raw 32-bit fields.
void record(Bytes& f, uint32_t sec, uint32_t frac, uint8_t id) {
  Bytes data(60, 0);
  data[0] = id;
  testing::pcap_record(f, sec, frac, 60, 60, data);
}

class BadTimestamps : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("agebloom_ts_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path write(const std::string& name, const Bytes& b) {
    const fs::path p = dir_ / name;
    testing::write_bytes(p, b);
    return p;
  }
  // Reads to the end: the ids and times of the packets handed out.
  void read_all(const fs::path& p, std::vector<uint8_t>& ids, std::vector<uint64_t>& ns, uint64_t& bad) {
    auto opened = PcapReader::open(p.string());
    ASSERT_TRUE(opened.ok()) << opened.error;
    Packet pkt;
    Status st;
    while ((st = opened.reader.next(pkt)) == Status::ok) {
      ids.push_back(pkt.data[0]);
      ns.push_back(pkt.timestamp_ns);
    }
    EXPECT_EQ(st, Status::end) << opened.reader.error();
    EXPECT_EQ(opened.reader.packets_read(), ids.size());
    bad = opened.reader.bad_timestamps();
    // Moving the reader keeps the count.
    PcapReader moved = std::move(opened.reader);
    EXPECT_EQ(moved.bad_timestamps(), bad);
  }
  fs::path dir_;
};

constexpr uint32_t kSec = 1'700'000'000;
constexpr uint64_t kSecNs = uint64_t{kSec} * 1'000'000'000u;

TEST_F(BadTimestamps, MicrosecondCaptureSkipsAndCountsOutOfRangeFields) {
  Bytes f = header(kMicroMagic);
  record(f, kSec, 10, 1);
  record(f, kSec, static_cast<uint32_t>(-5), 2);  // negative microseconds: was ~2^64 ns
  record(f, kSec, 20, 3);
  record(f, kSec, 1'000'000, 4);    // one past the range
  record(f, kSec, 5'000'000, 5);    // x1000 would wrap a 32-bit field
  record(f, kSec, 999'999, 6);      // the last valid value
  record(f, 0x80000000u, 0, 7);     // 2038-01-19: the seconds field is unsigned
  record(f, 0xffffffffu, 30, 8);    // 2106-02-07, the last second it holds
  record(f, kSec + 1, 30, 9);
  std::vector<uint8_t> ids;
  std::vector<uint64_t> ns;
  uint64_t bad = 0;
  read_all(write("micro.pcap", f), ids, ns, bad);
  EXPECT_EQ(ids, (std::vector<uint8_t>{1, 3, 6, 7, 8, 9}));
  EXPECT_EQ(ns, (std::vector<uint64_t>{kSecNs + 10'000, kSecNs + 20'000, kSecNs + 999'999'000,
                                       uint64_t{0x80000000u} * 1'000'000'000u,
                                       uint64_t{0xffffffffu} * 1'000'000'000u + 30'000,
                                       kSecNs + 1'000'000'000 + 30'000}));
  EXPECT_EQ(bad, 3u);
}

TEST_F(BadTimestamps, NanosecondCaptureSkipsAndCountsOutOfRangeFields) {
  Bytes f = header(kNanoMagic);
  record(f, kSec, 1, 1);
  record(f, kSec, 1'000'000'000, 2);               // one past the range
  record(f, kSec, static_cast<uint32_t>(-1), 3);   // negative nanoseconds
  record(f, kSec, 999'999'999, 4);
  record(f, 0x80000000u, 5, 5);                    // 2038: unsigned seconds
  record(f, kSec + 2, 7, 6);
  std::vector<uint8_t> ids;
  std::vector<uint64_t> ns;
  uint64_t bad = 0;
  read_all(write("nano.pcap", f), ids, ns, bad);
  EXPECT_EQ(ids, (std::vector<uint8_t>{1, 4, 5, 6}));
  EXPECT_EQ(ns, (std::vector<uint64_t>{kSecNs + 1, kSecNs + 999'999'999, uint64_t{0x80000000u} * 1'000'000'000u + 5,
                                       kSecNs + 2'000'000'007}));
  EXPECT_EQ(bad, 2u);
}

// pcapng keeps 64-bit times: a record before 1970 (a negative if_tsoffset)
// is out of range there, not a time after 2038 as in a classic capture.
TEST_F(BadTimestamps, PcapngBefore1970IsOutOfRange) {
  Bytes f;
  auto block = [&](uint32_t type, const Bytes& body) { testing::pcapng_block(f, type, body); };
  block(testing::kPcapngSection, testing::pcapng_section_body());
  Bytes idb;
  le16(idb, 1);  // Ethernet
  le16(idb, 0);
  le32(idb, 65535);
  le16(idb, 14);  // if_tsoffset: -100 s
  le16(idb, 8);
  le32(idb, static_cast<uint32_t>(-100));
  le32(idb, 0xffffffffu);
  le32(idb, 0);  // end of options
  block(testing::kPcapngInterface, idb);
  for (const auto& [us, id] : {std::pair<uint64_t, uint8_t>{0, 1}, {200'000'000, 2}}) {  // -100 s, then +100 s
    Bytes data(60, 0);
    data[0] = id;
    block(testing::kPcapngPacket, testing::pcapng_packet_body(us, data));
  }
  std::vector<uint8_t> ids;
  std::vector<uint64_t> ns;
  uint64_t bad = 0;
  read_all(write("offset.pcapng", f), ids, ns, bad);
  EXPECT_EQ(ids, (std::vector<uint8_t>{2}));
  EXPECT_EQ(ns, (std::vector<uint64_t>{100'000'000'000u}));
  EXPECT_EQ(bad, 1u);
}

TEST_F(BadTimestamps, CleanCaptureCountsNone) {
  Bytes f = header(kMicroMagic);
  for (uint8_t i = 0; i < 5; ++i) record(f, kSec, i * 100u, i);
  std::vector<uint8_t> ids;
  std::vector<uint64_t> ns;
  uint64_t bad = 1;
  read_all(write("clean.pcap", f), ids, ns, bad);
  EXPECT_EQ(ids.size(), 5u);
  EXPECT_EQ(bad, 0u);
  // 1970 itself is a valid time.
  Bytes epoch = header(kMicroMagic);
  record(epoch, 0, 0, 42);
  ids.clear();
  ns.clear();
  read_all(write("epoch.pcap", epoch), ids, ns, bad);
  EXPECT_EQ(ns, (std::vector<uint64_t>{0}));
  EXPECT_EQ(bad, 0u);
}

}  // namespace
}  // namespace agebloom::trace
