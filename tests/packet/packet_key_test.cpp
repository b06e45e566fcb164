// KeyMode::packet (exact-duplicate frames) and KeyOptions::vlan_in_key over
// hand-built frames: what a copy may differ in and still be the same key,
// what makes two packets different keys, and the byte bound. The hostile-input
// sweeps (truncations, corruptions) cover packet mode through kAllModes in
// key_extract_test.cpp.
#include <gtest/gtest.h>

#include <cstring>

#include "agebloom/packet/key_extract.hpp"
#include "builders.hpp"

namespace agebloom::packet {
namespace {

using namespace agebloom::packet::test;  // NOLINT: test-local builders

Bytes key_of(const Bytes& frame, KeyMode mode, const KeyOptions& o = {}, uint32_t dlt = linktype::en10mb,
             Reason* reason = nullptr) {
  auto buf = exact_copy(frame.data(), frame.size());
  Key key;
  const Result r = extract_key(dlt, buf.get(), frame.size(), mode, o, key);
  if (reason != nullptr) *reason = r.reason;
  if (!r.ok()) return {};
  return Bytes(key.bytes, key.bytes + key.length);
}

// The frame a second router hop (or a SPAN session after one) delivers: TTL
// one lower and the IPv4 header checksum recomputed.
Bytes next_hop(Bytes frame, std::size_t l2) {
  frame[l2 + 8] -= 1;
  uint32_t sum = 0;
  frame[l2 + 10] = frame[l2 + 11] = 0;
  for (std::size_t i = 0; i < 20; i += 2) sum += frame[l2 + i] << 8 | frame[l2 + i + 1];
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  frame[l2 + 10] = static_cast<uint8_t>(~sum >> 8);
  frame[l2 + 11] = static_cast<uint8_t>(~sum);
  return frame;
}

// Ethernet with one 802.1Q tag of the given VLAN ID.
Bytes tagged(uint16_t vid, const Bytes& ip) {
  Bytes b{0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01};
  put16(b, 0x8100);
  put16(b, static_cast<uint16_t>(0x2000 | vid));  // priority 1: not part of the identity
  put16(b, 0x0800);
  b.insert(b.end(), ip.begin(), ip.end());
  return b;
}

const Bytes kReq = http_request("GET", "/a");

TEST(PacketKey, LayoutIsTagMacsVlansAndTheMaskedIpPacket) {
  const Bytes ip = ipv4(6, kClient4, kServer4, tcp(40000, 80, kReq));
  const Bytes frame = cat({ethernet(0x0800), ip});
  Bytes want{0x84, 12};
  want.insert(want.end(), frame.begin(), frame.begin() + 12);
  want.push_back(0);  // no VLAN tags
  Bytes masked = ip;
  masked[8] = masked[10] = masked[11] = 0;
  want.insert(want.end(), masked.begin(), masked.end());
  EXPECT_EQ(key_of(frame, KeyMode::packet), want);
}

TEST(PacketKey, CopiesDifferingOnlyInTtlAndChecksumAreOneKey) {
  const Bytes v4 = cat({ethernet(0x0800), ipv4(6, kClient4, kServer4, tcp(40000, 80, kReq))});
  EXPECT_EQ(key_of(v4, KeyMode::packet), key_of(next_hop(v4, 14), KeyMode::packet));
  EXPECT_EQ(key_of(v4, KeyMode::packet), key_of(next_hop(next_hop(v4, 14), 14), KeyMode::packet));
  Bytes v6 = eth_ipv6_tcp(kReq);
  Bytes v6_hop = v6;
  v6_hop[14 + 7] -= 3;  // hop limit
  EXPECT_EQ(key_of(v6, KeyMode::packet), key_of(v6_hop, KeyMode::packet));
}

TEST(PacketKey, AnyOtherByteMakesADifferentKey) {
  const Bytes frame = cat({ethernet(0x0800), ipv4(6, kClient4, kServer4, tcp(40000, 80, kReq))});
  const Bytes base = key_of(frame, KeyMode::packet);
  // Every byte of the IP packet but TTL (8) and checksum (10, 11), and the MACs.
  for (std::size_t i = 0; i < frame.size(); ++i) {
    if (i == 12 || i == 13 || i == 14 + 8 || i == 14 + 10 || i == 14 + 11) continue;  // ethertype, masked
    if (i == 14 || i == 16 || i == 17) continue;  // version/IHL, total length: the frame stops parsing
    Bytes changed = frame;
    changed[i] ^= 0x01;
    Reason r;
    const Bytes k = key_of(changed, KeyMode::packet, {}, linktype::en10mb, &r);
    if (r != Reason::ok) continue;  // e.g. the fragment field: still a key, checked below
    EXPECT_NE(k, base) << "byte " << i;
  }
}

TEST(PacketKey, VlanIdsCountUnlessIgnored) {
  const Bytes ip = ipv4(17, kClient4, kServer4, udp(5353, 53, text("q")));
  KeyOptions ignore;
  ignore.packet.ignore_vlan = true;
  EXPECT_NE(key_of(tagged(10, ip), KeyMode::packet), key_of(tagged(20, ip), KeyMode::packet));
  EXPECT_EQ(key_of(tagged(10, ip), KeyMode::packet, ignore), key_of(tagged(20, ip), KeyMode::packet, ignore));
  EXPECT_EQ(key_of(tagged(10, ip), KeyMode::packet, ignore), key_of(cat({ethernet(0x0800), ip}), KeyMode::packet, ignore));
  // Priority bits are QoS, not identity.
  Bytes other_pcp = tagged(10, ip);
  other_pcp[14] ^= 0xE0;
  EXPECT_EQ(key_of(tagged(10, ip), KeyMode::packet), key_of(other_pcp, KeyMode::packet));
}

TEST(PacketKey, IgnoreL2DropsMacsAndTags) {
  const Bytes ip = ipv4(6, kClient4, kServer4, tcp(40000, 80, kReq));
  Bytes other_macs = cat({ethernet(0x0800), ip});
  other_macs[0] = 0x0A;
  other_macs[11] = 0x0B;
  KeyOptions l2;
  l2.packet.ignore_l2 = true;
  const Bytes plain = cat({ethernet(0x0800), ip});
  EXPECT_NE(key_of(plain, KeyMode::packet), key_of(other_macs, KeyMode::packet));
  EXPECT_EQ(key_of(plain, KeyMode::packet, l2), key_of(other_macs, KeyMode::packet, l2));
  EXPECT_EQ(key_of(plain, KeyMode::packet, l2), key_of(tagged(7, ip), KeyMode::packet, l2));
  // Off Ethernet there are no MACs: the same IP packet in a raw-IP capture.
  EXPECT_EQ(key_of(plain, KeyMode::packet, l2), key_of(ip, KeyMode::packet, {}, linktype::raw));
}

TEST(PacketKey, PaddingIsNotPartOfThePacket) {
  Bytes frame = eth_ipv4_tcp({});
  const Bytes unpadded = key_of(frame, KeyMode::packet);
  frame.resize(60, 0xEE);
  EXPECT_EQ(key_of(frame, KeyMode::packet), unpadded);
}

TEST(PacketKey, MaxBytesBoundsWhatIsHashed) {
  const Bytes a = eth_ipv4_tcp(http_request("GET", "/first"));
  const Bytes b = eth_ipv4_tcp(http_request("GET", "/other"));
  KeyOptions head;
  head.packet.max_bytes = 40;  // IPv4 + TCP headers: the request lines differ after
  EXPECT_NE(key_of(a, KeyMode::packet), key_of(b, KeyMode::packet));
  EXPECT_EQ(key_of(a, KeyMode::packet, head), key_of(b, KeyMode::packet, head));
  EXPECT_EQ(key_of(a, KeyMode::packet, head).size(), 1u + 1 + 12 + 1 + 40);
  // The mask applies inside the bound, and a bound shorter than the header works.
  head.packet.max_bytes = 9;
  EXPECT_EQ(key_of(a, KeyMode::packet, head), key_of(next_hop(a, 14), KeyMode::packet, head));
}

TEST(PacketKey, JumboPacketsNeedMaxBytesNeverATruncatedKey) {
  const Bytes jumbo = cat({ethernet(0x0800), ipv4(17, kClient4, kServer4, udp(1, 2, Bytes(8000, 0x5A)))});
  Reason r;
  EXPECT_TRUE(key_of(jumbo, KeyMode::packet, {}, linktype::en10mb, &r).empty());
  EXPECT_EQ(r, Reason::key_too_long);
  KeyOptions head;
  head.packet.max_bytes = 1500;
  EXPECT_EQ(key_of(jumbo, KeyMode::packet, head, linktype::en10mb, &r).size(), 1u + 1 + 12 + 1 + 1500);
  EXPECT_EQ(r, Reason::ok);
}

// kMaxPacketKeyIpBytes is what a key holds with MACs and two VLAN tags: an IP
// packet of that length is keyed whole behind QinQ, one byte more is refused
// (never shortened); untagged, 4 bytes more fit.
TEST(PacketKey, TheLongestPacketKeyedWholeBehindTwoTags) {
  auto frame_with_ip = [](std::initializer_list<uint16_t> tags, std::size_t ip_bytes) {
    return cat({ethernet(0x0800, tags), ipv4(17, kClient4, kServer4, udp(1, 2, Bytes(ip_bytes - 28, 0x5A)))});
  };
  Reason r;
  const std::size_t most = kMaxPacketKeyIpBytes;
  EXPECT_EQ(most, 2029u);
  EXPECT_EQ(key_of(frame_with_ip({0x88A8, 0x8100}, most), KeyMode::packet, {}, linktype::en10mb, &r).size(),
            kMaxKeyBytes);
  EXPECT_EQ(r, Reason::ok);
  EXPECT_TRUE(key_of(frame_with_ip({0x88A8, 0x8100}, most + 1), KeyMode::packet, {}, linktype::en10mb, &r).empty());
  EXPECT_EQ(r, Reason::key_too_long);
  EXPECT_EQ(key_of(frame_with_ip({}, most + 4), KeyMode::packet, {}, linktype::en10mb, &r).size(), kMaxKeyBytes);
  EXPECT_EQ(r, Reason::ok);
  // --packet-bytes at its most keys any packet behind two tags.
  KeyOptions head;
  head.packet.max_bytes = static_cast<uint32_t>(most);
  EXPECT_EQ(key_of(frame_with_ip({0x88A8, 0x8100}, 8000), KeyMode::packet, head, linktype::en10mb, &r).size(),
            kMaxKeyBytes);
  EXPECT_EQ(r, Reason::ok);
}

TEST(PacketKey, LaterFragmentsAreKeyed) {
  Ipv4Opts frag;
  frag.flags_frag = 0x2003;
  const Bytes frame = cat({ethernet(0x0800), ipv4(17, kClient4, kServer4, Bytes(16, 1), frag)});
  Reason r;
  EXPECT_FALSE(key_of(frame, KeyMode::packet, {}, linktype::en10mb, &r).empty());
  EXPECT_EQ(r, Reason::ok);
}

TEST(VlanInKey, OneFlowInTwoVlansIsTwoKeys) {
  const Bytes ip = ipv4(6, kClient4, kServer4, tcp(40000, 80, kReq));
  KeyOptions vlan;
  vlan.vlan_in_key = true;
  for (KeyMode mode : {KeyMode::src_ip, KeyMode::dst_ip, KeyMode::flow, KeyMode::click}) {
    EXPECT_EQ(key_of(tagged(10, ip), mode), key_of(tagged(20, ip), mode)) << int(mode);
    EXPECT_NE(key_of(tagged(10, ip), mode, vlan), key_of(tagged(20, ip), mode, vlan)) << int(mode);
    EXPECT_NE(key_of(tagged(10, ip), mode, vlan), key_of(cat({ethernet(0x0800), ip}), mode, vlan)) << int(mode);
    // Untagged: the mode's key and a zero count, the fast path bypassed alike.
    Bytes want = key_of(cat({ethernet(0x0800), ip}), mode);
    want.push_back(0);
    EXPECT_EQ(key_of(cat({ethernet(0x0800), ip}), mode, vlan), want) << int(mode);
  }
}

}  // namespace
}  // namespace agebloom::packet
