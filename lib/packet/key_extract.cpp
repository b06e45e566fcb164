// Key extraction: link layer → IP → IPv6 extension headers → TCP/UDP → HTTP.
//
// Every stage works on a (pointer, remaining length) view and checks the length
// before each read; a stage narrows the view for the next one. The IP stage clips
// the view to the IP length field, so Ethernet padding never reaches L4 and a
// lying length field can only make the view shorter, never longer.
#include "agebloom/packet/key_extract.hpp"

#include <cstring>

namespace agebloom::packet {
namespace {

constexpr uint16_t kEthIpv4 = 0x0800;
constexpr uint16_t kEthIpv6 = 0x86DD;
constexpr uint16_t kEthVlan = 0x8100;      // 802.1Q
constexpr uint16_t kEthQinQ = 0x88A8;      // 802.1ad
constexpr uint16_t kEthQinQOld = 0x9100;   // pre-standard QinQ
constexpr uint16_t kEthPppoeSession = 0x8864;

constexpr uint8_t kProtoTcp = 6;
constexpr uint8_t kProtoUdp = 17;

// Longest method token we accept ("VERSION-CONTROL" is 15); bounds the scan.
constexpr std::size_t kMaxMethodLen = 20;

inline uint16_t be16(const uint8_t* p) noexcept { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
inline uint16_t le16(const uint8_t* p) noexcept { return static_cast<uint16_t>(p[1] << 8 | p[0]); }
inline uint32_t be32(const uint8_t* p) noexcept {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
}
inline uint32_t le32(const uint8_t* p) noexcept {
  return uint32_t{p[3]} << 24 | uint32_t{p[2]} << 16 | uint32_t{p[1]} << 8 | p[0];
}

// A bounded view of the frame: [p, p + n).
struct View {
  const uint8_t* p;
  std::size_t n;
};

// Where the link layer left us: the IP packet and the version it announced
// (0 = decide by the version nibble, as for raw IP), and the link-layer facts
// a packet key or vlan_in_key keeps: the Ethernet MACs and the VLAN IDs.
struct L3Start {
  View ip;
  uint8_t version;
  const uint8_t* macs = nullptr;  // destination + source MAC (12 bytes); null off Ethernet
  uint8_t vlans = 0;              // VLAN tags crossed, outer first
  uint16_t vid[kMaxVlanTags] = {};
};

// ---------------------------------------------------------------- L2

Reason ip_from_ethertype(uint16_t type, View v, L3Start& out) noexcept;

// An ethertype, possibly behind up to kMaxVlanTags VLAN tags.
Reason ethertype_chain(uint16_t type, View v, L3Start& out) noexcept {
  int tags = 0;
  uint16_t vid[kMaxVlanTags] = {};
  while (type == kEthVlan || type == kEthQinQ || type == kEthQinQOld) {
    if (tags == kMaxVlanTags) return Reason::too_many_vlans;
    if (v.n < 4) return Reason::truncated_l2;
    vid[tags] = be16(v.p) & 0x0FFFu;  // the VLAN ID; priority and DEI are QoS, not identity
    type = be16(v.p + 2);  // TCI (2 bytes), then the inner ethertype
    v = {v.p + 4, v.n - 4};
    ++tags;
  }
  const Reason r = ip_from_ethertype(type, v, out);
  out.vlans = static_cast<uint8_t>(tags);
  for (int i = 0; i < tags; ++i) out.vid[i] = vid[i];
  return r;
}

// PPP protocol numbers for IP (RFC 1332 / RFC 5072).
Reason ip_from_ppp_protocol(uint16_t proto, View v, L3Start& out) noexcept {
  if (proto == 0x0021) { out = {v, 4}; return Reason::ok; }
  if (proto == 0x0057) { out = {v, 6}; return Reason::ok; }
  return Reason::unsupported_l2;
}

Reason ip_from_ethertype(uint16_t type, View v, L3Start& out) noexcept {
  switch (type) {
    case kEthIpv4: out = {v, 4}; return Reason::ok;
    case kEthIpv6: out = {v, 6}; return Reason::ok;
    case kEthPppoeSession:
      // ver/type, code, session id, length (6 bytes), then the PPP protocol.
      if (v.n < 8) return Reason::truncated_l2;
      return ip_from_ppp_protocol(be16(v.p + 6), {v.p + 8, v.n - 8}, out);
    default: return Reason::unsupported_l2;  // ARP, LLDP, MPLS, 802.3 lengths, ...
  }
}

// Cisco HDLC: address (0x0F unicast / 0x8F broadcast), control, ethertype.
Reason c_hdlc(View v, L3Start& out) noexcept {
  if (v.n < 4) return Reason::truncated_l2;
  return ethertype_chain(be16(v.p + 2), {v.p + 4, v.n - 4}, out);
}

// PPP in HDLC-like framing (RFC 1662): optional FF 03, then a 1- or 2-byte
// protocol (1 byte when protocol-field compression made it odd). Some routers
// write Cisco HDLC frames under DLT_PPP; their first byte (0x0F/0x8F) is not a
// valid PPP start, so it identifies them.
Reason ppp(View v, L3Start& out) noexcept {
  if (v.n >= 1 && (v.p[0] == 0x0F || v.p[0] == 0x8F)) return c_hdlc(v, out);
  if (v.n >= 2 && v.p[0] == 0xFF && v.p[1] == 0x03) v = {v.p + 2, v.n - 2};
  if (v.n < 1) return Reason::truncated_l2;
  if (v.p[0] & 1) return ip_from_ppp_protocol(v.p[0], {v.p + 1, v.n - 1}, out);
  if (v.n < 2) return Reason::truncated_l2;
  return ip_from_ppp_protocol(be16(v.p), {v.p + 2, v.n - 2}, out);
}

// NULL/LOOP: a 4-byte address family, in the capturing host's byte order for
// NULL and network order for LOOP. Captures come from either endianness, so
// accept both orders. IPv6 is 10 (Linux), 24 (NetBSD/OpenBSD), 28 (FreeBSD),
// 30 (macOS).
Reason null_loop(View v, L3Start& out) noexcept {
  if (v.n < 4) return Reason::truncated_l2;
  const uint32_t le = le32(v.p);
  const uint32_t be = be32(v.p);
  const View ip{v.p + 4, v.n - 4};
  auto is = [&](uint32_t af) { return le == af || be == af; };
  if (is(2)) { out = {ip, 4}; return Reason::ok; }
  if (is(10) || is(24) || is(28) || is(30)) { out = {ip, 6}; return Reason::ok; }
  return Reason::unsupported_l2;
}

// Dispatch on the link type. `nested` is set inside PPI so PPI cannot recurse.
Reason link_layer(uint32_t dlt, View v, L3Start& out, bool nested) noexcept {
  switch (dlt) {
    case linktype::en10mb:
      // dst MAC, src MAC, ethertype; values < 0x600 are 802.3 lengths and fall
      // through to unsupported_l2 in ip_from_ethertype.
      if (v.n < 14) return Reason::truncated_l2;
      if (Reason r = ethertype_chain(be16(v.p + 12), {v.p + 14, v.n - 14}, out); r != Reason::ok) return r;
      out.macs = v.p;
      return Reason::ok;
    case linktype::linux_sll:
      // packet type, ARPHRD, addr len, addr[8], protocol.
      if (v.n < 16) return Reason::truncated_l2;
      return ethertype_chain(be16(v.p + 14), {v.p + 16, v.n - 16}, out);
    case linktype::linux_sll2:
      // protocol, reserved, ifindex, ARPHRD, packet type, addr len, addr[8].
      if (v.n < 20) return Reason::truncated_l2;
      return ethertype_chain(be16(v.p), {v.p + 20, v.n - 20}, out);
    case linktype::raw:
    case linktype::linktype_raw: out = {v, 0}; return Reason::ok;
    case linktype::ipv4: out = {v, 4}; return Reason::ok;
    case linktype::ipv6: out = {v, 6}; return Reason::ok;
    case linktype::null:
    case linktype::loop: return null_loop(v, out);
    case linktype::ppp: return ppp(v, out);
    case linktype::c_hdlc: return c_hdlc(v, out);
    case linktype::ppi: {
      // version, flags, header length (LE16, includes itself), inner DLT (LE32).
      if (nested) return Reason::unsupported_linktype;
      if (v.n < 8) return Reason::truncated_l2;
      const std::size_t hdr = le16(v.p + 2);
      if (hdr < 8 || hdr > v.n) return Reason::truncated_l2;
      return link_layer(le32(v.p + 4), {v.p + hdr, v.n - hdr}, out, true);
    }
    default: return Reason::unsupported_linktype;
  }
}

// ---------------------------------------------------------------- L3

// The validated IP packet: addresses, upper-layer protocol, and the view of
// the IP payload (clipped to the length field).
struct Ip {
  uint8_t version;
  const uint8_t* src;
  const uint8_t* dst;
  uint8_t proto;      // IPv4 protocol / IPv6 Next Header (updated by the ext walk)
  bool later_fragment;  // IPv4 fragment offset != 0 (IPv6: found by the ext walk)
  View payload;       // the captured part of the IP payload
  std::size_t cut;    // payload bytes on the wire that the capture left out (snap length)
};

// `cut`: bytes the capture left out at the end of the frame (its wire length
// less its captured length), which the length fields may count.
Reason parse_ipv4(View v, std::size_t cut, Ip& ip) noexcept {
  if (v.n < 20) return Reason::truncated_l3;
  const std::size_t ihl = (v.p[0] & 0x0Fu) * 4u;
  if (ihl < 20) return Reason::bad_ipv4_ihl;
  const std::size_t total = be16(v.p + 2);
  if (total < ihl) return Reason::bad_ipv4_length;
  // Bytes beyond `total` are link padding; fewer on the wire means a damaged
  // frame. The header itself (options included) must have been captured.
  if (total > v.n + cut || ihl > v.n) return Reason::truncated_l3;
  const std::size_t have = total < v.n ? total : v.n;
  ip.version = 4;
  ip.src = v.p + 12;
  ip.dst = v.p + 16;
  ip.proto = v.p[9];
  ip.later_fragment = (be16(v.p + 6) & 0x1FFFu) != 0;
  ip.payload = {v.p + ihl, have - ihl};
  ip.cut = total - have;
  return Reason::ok;
}

Reason parse_ipv6(View v, std::size_t cut, Ip& ip) noexcept {
  if (v.n < 40) return Reason::truncated_l3;
  const std::size_t payload = be16(v.p + 4);
  if (payload > v.n - 40 + cut) return Reason::truncated_l3;
  const std::size_t have = payload < v.n - 40 ? payload : v.n - 40;
  ip.version = 6;
  ip.src = v.p + 8;
  ip.dst = v.p + 24;
  ip.proto = v.p[6];
  ip.later_fragment = false;
  ip.payload = {v.p + 40, have};
  ip.cut = payload - have;
  return Reason::ok;
}

Reason parse_ip(const L3Start& l3, std::size_t cut, Ip& ip) noexcept {
  if (l3.ip.n < 1) return Reason::truncated_l3;
  const uint8_t version = l3.ip.p[0] >> 4;
  if (l3.version != 0 && version != l3.version) return Reason::bad_ip_version;
  if (version == 4) return parse_ipv4(l3.ip, cut, ip);
  if (version == 6) return parse_ipv6(l3.ip, cut, ip);
  return Reason::bad_ip_version;
}

// Walk IPv6 extension headers to the upper-layer protocol, at most
// kMaxIpv6ExtHeaders of them. Every header is at least 8 bytes, so the walk
// always advances; the bound only caps hostile chains.
Reason walk_ipv6_ext(Ip& ip) noexcept {
  View v = ip.payload;
  for (int count = 0;; ++count) {
    std::size_t len;
    switch (ip.proto) {
      case 0:    // hop-by-hop options
      case 43:   // routing
      case 60:   // destination options
        if (v.n < 2) return Reason::truncated_ext_header;
        len = (std::size_t{v.p[1]} + 1) * 8;
        break;
      case 44:   // fragment: fixed 8 bytes, offset in the top 13 bits of bytes 2-3
        if (v.n < 8) return Reason::truncated_ext_header;
        if ((be16(v.p + 2) >> 3) != 0) ip.later_fragment = true;
        len = 8;
        break;
      case 51:   // AH: length in 4-byte words, minus 2
        if (v.n < 2) return Reason::truncated_ext_header;
        len = (std::size_t{v.p[1]} + 2) * 4;
        break;
      default:
        ip.payload = v;
        return Reason::ok;
    }
    if (count == kMaxIpv6ExtHeaders) return Reason::ipv6_ext_chain_too_long;
    if (len > v.n + ip.cut) return Reason::truncated_ext_header;
    if (len > v.n) return Reason::truncated_l4;  // the capture cut the chain: no upper layer to read
    ip.proto = v.p[0];
    v = {v.p + len, v.n - len};
    // A later fragment's payload is not a header chain: stop here.
    if (ip.later_fragment) {
      ip.payload = v;
      return Reason::ok;
    }
  }
}

// ---------------------------------------------------------------- L4

struct L4 {
  uint16_t sport = 0;
  uint16_t dport = 0;
  View payload{nullptr, 0};  // TCP payload (click mode only)
};

Reason parse_l4(const Ip& ip, L4& l4) noexcept {
  const View v = ip.payload;
  if (ip.proto == kProtoUdp) {
    if (v.n < 8) return Reason::truncated_l4;
  } else if (ip.proto == kProtoTcp) {
    if (v.n < 20) return Reason::truncated_l4;
    const std::size_t doff = (v.p[12] >> 4) * 4u;
    if (doff < 20 || doff > v.n + ip.cut) return Reason::bad_tcp_offset;
    // Under a snap length the options may be cut: the payload is what was captured of it.
    l4.payload = doff <= v.n ? View{v.p + doff, v.n - doff} : View{v.p + v.n, 0};
  } else {
    return Reason::ok;  // other protocols: ports stay 0
  }
  l4.sport = be16(v.p);
  l4.dport = be16(v.p + 2);
  return Reason::ok;
}

// ---------------------------------------------------------------- HTTP

struct Request {
  View method{nullptr, 0};
  View target{nullptr, 0};
  std::size_t line_end = 0;  // offset just past "HTTP/1.d"
};

inline bool is_method_char(uint8_t c) noexcept { return (c >= 'A' && c <= 'Z') || c == '-' || c == '_'; }
// Request-target bytes: anything visible, including obs-text that real clients
// send unescaped; SP ends it, controls and DEL make the line invalid.
inline bool is_target_char(uint8_t c) noexcept { return c > 0x20 && c != 0x7F; }

enum class LineParse : uint8_t { ok, incomplete, invalid };

// "METHOD SP request-target SP HTTP/1.d" at the very start of the payload.
// `incomplete`: a valid method, SP and target bytes run to the end of the
// segment, i.e. the request line continues in the next segment (long tracking
// URLs do) or the capture cut it; req.target then holds the partial target.
LineParse parse_request_line(View v, Request& req) noexcept {
  std::size_t i = 0;
  while (i < v.n && i <= kMaxMethodLen && is_method_char(v.p[i])) ++i;
  if (i == 0 || i > kMaxMethodLen || !(v.p[0] >= 'A' && v.p[0] <= 'Z')) return LineParse::invalid;
  if (i >= v.n || v.p[i] != ' ') return LineParse::invalid;
  req.method = {v.p, i};
  const std::size_t t0 = ++i;
  while (i < v.n && is_target_char(v.p[i])) ++i;
  req.target = {v.p + t0, i - t0};
  if (i == t0) return LineParse::invalid;
  if (i == v.n) return LineParse::incomplete;
  if (v.p[i] != ' ') return LineParse::invalid;
  ++i;
  static constexpr char kVersion[] = "HTTP/1.";
  constexpr std::size_t kVersionLen = sizeof(kVersion) - 1;
  if (v.n - i < kVersionLen + 1) return LineParse::invalid;
  if (std::memcmp(v.p + i, kVersion, kVersionLen) != 0) return LineParse::invalid;
  const uint8_t minor = v.p[i + kVersionLen];
  if (minor < '0' || minor > '9') return LineParse::invalid;
  req.line_end = i + kVersionLen + 1;
  return LineParse::ok;
}

// Raw value of query parameter `name` (length nlen) in `target`; false if absent.
// "a?x" and "a?x=" both give an empty value for x.
bool find_query_param(View target, const char* name, std::size_t nlen, View& value) noexcept {
  const uint8_t* q = static_cast<const uint8_t*>(std::memchr(target.p, '?', target.n));
  if (q == nullptr) return false;
  const uint8_t* end = target.p + target.n;
  if (const void* hash = std::memchr(q, '#', static_cast<std::size_t>(end - q))) {
    end = static_cast<const uint8_t*>(hash);
  }
  for (const uint8_t* pair = q + 1;; ) {
    const uint8_t* amp = pair;
    while (amp < end && *amp != '&') ++amp;
    const uint8_t* eq = pair;
    while (eq < amp && *eq != '=') ++eq;
    if (static_cast<std::size_t>(eq - pair) == nlen && std::memcmp(pair, name, nlen) == 0) {
      value = eq < amp ? View{eq + 1, static_cast<std::size_t>(amp - eq - 1)} : View{amp, 0};
      return true;
    }
    if (amp == end) return false;
    pair = amp + 1;
  }
}

inline uint8_t lower(uint8_t c) noexcept { return (c >= 'A' && c <= 'Z') ? c + ('a' - 'A') : c; }

// Value of the Host header in the header lines after the request line, trimmed
// of optional whitespace. Only complete lines inside the payload count; the
// search stops at the blank line ending the headers. Empty view if absent.
// `cut` is set when the bytes end inside the headers before a Host line
// (the segment or the snap length ended them): the Host is then unknown,
// not absent.
View find_host(View v, std::size_t from, bool& cut) noexcept {
  cut = false;
  std::size_t s = from;
  // Skip the rest of the request line.
  while (s < v.n && v.p[s] != '\n') ++s;
  ++s;
  while (s < v.n) {
    std::size_t e = s;
    while (e < v.n && v.p[e] != '\n') ++e;
    if (e == v.n) {  // incomplete line (segment or snaplen cut)
      cut = true;
      break;
    }
    std::size_t line_end = e;
    if (line_end > s && v.p[line_end - 1] == '\r') --line_end;
    if (line_end == s) break;  // blank line: end of headers
    static constexpr char kHost[] = "host:";
    if (line_end - s >= 5) {
      bool match = true;
      for (std::size_t k = 0; k < 5; ++k) match &= lower(v.p[s + k]) == static_cast<uint8_t>(kHost[k]);
      if (match) {
        std::size_t a = s + 5;
        std::size_t b = line_end;
        while (a < b && (v.p[a] == ' ' || v.p[a] == '\t')) ++a;
        while (b > a && (v.p[b - 1] == ' ' || v.p[b - 1] == '\t')) --b;
        return {v.p + a, b - a};
      }
    }
    s = e + 1;
  }
  if (s >= v.n) cut = true;  // the bytes ended right after a line: the blank line was never seen
  return {v.p, 0};
}

// ---------------------------------------------------------------- key bytes

// Appends to out.bytes, remembering (not performing) any overflow.
class KeyWriter {
 public:
  explicit KeyWriter(Key& key) noexcept : key_(key) {}
  void u8(uint8_t b) noexcept {
    if (n_ + 1 > kMaxKeyBytes) { overflow_ = true; return; }
    key_.bytes[n_++] = b;
  }
  void u16(uint16_t v) noexcept { u8(static_cast<uint8_t>(v >> 8)); u8(static_cast<uint8_t>(v)); }
  void bytes(const uint8_t* p, std::size_t len) noexcept {
    if (overflow_ || len > kMaxKeyBytes - n_) { overflow_ = true; return; }
    std::memcpy(key_.bytes + n_, p, len);
    n_ += len;
  }
  // Length-prefixed field; lengths above 0xFFFF cannot fit the key anyway.
  void field16(View v) noexcept {
    if (v.n > 0xFFFF) { overflow_ = true; return; }
    u16(static_cast<uint16_t>(v.n));
    bytes(v.p, v.n);
  }
  void lowered16(View v) noexcept {
    if (v.n > 0xFFFF || v.n + 2 > kMaxKeyBytes - n_) { overflow_ = true; return; }
    u16(static_cast<uint16_t>(v.n));
    for (std::size_t i = 0; i < v.n; ++i) key_.bytes[n_++] = lower(v.p[i]);
  }
  std::size_t size() const noexcept { return n_; }
  Reason finish() noexcept {
    if (overflow_) { key_.length = 0; return Reason::key_too_long; }
    key_.length = static_cast<uint16_t>(n_);
    return Reason::ok;
  }

 private:
  Key& key_;
  std::size_t n_ = 0;
  bool overflow_ = false;
};

inline std::size_t addr_len(const Ip& ip) noexcept { return ip.version == 4 ? 4 : 16; }
inline uint8_t tag(uint8_t kind, const Ip& ip) noexcept { return static_cast<uint8_t>(kind << 4 | ip.version); }

bool port_selected(const ClickOptions& click, uint16_t dport) noexcept {
  if (click.any_port) return true;
  const std::size_t n = click.port_count < ClickOptions::kMaxPorts ? click.port_count : ClickOptions::kMaxPorts;
  for (std::size_t i = 0; i < n; ++i) {
    if (click.ports[i] == dport) return true;
  }
  return false;
}

// vlan_in_key's suffix (and packet mode's VLAN field): the count, then the IDs.
void vlan_ids(KeyWriter& w, const L3Start& l3) noexcept {
  w.u8(l3.vlans);
  for (uint8_t i = 0; i < l3.vlans; ++i) w.u16(l3.vid[i]);
}

// KeyMode::packet (layout in key_extract.hpp). `ip` is parsed but not walked:
// its payload view still ends where the IP length field says.
Reason packet_key(const L3Start& l3, const Ip& ip, const PacketOptions& po, Key& out) noexcept {
  KeyWriter w(out);
  w.u8(tag(8, ip));
  const bool macs = !po.ignore_l2 && l3.macs != nullptr;
  w.u8(macs ? 12 : 0);
  if (macs) w.bytes(l3.macs, 12);
  if (po.ignore_l2 || po.ignore_vlan) w.u8(0);
  else vlan_ids(w, l3);
  std::size_t n = static_cast<std::size_t>(ip.payload.p + ip.payload.n - l3.ip.p);
  if (po.max_bytes != 0 && po.max_bytes < n) n = po.max_bytes;
  const std::size_t at = w.size();
  w.bytes(l3.ip.p, n);
  const Reason r = w.finish();
  if (r != Reason::ok) return r;
  // What each forwarding hop (or a SPAN session's mirror path) rewrites: IPv4
  // TTL and the checksum that covers it; IPv6 hop limit (no header checksum).
  auto zero = [&](std::size_t off) noexcept { if (off < n) out.bytes[at + off] = 0; };
  if (ip.version == 4) {
    zero(8);
    zero(10);
    zero(11);
  } else {
    zero(7);
  }
  return Reason::ok;
}

Reason click_key(const Ip& ip, const L4& l4, const ClickOptions& click, const L3Start* vlans, Key& out) noexcept {
  if (ip.proto != kProtoTcp || !port_selected(click, l4.dport)) return Reason::no_http_request;
  Request req;
  const LineParse line = parse_request_line(l4.payload, req);
  if (line == LineParse::invalid) return Reason::no_http_request;

  const bool by_param = click.param != nullptr && click.param[0] != '\0';
  View target = req.target;
  if (line == LineParse::incomplete) {
    // Only a parameter whose value ends ('&' or '#') inside this segment can
    // still be keyed exactly; Host would be in a later segment.
    if (!by_param || click.include_host) return Reason::http_request_incomplete;
    if (!find_query_param(req.target, click.param, std::strlen(click.param), target) ||
        target.p + target.n == req.target.p + req.target.n) {
      return Reason::http_request_incomplete;
    }
  } else if (by_param && !find_query_param(req.target, click.param, std::strlen(click.param), target)) {
    return Reason::no_click_param;
  }
  const uint8_t kind = static_cast<uint8_t>(4 + (by_param ? 1 : 0) + (click.include_host ? 2 : 0));
  View host{nullptr, 0};
  if (click.include_host) {
    // A Host the bytes cut off would key the request as one without a
    // Host, merging requests to different hosts: refused, never guessed.
    bool cut = false;
    host = find_host(l4.payload, req.line_end, cut);
    if (host.n == 0 && cut) return Reason::http_request_incomplete;
  }

  KeyWriter w(out);
  w.u8(tag(kind, ip));
  w.bytes(ip.src, addr_len(ip));
  w.u8(static_cast<uint8_t>(req.method.n));  // <= kMaxMethodLen
  w.bytes(req.method.p, req.method.n);
  w.field16(target);
  if (click.include_host) w.lowered16(host);
  if (vlans != nullptr) vlan_ids(w, *vlans);
  return w.finish();
}

}  // namespace

bool linktype_supported(uint32_t dlt) noexcept {
  switch (dlt) {
    case linktype::null:
    case linktype::en10mb:
    case linktype::ppp:
    case linktype::raw:
    case linktype::linktype_raw:
    case linktype::c_hdlc:
    case linktype::loop:
    case linktype::linux_sll:
    case linktype::ppi:
    case linktype::ipv4:
    case linktype::ipv6:
    case linktype::linux_sll2: return true;
    default: return false;
  }
}

const char* reason_name(Reason r) noexcept {
  switch (r) {
    case Reason::ok: return "ok";
    case Reason::unsupported_linktype: return "unsupported_linktype";
    case Reason::truncated_l2: return "truncated_l2";
    case Reason::unsupported_l2: return "unsupported_l2";
    case Reason::too_many_vlans: return "too_many_vlans";
    case Reason::truncated_l3: return "truncated_l3";
    case Reason::bad_ip_version: return "bad_ip_version";
    case Reason::bad_ipv4_ihl: return "bad_ipv4_ihl";
    case Reason::bad_ipv4_length: return "bad_ipv4_length";
    case Reason::ipv6_ext_chain_too_long: return "ipv6_ext_chain_too_long";
    case Reason::truncated_ext_header: return "truncated_ext_header";
    case Reason::non_first_fragment: return "non_first_fragment";
    case Reason::truncated_l4: return "truncated_l4";
    case Reason::bad_tcp_offset: return "bad_tcp_offset";
    case Reason::no_http_request: return "no_http_request";
    case Reason::no_click_param: return "no_click_param";
    case Reason::http_request_incomplete: return "http_request_incomplete";
    case Reason::key_too_long: return "key_too_long";
  }
  return "unknown";
}

namespace detail {

Result extract_key_walk(uint32_t linktype, const uint8_t* data, std::size_t len, KeyMode mode,
                        const ClickOptions& click, Key& out, std::size_t wire_len) noexcept {
  KeyOptions options;
  options.click = click;
  return extract_key_walk(linktype, data, len, mode, options, out, wire_len);
}

Result extract_key_walk(uint32_t linktype, const uint8_t* data, std::size_t len, KeyMode mode,
                        const KeyOptions& options, Key& out, std::size_t wire_len) noexcept {
  out.length = 0;
  Result res;
  if (data == nullptr) len = 0;
  const std::size_t cut = wire_len > len ? wire_len - len : 0;  // what a snap length left out

  // L2: find the IP header.
  L3Start l3{};
  if (Reason r = link_layer(linktype, {data, len}, l3, false); r != Reason::ok) {
    res.reason = r;
    return res;
  }

  // L3: validate the IP header and clip to its length field.
  Ip ip{};
  if (Reason r = parse_ip(l3, cut, ip); r != Reason::ok) {
    res.reason = r;
    return res;
  }
  res.ip_version = ip.version;
  res.ip_proto = ip.proto;

  if (mode == KeyMode::packet) {
    // The whole packet is the key: a cut one cannot be told from another
    // that starts with the same bytes.
    res.reason = ip.cut ? Reason::truncated_l3 : packet_key(l3, ip, options.packet, out);
    return res;
  }
  if (mode == KeyMode::src_ip || mode == KeyMode::dst_ip) {
    KeyWriter w(out);
    const bool src = mode == KeyMode::src_ip;
    w.u8(tag(src ? 1 : 2, ip));
    w.bytes(src ? ip.src : ip.dst, addr_len(ip));
    if (options.vlan_in_key) vlan_ids(w, l3);
    res.reason = w.finish();
    return res;
  }

  // IPv6 extension headers, then the fragment rule: only the first fragment
  // carries the L4 header.
  if (ip.version == 6) {
    res.reason = walk_ipv6_ext(ip);
    res.ip_proto = ip.proto;
    if (res.reason != Reason::ok) return res;
  }
  if (ip.later_fragment) {
    res.reason = Reason::non_first_fragment;
    return res;
  }

  // L4: ports (and the TCP payload for click).
  L4 l4;
  if (Reason r = parse_l4(ip, l4); r != Reason::ok) {
    res.reason = r;
    return res;
  }

  if (mode == KeyMode::flow) {
    KeyWriter w(out);
    w.u8(tag(3, ip));
    w.bytes(ip.src, addr_len(ip));
    w.bytes(ip.dst, addr_len(ip));
    w.u8(ip.proto);
    w.u16(l4.sport);
    w.u16(l4.dport);
    if (options.vlan_in_key) vlan_ids(w, l3);
    res.reason = w.finish();
    return res;
  }

  // Payload: the HTTP request line.
  res.reason = click_key(ip, l4, options.click, options.vlan_in_key ? &l3 : nullptr, out);
  return res;
}

}  // namespace detail

}  // namespace agebloom::packet
