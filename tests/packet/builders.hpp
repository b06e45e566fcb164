// Byte-by-byte frame builders for key-extraction tests. Every field is written
// explicitly (network order) so a test reads like the packet diagram.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string_view>
#include <vector>

namespace agebloom::packet::test {

using Bytes = std::vector<uint8_t>;
using Ip4 = std::array<uint8_t, 4>;
using Ip6 = std::array<uint8_t, 16>;

inline void put16(Bytes& b, uint16_t v) {
  b.push_back(static_cast<uint8_t>(v >> 8));
  b.push_back(static_cast<uint8_t>(v));
}
inline void put32(Bytes& b, uint32_t v) {
  put16(b, static_cast<uint16_t>(v >> 16));
  put16(b, static_cast<uint16_t>(v));
}
inline Bytes cat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const Bytes& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}
inline Bytes text(std::string_view s) { return Bytes(s.begin(), s.end()); }

inline constexpr Ip4 kClient4{10, 0, 0, 1};
inline constexpr Ip4 kServer4{192, 0, 2, 80};
inline constexpr Ip6 kClient6{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01};
inline constexpr Ip6 kServer6{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80};

// Ethernet II: dst MAC, src MAC, then one (TPID, TCI) pair per VLAN tag, then
// the ethertype.
inline Bytes ethernet(uint16_t ethertype, std::initializer_list<uint16_t> vlan_tpids = {}) {
  Bytes b{0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01};
  uint16_t vid = 100;
  for (uint16_t tpid : vlan_tpids) {
    put16(b, tpid);
    put16(b, vid++);
  }
  put16(b, ethertype);
  return b;
}

struct Ipv4Opts {
  uint8_t ihl = 5;             // header words; options are zero-filled
  int total_length = -1;       // -1: computed
  uint16_t flags_frag = 0x4000;  // DF, offset 0
  uint8_t version = 4;
};

inline Bytes ipv4(uint8_t proto, Ip4 src, Ip4 dst, const Bytes& payload, Ipv4Opts o = {}) {
  Bytes b;
  b.push_back(static_cast<uint8_t>(o.version << 4 | (o.ihl & 0x0F)));
  b.push_back(0);  // DSCP/ECN
  const std::size_t hdr = o.ihl >= 5 ? o.ihl * 4u : 20u;  // bytes actually written
  put16(b, o.total_length >= 0 ? static_cast<uint16_t>(o.total_length)
                               : static_cast<uint16_t>(hdr + payload.size()));
  put16(b, 0x1234);  // id
  put16(b, o.flags_frag);
  b.push_back(64);   // TTL
  b.push_back(proto);
  put16(b, 0);       // checksum: not checked by the parser
  b.insert(b.end(), src.begin(), src.end());
  b.insert(b.end(), dst.begin(), dst.end());
  b.resize(hdr, 0);  // options
  b.insert(b.end(), payload.begin(), payload.end());
  return b;
}

inline Bytes ipv6(uint8_t next, Ip6 src, Ip6 dst, const Bytes& payload, int payload_length = -1) {
  Bytes b{0x60, 0, 0, 0};  // version 6, traffic class 0, flow label 0
  put16(b, payload_length >= 0 ? static_cast<uint16_t>(payload_length)
                               : static_cast<uint16_t>(payload.size()));
  b.push_back(next);
  b.push_back(64);  // hop limit
  b.insert(b.end(), src.begin(), src.end());
  b.insert(b.end(), dst.begin(), dst.end());
  b.insert(b.end(), payload.begin(), payload.end());
  return b;
}

// Generic IPv6 option-style extension header (hop-by-hop, routing, dest opts):
// next header, length in 8-byte units beyond the first, zero padding.
inline Bytes ext6(uint8_t next, uint8_t len_units = 0) {
  Bytes b{next, len_units};
  b.resize((len_units + 1u) * 8u, 0);
  return b;
}
// Fragment header: next, reserved, offset (8-byte units) << 3 | M, id.
inline Bytes frag6(uint8_t next, uint16_t offset_units, bool more) {
  Bytes b{next, 0};
  put16(b, static_cast<uint16_t>(offset_units << 3 | (more ? 1 : 0)));
  put32(b, 0xCAFE);
  return b;
}
// AH: next, payload length in 4-byte words minus 2; 12 bytes of SPI/seq + ICV.
inline Bytes ah(uint8_t next, uint8_t len_words_minus2 = 4) {
  Bytes b{next, len_words_minus2};
  b.resize((len_words_minus2 + 2u) * 4u, 0);
  return b;
}

inline Bytes tcp(uint16_t sport, uint16_t dport, const Bytes& payload = {}, uint8_t data_offset = 5) {
  Bytes b;
  put16(b, sport);
  put16(b, dport);
  put32(b, 1000);  // seq
  put32(b, 0);     // ack
  b.push_back(static_cast<uint8_t>(data_offset << 4));
  b.push_back(0x18);  // PSH|ACK
  put16(b, 65535);    // window
  put16(b, 0);        // checksum
  put16(b, 0);        // urgent
  if (data_offset > 5) b.resize(data_offset * 4u, 1);  // NOP options
  b.insert(b.end(), payload.begin(), payload.end());
  return b;
}

inline Bytes udp(uint16_t sport, uint16_t dport, const Bytes& payload = {}) {
  Bytes b;
  put16(b, sport);
  put16(b, dport);
  put16(b, static_cast<uint16_t>(8 + payload.size()));
  put16(b, 0);
  b.insert(b.end(), payload.begin(), payload.end());
  return b;
}

inline Bytes http_request(std::string_view method, std::string_view target,
                          std::string_view host = "example.com", std::string_view version = "HTTP/1.1") {
  std::string s;
  s.append(method).append(" ").append(target).append(" ").append(version).append("\r\n");
  if (!host.empty()) s.append("Host: ").append(host).append("\r\n");
  s.append("User-Agent: agebloom-test\r\nAccept: */*\r\n\r\n");
  return text(s);
}

// Common frames.
inline Bytes eth_ipv4_tcp(const Bytes& payload, uint16_t dport = 80, std::initializer_list<uint16_t> vlans = {}) {
  return cat({ethernet(0x0800, vlans), ipv4(6, kClient4, kServer4, tcp(40000, dport, payload))});
}
inline Bytes eth_ipv6_tcp(const Bytes& payload, uint16_t dport = 80, std::initializer_list<uint16_t> vlans = {}) {
  return cat({ethernet(0x86DD, vlans), ipv6(6, kClient6, kServer6, tcp(40000, dport, payload))});
}

// A heap copy of exactly `n` bytes, so AddressSanitizer flags any read past it
// (a std::vector's spare capacity would hide such reads).
inline std::unique_ptr<uint8_t[]> exact_copy(const uint8_t* p, std::size_t n) {
  std::unique_ptr<uint8_t[]> out(new uint8_t[n == 0 ? 1 : n]);
  for (std::size_t i = 0; i < n; ++i) out[i] = p[i];
  return out;
}

}  // namespace agebloom::packet::test
