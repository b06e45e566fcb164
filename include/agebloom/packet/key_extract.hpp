// Key extraction: one raw frame in, the bytes a filter should hash out — or the
// reason the frame has no key.
//
// Shared by dedup_fwd (per packet at line rate), the pcap replayer, the GPU host
// code and the fuzzers, so the contract is strict:
//   * pure function of its arguments; no allocation, no exceptions, no globals;
//   * every read is bounds-checked against `len`: a hostile or truncated frame
//     yields a Reason, never a read outside [data, data + len);
//   * the key is never silently truncated (Reason::key_too_long instead).
//
// Parse order, top to bottom: link layer (Ethernet + up to two VLAN tags, PPPoE,
// Linux SLL/SLL2, raw IP, NULL/LOOP, PPP, Cisco HDLC, PPI) → IPv4/IPv6 header →
// IPv6 extension headers → TCP/UDP ports → HTTP/1.x request line. Each mode stops
// as soon as it has what it keys on: src_ip/dst_ip never look past the IP
// header, so a truncated or exotic L4 does not cost them their key.
//
// ## Key byte layout
//
// Byte 0 is a tag: high nibble = what the key is, low nibble = IP version (4/6).
// Keys of different modes or families therefore never collide, even when the
// caller mixes them in one filter. Multi-byte integers are big-endian (network
// order, as on the wire); addresses are copied verbatim (4 or 16 bytes = A).
//
//   tag   mode                           layout after the tag
//   0x1v  src_ip                         src[A]
//   0x2v  dst_ip                         dst[A]
//   0x3v  flow                           src[A] dst[A] proto[1] sport[2] dport[2]
//   0x4v  click                          client[A] mlen[1] method  tlen[2] target
//   0x5v  click, param                   client[A] mlen[1] method  vlen[2] value
//   0x6v  click, include_host            click layout + hlen[2] host
//   0x7v  click, param + include_host    click-param layout + hlen[2] host
//   0x8v  packet                         mlen[1] macs  nvlan[1] vid[2]*nvlan  ip[...]
//
// (v = 4 or 6.) Variable-length fields carry their length, so e.g. method "GE" +
// target "T/" can never equal method "GET" + target "/".
//
// packet: mlen is 12 (Ethernet destination + source MAC) or 0 (another link
// layer, or PacketOptions::ignore_l2); the VLAN IDs (12 bits, outer first) are
// absent under ignore_vlan or ignore_l2. ip is the IP packet from its first
// header byte, clipped to the IP length field (link padding never counts), at
// most PacketOptions::max_bytes of it, with the fields a forwarding hop
// rewrites zeroed: IPv4 TTL and header checksum, IPv6 hop limit.
//
// KeyOptions::vlan_in_key (every other mode) appends nvlan[1] vid[2]*nvlan to
// the mode's layout, so one 5-tuple in VLAN 10 and in VLAN 20 is two keys.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>

// Compiled in libagebloom: exported from the shared library, which hides
// everything else (core/export.h).
#pragma GCC visibility push(default)

namespace agebloom::packet {

// Link types, as libpcap's pcap_datalink() reports them (DLT_*) plus the
// LINKTYPE_* file values where they differ, so both a live DLT and a raw file
// header value work. Only these are supported; anything else gives
// Reason::unsupported_linktype.
namespace linktype {
inline constexpr uint32_t null = 0;          // DLT_NULL: 4-byte AF_ in capturing host's order
inline constexpr uint32_t en10mb = 1;        // DLT_EN10MB: Ethernet II
inline constexpr uint32_t ppp = 9;           // DLT_PPP (Cisco HDLC framing also accepted)
inline constexpr uint32_t raw = 12;          // DLT_RAW on Linux/most BSDs
inline constexpr uint32_t linktype_raw = 101;// LINKTYPE_RAW (file value of DLT_RAW)
inline constexpr uint32_t c_hdlc = 104;      // DLT_C_HDLC: Cisco HDLC
inline constexpr uint32_t loop = 108;        // DLT_LOOP: like NULL, network byte order
inline constexpr uint32_t linux_sll = 113;   // DLT_LINUX_SLL: 16-byte cooked header
inline constexpr uint32_t ppi = 192;         // DLT_PPI: per-packet info wrapper, inner DLT
inline constexpr uint32_t ipv4 = 228;        // LINKTYPE_IPV4: raw IPv4 only
inline constexpr uint32_t ipv6 = 229;        // LINKTYPE_IPV6: raw IPv6 only
inline constexpr uint32_t linux_sll2 = 276;  // DLT_LINUX_SLL2: 20-byte cooked header
}  // namespace linktype

// True when extract_key understands frames of this link type. The trace reader
// uses it to reject a capture at open time rather than per packet.
bool linktype_supported(uint32_t dlt) noexcept;

// What the key is made of. See the layout table above for the exact bytes.
enum class KeyMode : uint8_t {
  src_ip,  // source address. Every IP packet has one, including non-first fragments.
  dst_ip,  // destination address. Same coverage as src_ip.
  flow,    // 5-tuple (src, dst, upper-layer proto, sport, dport). TCP and UDP carry
           // their ports; every other protocol (ICMP, ESP, GRE, SCTP, IPv6 "no next
           // header", ...) keys on (src, dst, proto, 0, 0), so a flow filter still
           // covers it rather than passing it unparsed. Non-first fragments carry no
           // L4 header: Reason::non_first_fragment, no key.
  click,   // HTTP/1.x request in a TCP segment to a configured port: client (source)
           // address + method + request target, optionally narrowed to one query
           // parameter and/or widened by the Host header. Any uppercase method
           // token counts (GET, POST, HEAD, ...); it is part of the key, so a GET
           // and a HEAD of one URL are different keys. The target is kept raw
           // (no percent-decoding or normalisation).
  packet,  // the whole IP packet (exact-duplicate frames, as SPAN/TAP ports deliver
           // them twice): its bytes from the IP header on, with TTL / hop limit and
           // the IPv4 header checksum masked, plus the MACs and VLAN IDs unless
           // PacketOptions says otherwise. Any IP packet has one, fragments too.
           // A packet longer than the key (jumbo frames) gives key_too_long
           // unless PacketOptions::max_bytes bounds what is hashed.
};

// Click-mode configuration. Plain aggregate; the caller keeps `param` alive.
struct ClickOptions {
  static constexpr std::size_t kMaxPorts = 8;  // capacity of `ports`
  // TCP destination ports that carry HTTP requests; ports[0..port_count).
  std::array<uint16_t, kMaxPorts> ports{80, 8080};
  uint8_t port_count = 2;  // values above kMaxPorts are treated as kMaxPorts
  // Ignore `ports` and look for a request line on every TCP destination port.
  bool any_port = false;
  // Query parameter to key on, e.g. "adid" (NUL-terminated, case-sensitive,
  // compared without percent-decoding). nullptr or "" keys on the whole target.
  // When set, the target is replaced by that parameter's raw value; a request
  // without the parameter yields Reason::no_click_param.
  const char* param = nullptr;
  // Append the Host header value (lowercased; empty when the header is absent
  // from this segment, e.g. HTTP/1.0 or a request split across segments).
  bool include_host = false;
};

// Packet-mode configuration (KeyMode::packet). Plain aggregate.
struct PacketOptions {
  // Leave the VLAN IDs out: copies of one frame tagged differently (a TAP
  // aggregating several VLANs) are one key.
  bool ignore_vlan = false;
  // Leave the whole link layer out (MACs and VLAN IDs): copies seen before and
  // after a routed hop are one key.
  bool ignore_l2 = false;
  // Hash at most this many bytes of the IP packet (0: all of it). Bounds the
  // per-packet cost and lets jumbo frames key; copies must then agree only in
  // their first max_bytes bytes.
  uint32_t max_bytes = 0;
};

// Everything that shapes a key besides the mode. Plain aggregate; the caller
// keeps click.param alive.
struct KeyOptions {
  ClickOptions click;    // KeyMode::click
  PacketOptions packet;  // KeyMode::packet
  // Every mode but packet (which has PacketOptions): append the frame's VLAN
  // IDs, so one address or 5-tuple in two VLANs is two keys.
  bool vlan_in_key = false;
};

// Why a frame has no key. Stable names for stats and JSON: reason_name().
enum class Reason : uint8_t {
  ok = 0,                 // out holds the key
  unsupported_linktype,   // linktype not one of agebloom::packet::linktype
  truncated_l2,           // frame ends inside the link-layer header or a VLAN/PPPoE tag
  unsupported_l2,         // link layer carries something other than IPv4/IPv6
                          // (ARP, LLDP, MPLS, 802.3 length field, PPP control, ...)
  too_many_vlans,         // more than two 802.1Q/802.1ad/0x9100 tags
  truncated_l3,           // frame ends inside the IP header, or the IP length field
                          // claims more bytes than the frame has (captured, or on
                          // the wire when extract_key is given wire_len: a trace
                          // taken with a short snap length keys only then; a DPDK
                          // caller must pass a contiguous frame)
  bad_ip_version,         // version nibble disagrees with the link layer (or is not 4/6)
  bad_ipv4_ihl,           // IPv4 IHL < 5
  bad_ipv4_length,        // IPv4 total length < IHL * 4 (includes total length 0,
                          // as written by TSO captures)
  ipv6_ext_chain_too_long,// more than kMaxIpv6ExtHeaders extension headers
  truncated_ext_header,   // an IPv6 extension header runs past the IPv6 payload
  non_first_fragment,     // flow/click: fragment offset != 0, so no L4 header.
                          // src_ip/dst_ip keys are still produced for these.
  truncated_l4,           // TCP/UDP header runs past the IP payload
  bad_tcp_offset,         // TCP data offset < 5 words or past the IP payload
  no_http_request,        // click: not TCP to a configured port, or the payload does
                          // not start with "METHOD SP target SP HTTP/1.d" (includes
                          // empty payloads, e.g. bare ACKs)
  no_click_param,         // click with param: the target has no such query parameter
  http_request_incomplete,// click: "METHOD SP target..." runs to the end of the segment
                          // without " HTTP/1.d": the request line continues in the
                          // next TCP segment (long tracking URLs) or the capture cut
                          // it. With `param` (and no include_host) a parameter whose
                          // value ends inside the segment is still keyed.
  key_too_long,           // the key would exceed kMaxKeyBytes (long URL): never truncated
};
// The number of Reason values (ok included): sizes per-reason counters.
inline constexpr std::size_t kReasonCount = static_cast<std::size_t>(Reason::key_too_long) + 1;

// Stable snake_case name of the reason ("ok", "truncated_l2", ...).
const char* reason_name(Reason r) noexcept;

// Result of extract_key: the reason, and on success the protocol facts a
// caller's stats may want without re-parsing.
struct Result {
  Reason reason = Reason::ok;  // ok, or why there is no key
  uint8_t ip_version = 0;  // 4 or 6 once the IP header was found, else 0
  uint8_t ip_proto = 0;    // IPv4 protocol; IPv6: the protocol after the extension
                           // walk (flow/click), the first Next Header (src_ip/dst_ip)
  constexpr bool ok() const noexcept { return reason == Reason::ok; }  // a key was extracted
  constexpr explicit operator bool() const noexcept { return ok(); }  // ok()
};

// Longest key. 2 KiB holds any click key whose request line fits one standard
// Ethernet segment (payload <= 1460 bytes), so key_too_long only arises with
// jumbo frames or GRO/TSO-coalesced captures carrying URLs of 2 KiB and more.
// (1 KiB was too small: 10 of the 217 GETs in pcapplusplus_4KHttpRequests.pcap
// have 1.0-1.3 KB ad-tracking targets.) Such keys are refused, never shortened,
// since a shortened key could merge two different URLs.
inline constexpr std::size_t kMaxKeyBytes = 2048;
// Bound on the IPv6 extension-header walk (RFC 8200 allows each type at most
// once or twice; 8 covers every legitimate chain and caps hostile loops).
inline constexpr int kMaxIpv6ExtHeaders = 8;
// At most two VLAN tags (QinQ); a third is refused rather than walked.
inline constexpr int kMaxVlanTags = 2;
// The longest IP packet a packet key holds whole whatever the frame's L2:
// the key less its own fields (tag, MAC length, MACs, VLAN count, the IDs of
// kMaxVlanTags tags). Untagged frames fit 4 bytes more, --ignore-l2 16; the
// most --packet-bytes takes.
inline constexpr std::size_t kMaxPacketKeyIpBytes = kMaxKeyBytes - (1 + 1 + 12 + 1 + 2 * kMaxVlanTags);

// Fixed-capacity key: hash bytes[0 .. length). Only meaningful when the Result
// is ok; on failure `length` is 0. About 2 KiB: reuse one per worker (or one
// per burst slot) rather than zeroing a fresh one per packet; extract_key
// writes only the bytes it reports.
struct Key {
  uint8_t bytes[kMaxKeyBytes];  // only [0, length) is written
  uint16_t length = 0;  // key bytes in bytes[0, length)
};



namespace detail {
// extract_key without its Ethernet + IPv4 fast path: the general walk over
// every link type, VLAN tags, IPv6 extension headers, L4 and HTTP.
Result extract_key_walk(uint32_t linktype, const uint8_t* data, std::size_t len, KeyMode mode,
                        const KeyOptions& options, Key& out, std::size_t wire_len = 0) noexcept;
// The same with default KeyOptions but for `click`.
Result extract_key_walk(uint32_t linktype, const uint8_t* data, std::size_t len, KeyMode mode,
                        const ClickOptions& click, Key& out, std::size_t wire_len = 0) noexcept;
}  // namespace detail

}  // namespace agebloom::packet

#include "agebloom/packet/ethernet_ipv4_fast.hpp"

namespace agebloom::packet {

// Extract the key of `mode` from one captured frame.
//   linktype: the capture's DLT (see agebloom::packet::linktype)
//   data/len: the captured bytes (caplen); data may be null iff len == 0
//   click:    used only in KeyMode::click
//   wire_len: the frame's length on the wire (pcap's orig_len) when a snap
//             length cut the capture short; 0 (or len) for a whole frame.
//             With it, the IP and TCP length fields are checked against the
//             wire, and a key whose bytes were all captured is kept: a trace
//             of headers only still keys by address and 5-tuple (and click,
//             where the request line was captured). Packet keys need the
//             whole packet (truncated_l3 otherwise).
// Pure, allocation-free, bounds-checked; thread-safe for distinct `out`.
inline Result extract_key(uint32_t linktype, const uint8_t* data, std::size_t len, KeyMode mode,
                          const ClickOptions& click, Key& out, std::size_t wire_len = 0) noexcept {
  Result res;
  if (linktype == linktype::en10mb && data != nullptr && detail::ethernet_ipv4_fast(data, len, mode, out, res))
    return res;
  return detail::extract_key_walk(linktype, data, len, mode, click, out, wire_len);
}

// The same with every key option (packet mode, VLAN IDs in the key). A
// template only so that a braced `{}` argument still picks the ClickOptions
// form above, as it did before KeyOptions existed.
template <class Options>
  requires std::is_same_v<Options, KeyOptions>
inline Result extract_key(uint32_t linktype, const uint8_t* data, std::size_t len, KeyMode mode,
                          const Options& options, Key& out, std::size_t wire_len = 0) noexcept {
  Result res;
  if (!options.vlan_in_key && linktype == linktype::en10mb && data != nullptr &&
      detail::ethernet_ipv4_fast(data, len, mode, out, res))
    return res;
  return detail::extract_key_walk(linktype, data, len, mode, options, out, wire_len);
}

}  // namespace agebloom::packet

#pragma GCC visibility pop
