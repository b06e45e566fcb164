// The fast path of extract_key, inline so a burst loop compiles it in place:
// the frame a dataplane sees nearly always, untagged Ethernet II carrying IPv4,
// keyed by address or 5-tuple, in one straight pass with the same checks as the
// general walk (total length against the capture, fragment offset, L4
// lengths). What it does not fully decide (VLAN tags, IPv6, IP options, click, packet, a later
// fragment, a short or odd L4 header, any error) it leaves to the walk, so both
// give the same Result and key for every frame: tests/packet compares them over
// mutated frames. In dedup_fwd the walk cost ~135 instructions per packet
// (callgrind, docs/PERFORMANCE.md); this path a few dozen.
//
// Not a header of its own: key_extract.hpp includes it after declaring what
// it uses (KeyMode, Key, Result). Include key_extract.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <bit>
#include <cstring>

namespace agebloom::packet::detail {

// The key words below are assembled for a little-endian host.
static_assert(std::endian::native == std::endian::little, "the fast path assembles keys little-endian");

// Where a burst loop keeps a fast key of its own (dedup_fwd's stage 1): the
// fast path's keys are at most 16 bytes, and a small local lets the compiler
// keep them in registers where a Key (2 KB, reached through a reference)
// takes two stores per frame.
struct FastKey {
  uint8_t bytes[16];
  uint16_t length = 0;
};

// KeyT: Key, or FastKey.
template <class KeyT>
inline bool ethernet_ipv4_fast(const uint8_t* p, std::size_t n, KeyMode mode, KeyT& out, Result& res) noexcept {
  constexpr std::size_t kEth = 14;
  constexpr uint8_t kTcp = 6, kUdp = 17;
  auto be16 = [](const uint8_t* q) { return static_cast<uint16_t>(q[0] << 8 | q[1]); };
  // EtherType IPv4 and version 4 with IHL 5 (the header nearly every packet
  // has; one with options, IHL > 5, is left to the walk): bytes 12-14 in one
  // compare of a little-endian word, the TOS byte masked off.
  if (mode == KeyMode::click || mode == KeyMode::packet || n < kEth + 20) return false;
  uint32_t type_version;
  std::memcpy(&type_version, p + 12, 4);
  if ((type_version & 0xFFFFFFu) != 0x450008u) return false;
  const uint8_t* ip = p + kEth;
  constexpr std::size_t ihl = 20;
  const std::size_t total = be16(ip + 2);
  // ihl <= total <= n - kEth as one unsigned compare (a total under ihl wraps).
  if (total - ihl > n - kEth - ihl) return false;
  const uint8_t proto = ip[9];
  // Key bytes as the walk's KeyWriter lays them out: a tag (kind << 4 | IP
  // version), then the fields.
  // The key is written with whole-word stores (bytes past its length are
  // scratch): the hash reads it back at once with word loads, and a load that
  // spans several narrower stores cannot be forwarded from the store buffer
  // (a stall of ~10 cycles per packet).
  if (mode != KeyMode::flow) {
    const bool src = mode == KeyMode::src_ip;
    uint32_t addr;
    std::memcpy(&addr, ip + (src ? 12 : 16), 4);
    const uint64_t word = static_cast<uint64_t>((src ? 1 : 2) << 4 | 4) | uint64_t{addr} << 8;  // little-endian
    std::memcpy(out.bytes, &word, 8);
    out.length = 5;
  } else {
    if ((be16(ip + 6) & 0x1FFFu) != 0) return false;  // a later fragment: the walk's verdict
    const uint8_t* l4 = ip + ihl;
    const std::size_t l4_len = total - ihl;
    uint32_t ports = 0;  // source and destination port as on the wire; other protocols key with 0
    if (proto == kUdp || proto == kTcp) {
      if (l4_len < (proto == kUdp ? 8u : 20u)) return false;
      if (proto == kTcp) {
        const std::size_t doff = (l4[12] >> 4) * 4u;
        if (doff < 20 || doff > l4_len) return false;
      }
      std::memcpy(&ports, l4, 4);
    }
    // tag, source, destination, protocol, ports: 14 bytes in one 16-byte store.
    uint64_t addrs;
    std::memcpy(&addrs, ip + 12, 8);  // source, then destination address
    using U64x2 = uint64_t __attribute__((vector_size(16)));
    const U64x2 key = {uint64_t{3 << 4 | 4} | addrs << 8,
                       addrs >> 56 | uint64_t{proto} << 8 | uint64_t{ports} << 16};
    std::memcpy(out.bytes, &key, 16);
    out.length = 14;
  }
  res.reason = Reason::ok;
  res.ip_version = 4;
  res.ip_proto = proto;
  return true;
}

}  // namespace agebloom::packet::detail
