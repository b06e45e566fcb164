// Captures written byte by byte, for the tests that need what libpcap's
// writer would not produce: lengths that lie, timestamps out of range, cut
// records, pcapng blocks and options. Little-endian throughout (the byte
// order of the magic numbers below): the classic pcap file header and record,
// and pcapng blocks with the section header's body.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <vector>

namespace agebloom::testing {

using Bytes = std::vector<uint8_t>;

// v's low `bytes` bytes, least significant first.
inline void put_le(Bytes& b, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
inline void le16(Bytes& b, uint16_t v) { put_le(b, v, 2); }
inline void le32(Bytes& b, uint32_t v) { put_le(b, v, 4); }

// Classic pcap: microsecond and nanosecond timestamps.
inline constexpr uint32_t kPcapMicroMagic = 0xa1b2c3d4, kPcapNanoMagic = 0xa1b23c4d;

// A classic pcap file header, version 2.4; link type 1 is Ethernet.
inline Bytes pcap_file_header(uint32_t magic = kPcapMicroMagic, uint32_t snaplen = 65535, uint32_t linktype = 1) {
  Bytes b;
  le32(b, magic);
  le16(b, 2);
  le16(b, 4);
  le32(b, 0);  // thiszone
  le32(b, 0);  // sigfigs
  le32(b, snaplen);
  le32(b, linktype);
  return b;
}

// One classic record: its four header fields as given (seconds, the
// fraction in the file's unit, captured and original length), then data.
inline void pcap_record(Bytes& f, uint32_t sec, uint32_t frac, uint32_t caplen, uint32_t len, const Bytes& data) {
  le32(f, sec);
  le32(f, frac);
  le32(f, caplen);
  le32(f, len);
  f.insert(f.end(), data.begin(), data.end());
}

// One pcapng block: type, total length, body (a multiple of 4 bytes), total
// length again; `leading` replaces the first length (a lie) when given.
inline void pcapng_block(Bytes& f, uint32_t type, const Bytes& body, std::optional<uint32_t> leading = {}) {
  const uint32_t total = static_cast<uint32_t>(12 + body.size());
  le32(f, type);
  le32(f, leading.value_or(total));
  f.insert(f.end(), body.begin(), body.end());
  le32(f, total);
}
inline constexpr uint32_t kPcapngSection = 0x0A0D0D0A, kPcapngInterface = 1, kPcapngPacket = 6;

// A section header block's body: byte-order magic, version 1.0, section
// length unknown.
inline Bytes pcapng_section_body() {
  Bytes b;
  le32(b, 0x1A2B3C4D);
  le16(b, 1);
  le16(b, 0);
  put_le(b, ~uint64_t{0}, 8);
  return b;
}

// An enhanced packet block's body on interface 0: the 64-bit timestamp in
// the interface's unit, both lengths the data's, the data padded to 4 bytes.
inline Bytes pcapng_packet_body(uint64_t ts, const Bytes& data) {
  Bytes b;
  le32(b, 0);
  le32(b, static_cast<uint32_t>(ts >> 32));
  le32(b, static_cast<uint32_t>(ts));
  le32(b, static_cast<uint32_t>(data.size()));
  le32(b, static_cast<uint32_t>(data.size()));
  b.insert(b.end(), data.begin(), data.end());
  b.insert(b.end(), (4 - data.size() % 4) % 4, 0);
  return b;
}

// Writes bytes to path, replacing what was there.
inline void write_bytes(const std::filesystem::path& path, const Bytes& b) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

}  // namespace agebloom::testing
