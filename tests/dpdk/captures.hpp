// The captures the dpdk tests write and read: classic pcap of Ethernet
// frames, stamped in microseconds, since net_pcap opens captures with
// pcap_open_offline (microseconds): dedup_fwd and the tests then see the
// same times.
#pragma once

#include <gtest/gtest.h>
#include <pcap/pcap.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace agebloom::testing {

using Bytes = std::vector<uint8_t>;

struct Frame {
  uint64_t ts_us = 0;
  Bytes bytes;
};

inline void write_pcap(const std::filesystem::path& path, const std::vector<Frame>& frames) {
  pcap_t* dead = pcap_open_dead(DLT_EN10MB, 65535);
  pcap_dumper_t* d = pcap_dump_open(dead, path.c_str());
  ASSERT_NE(d, nullptr) << pcap_geterr(dead);
  for (const Frame& f : frames) {
    pcap_pkthdr h{};
    h.ts.tv_sec = static_cast<time_t>(f.ts_us / 1'000'000);
    h.ts.tv_usec = static_cast<suseconds_t>(f.ts_us % 1'000'000);
    h.caplen = h.len = static_cast<uint32_t>(f.bytes.size());
    pcap_dump(reinterpret_cast<u_char*>(d), &h, f.bytes.data());
  }
  pcap_dump_close(d);
  pcap_close(dead);
}

inline std::vector<Frame> read_frames(const std::filesystem::path& path) {
  std::vector<Frame> out;
  char err[PCAP_ERRBUF_SIZE];
  pcap_t* p = pcap_open_offline(path.c_str(), err);
  EXPECT_NE(p, nullptr) << err;
  if (!p) return out;
  pcap_pkthdr* h;
  const u_char* data;
  while (pcap_next_ex(p, &h, &data) == 1)
    out.push_back({static_cast<uint64_t>(h->ts.tv_sec) * 1'000'000 + static_cast<uint64_t>(h->ts.tv_usec),
                   Bytes(data, data + h->caplen)});
  pcap_close(p);
  return out;
}

// The frames' bytes alone.
inline std::vector<Bytes> read_pcap(const std::filesystem::path& path) {
  std::vector<Bytes> out;
  for (Frame& f : read_frames(path)) out.push_back(std::move(f.bytes));
  return out;
}

// Frames as a sorted list, for output whose order is not defined (several
// workers sending at once). As strings: GCC 12 warns spuriously when sorting
// vectors of bytes.
inline std::vector<std::string> sorted_frames(const std::vector<Bytes>& frames) {
  std::vector<std::string> out;
  for (const Bytes& b : frames) out.emplace_back(b.begin(), b.end());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace agebloom::testing
