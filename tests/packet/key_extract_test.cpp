// Unit tests for agebloom::packet::extract_key over hand-built frames.
#include "agebloom/packet/key_extract.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <set>
#include <string>

#include "builders.hpp"

namespace agebloom::packet {
namespace {

using namespace agebloom::packet::test;  // NOLINT: test-local builders

constexpr KeyMode kAllModes[] = {KeyMode::src_ip, KeyMode::dst_ip, KeyMode::flow, KeyMode::click, KeyMode::packet};

struct Extracted {
  Result result;
  Bytes key;
};

// Runs extract_key over an exact-size heap copy of the frame (see exact_copy).
Extracted run(const Bytes& frame, KeyMode mode, const ClickOptions& click = {},
              uint32_t dlt = linktype::en10mb, std::size_t len = SIZE_MAX) {
  if (len == SIZE_MAX) len = frame.size();
  auto buf = exact_copy(frame.data(), len);
  Key key;
  Extracted e;
  e.result = extract_key(dlt, buf.get(), len, mode, click, key);
  if (e.result.ok()) {
    EXPECT_GT(key.length, 0u);
    EXPECT_LE(key.length, kMaxKeyBytes);
    e.key.assign(key.bytes, key.bytes + key.length);
  } else {
    EXPECT_EQ(key.length, 0u);
  }
  return e;
}

Reason reason_of(const Bytes& frame, KeyMode mode, const ClickOptions& click = {},
                 uint32_t dlt = linktype::en10mb) {
  return run(frame, mode, click, dlt).result.reason;
}

Bytes expected_addr_key(uint8_t tag, const uint8_t* addr, std::size_t n) {
  Bytes b{tag};
  b.insert(b.end(), addr, addr + n);
  return b;
}

Bytes click_key4(std::string_view method, std::string_view target) {
  Bytes b{0x44};
  b.insert(b.end(), kClient4.begin(), kClient4.end());
  b.push_back(static_cast<uint8_t>(method.size()));
  b.insert(b.end(), method.begin(), method.end());
  put16(b, static_cast<uint16_t>(target.size()));
  b.insert(b.end(), target.begin(), target.end());
  return b;
}

// ------------------------------------------------------------ modes and layout

TEST(KeyExtract, Ipv4KeyLayoutForEveryMode) {
  const Bytes frame = eth_ipv4_tcp(http_request("GET", "/index.html"));

  EXPECT_EQ(run(frame, KeyMode::src_ip).key, expected_addr_key(0x14, kClient4.data(), 4));
  EXPECT_EQ(run(frame, KeyMode::dst_ip).key, expected_addr_key(0x24, kServer4.data(), 4));

  Bytes flow{0x34};
  flow.insert(flow.end(), kClient4.begin(), kClient4.end());
  flow.insert(flow.end(), kServer4.begin(), kServer4.end());
  flow.push_back(6);
  put16(flow, 40000);
  put16(flow, 80);
  const Extracted f = run(frame, KeyMode::flow);
  EXPECT_EQ(f.key, flow);
  EXPECT_EQ(f.result.ip_version, 4);
  EXPECT_EQ(f.result.ip_proto, 6);

  EXPECT_EQ(run(frame, KeyMode::click).key, click_key4("GET", "/index.html"));
}

TEST(KeyExtract, Ipv6KeyLayoutForEveryMode) {
  const Bytes frame = cat({ethernet(0x86DD), ipv6(17, kClient6, kServer6, udp(5353, 53, text("q")))});
  EXPECT_EQ(run(frame, KeyMode::src_ip).key, expected_addr_key(0x16, kClient6.data(), 16));
  EXPECT_EQ(run(frame, KeyMode::dst_ip).key, expected_addr_key(0x26, kServer6.data(), 16));

  Bytes flow{0x36};
  flow.insert(flow.end(), kClient6.begin(), kClient6.end());
  flow.insert(flow.end(), kServer6.begin(), kServer6.end());
  flow.push_back(17);
  put16(flow, 5353);
  put16(flow, 53);
  EXPECT_EQ(run(frame, KeyMode::flow).key, flow);
  EXPECT_EQ(reason_of(frame, KeyMode::click), Reason::no_http_request);  // UDP
}

TEST(KeyExtract, Ipv6ClickKey) {
  const Bytes frame = eth_ipv6_tcp(http_request("GET", "/a"));
  Bytes want{0x46};
  want.insert(want.end(), kClient6.begin(), kClient6.end());
  want.push_back(3);
  for (char c : std::string_view("GET")) want.push_back(static_cast<uint8_t>(c));
  put16(want, 2);
  want.push_back('/');
  want.push_back('a');
  EXPECT_EQ(run(frame, KeyMode::click).key, want);
}

TEST(KeyExtract, KeysDistinctAcrossFamiliesAndModes) {
  // An IPv4 address and an IPv6 address whose first bytes equal it, and the
  // same address in src and dst position: all keys must differ.
  const Ip6 v6_like{10, 0, 0, 1, 10, 0, 0, 1, 10, 0, 0, 1, 10, 0, 0, 1};
  const Bytes v4 = cat({ethernet(0x0800), ipv4(6, kClient4, kClient4, tcp(80, 80, http_request("GET", "/")))});
  const Bytes v6 = cat({ethernet(0x86DD), ipv6(6, v6_like, v6_like, tcp(80, 80, http_request("GET", "/")))});
  std::set<Bytes> keys;
  int produced = 0;
  for (const Bytes* frame : {&v4, &v6}) {
    for (KeyMode mode : kAllModes) {
      const Extracted e = run(*frame, mode);
      ASSERT_TRUE(e.result.ok()) << reason_name(e.result.reason);
      keys.insert(e.key);
      ++produced;
    }
    ClickOptions host;
    host.include_host = true;
    keys.insert(run(*frame, KeyMode::click, host).key);
    ++produced;
  }
  EXPECT_EQ(keys.size(), static_cast<std::size_t>(produced));
}

// ------------------------------------------------------------ link layers

TEST(KeyExtract, VlanTagsZeroOneTwo) {
  const std::initializer_list<uint16_t> stacks[] = {{}, {0x8100}, {0x88A8}, {0x9100}, {0x88A8, 0x8100}, {0x9100, 0x8100}, {0x8100, 0x8100}};
  const Bytes want = run(eth_ipv4_tcp(http_request("GET", "/x")), KeyMode::flow).key;
  for (const auto& tags : stacks) {
    for (KeyMode mode : kAllModes) {
      const Bytes v4 = eth_ipv4_tcp(http_request("GET", "/x"), 80, tags);
      const Bytes v6 = eth_ipv6_tcp(http_request("GET", "/x"), 80, tags);
      EXPECT_EQ(reason_of(v4, mode), Reason::ok) << tags.size() << " tags";
      EXPECT_EQ(reason_of(v6, mode), Reason::ok) << tags.size() << " tags";
    }
    EXPECT_EQ(run(eth_ipv4_tcp(http_request("GET", "/x"), 80, tags), KeyMode::flow).key, want);
  }
}

TEST(KeyExtract, ThreeVlanTagsRejected) {
  const Bytes frame = eth_ipv4_tcp(http_request("GET", "/"), 80, {0x88A8, 0x8100, 0x8100});
  for (KeyMode mode : kAllModes) EXPECT_EQ(reason_of(frame, mode), Reason::too_many_vlans);
}

TEST(KeyExtract, NonIpEthertype) {
  Bytes arp = ethernet(0x0806);
  arp.resize(arp.size() + 28, 0);
  EXPECT_EQ(reason_of(arp, KeyMode::src_ip), Reason::unsupported_l2);
  Bytes ieee8023 = ethernet(0x0040);  // an 802.3 length field
  ieee8023.resize(ieee8023.size() + 64, 0);
  EXPECT_EQ(reason_of(ieee8023, KeyMode::src_ip), Reason::unsupported_l2);
  // VLAN-tagged ARP: the inner ethertype decides.
  EXPECT_EQ(reason_of(cat({ethernet(0x0806, {0x8100}), Bytes(28, 0)}), KeyMode::src_ip), Reason::unsupported_l2);
}

TEST(KeyExtract, OtherLinkTypesGiveTheSameKey) {
  const Bytes ip = ipv4(6, kClient4, kServer4, tcp(40000, 80, http_request("GET", "/x")));
  const Bytes ip6 = ipv6(6, kClient6, kServer6, tcp(40000, 80, http_request("GET", "/x")));
  const Bytes want4 = run(cat({ethernet(0x0800), ip}), KeyMode::click).key;
  const Bytes want6 = run(cat({ethernet(0x86DD), ip6}), KeyMode::click).key;

  Bytes sll{0, 0, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0};  // incoming, ARPHRD_ETHER, 6-byte addr
  put16(sll, 0x0800);
  Bytes sll2;
  put16(sll2, 0x86DD);
  sll2.resize(20, 0);
  struct Case {
    const char* name;
    uint32_t dlt;
    Bytes frame;
    const Bytes* want;
  };
  const Case cases[] = {
      {"sll", linktype::linux_sll, cat({sll, ip}), &want4},
      {"sll2", linktype::linux_sll2, cat({sll2, ip6}), &want6},
      {"raw12 v4", linktype::raw, ip, &want4},
      {"raw12 v6", linktype::raw, ip6, &want6},
      {"raw101", linktype::linktype_raw, ip6, &want6},
      {"ipv4", linktype::ipv4, ip, &want4},
      {"ipv6", linktype::ipv6, ip6, &want6},
      {"null LE inet", linktype::null, cat({Bytes{2, 0, 0, 0}, ip}), &want4},
      {"null BE inet6 (30)", linktype::null, cat({Bytes{0, 0, 0, 30}, ip6}), &want6},
      {"null LE inet6 (24)", linktype::null, cat({Bytes{24, 0, 0, 0}, ip6}), &want6},
      {"loop", linktype::loop, cat({Bytes{0, 0, 0, 2}, ip}), &want4},
      {"ppp", linktype::ppp, cat({Bytes{0xFF, 0x03, 0x00, 0x21}, ip}), &want4},
      {"ppp pfc", linktype::ppp, cat({Bytes{0x57}, ip6}), &want6},
      {"ppp carrying cisco hdlc", linktype::ppp, cat({Bytes{0x0F, 0x00, 0x08, 0x00}, ip}), &want4},
      {"c_hdlc", linktype::c_hdlc, cat({Bytes{0x8F, 0x00, 0x86, 0xDD}, ip6}), &want6},
      {"ppi/en10mb", linktype::ppi, cat({Bytes{0, 0, 8, 0, 1, 0, 0, 0}, ethernet(0x0800), ip}), &want4},
      {"pppoe", linktype::en10mb, cat({ethernet(0x8864), Bytes{0x11, 0, 0, 1, 0, 0, 0x00, 0x57}, ip6}), &want6},
  };
  for (const Case& c : cases) {
    const Extracted e = run(c.frame, KeyMode::click, {}, c.dlt);
    EXPECT_EQ(e.result.reason, Reason::ok) << c.name << ": " << reason_name(e.result.reason);
    EXPECT_EQ(e.key, *c.want) << c.name;
    EXPECT_TRUE(linktype_supported(c.dlt)) << c.name;
  }
}

TEST(KeyExtract, LinkTypeEdgeCases) {
  const Bytes ip = ipv4(17, kClient4, kServer4, udp(1, 2));
  EXPECT_EQ(reason_of(ip, KeyMode::src_ip, {}, 105 /* IEEE802_11 */), Reason::unsupported_linktype);
  EXPECT_FALSE(linktype_supported(105));
  EXPECT_EQ(reason_of(cat({Bytes{7, 0, 0, 0}, ip}), KeyMode::src_ip, {}, linktype::null), Reason::unsupported_l2);
  EXPECT_EQ(reason_of(cat({Bytes{0xFF, 0x03, 0xC0, 0x21}, ip}), KeyMode::src_ip, {}, linktype::ppp),
            Reason::unsupported_l2);  // LCP
  // PPI must not nest, and its header length must fit.
  EXPECT_EQ(reason_of(cat({Bytes{0, 0, 8, 0, 192, 0, 0, 0}, ip}), KeyMode::src_ip, {}, linktype::ppi),
            Reason::unsupported_linktype);
  EXPECT_EQ(reason_of(cat({Bytes{0, 0, 0xFF, 0, 1, 0, 0, 0}, ip}), KeyMode::src_ip, {}, linktype::ppi),
            Reason::truncated_l2);
  EXPECT_EQ(reason_of(cat({Bytes{0, 0, 4, 0, 1, 0, 0, 0}, ip}), KeyMode::src_ip, {}, linktype::ppi),
            Reason::truncated_l2);
  // Raw IP: the version nibble decides, and must be 4 or 6.
  Bytes v5 = ip;
  v5[0] = 0x55;
  EXPECT_EQ(reason_of(v5, KeyMode::src_ip, {}, linktype::raw), Reason::bad_ip_version);
  // Ethertype IPv4 carrying an IPv6 header.
  EXPECT_EQ(reason_of(cat({ethernet(0x0800), ipv6(17, kClient6, kServer6, udp(1, 2))}), KeyMode::src_ip),
            Reason::bad_ip_version);
  // No data at all.
  Key key;
  EXPECT_EQ(extract_key(linktype::en10mb, nullptr, 0, KeyMode::src_ip, {}, key).reason, Reason::truncated_l2);
  EXPECT_EQ(extract_key(linktype::raw, nullptr, 0, KeyMode::src_ip, {}, key).reason, Reason::truncated_l3);
}

// ------------------------------------------------------------ IPv4 validation

TEST(KeyExtract, Ipv4HeaderValidation) {
  const Bytes payload = tcp(40000, 80, http_request("GET", "/"));
  for (uint8_t ihl = 0; ihl < 5; ++ihl) {
    Ipv4Opts o;
    o.ihl = ihl;
    EXPECT_EQ(reason_of(cat({ethernet(0x0800), ipv4(6, kClient4, kServer4, payload, o)}), KeyMode::src_ip),
              Reason::bad_ipv4_ihl) << int{ihl};
  }
  {  // IHL with options is fine, and the options are skipped for L4.
    Ipv4Opts o;
    o.ihl = 15;
    const Bytes frame = cat({ethernet(0x0800), ipv4(6, kClient4, kServer4, payload, o)});
    EXPECT_EQ(run(frame, KeyMode::flow).key, run(eth_ipv4_tcp(http_request("GET", "/")), KeyMode::flow).key);
    EXPECT_EQ(reason_of(frame, KeyMode::click), Reason::ok);
  }
  for (int total : {0, 1, 19}) {  // shorter than the header (0: TSO captures)
    Ipv4Opts o;
    o.total_length = total;
    EXPECT_EQ(reason_of(cat({ethernet(0x0800), ipv4(6, kClient4, kServer4, payload, o)}), KeyMode::src_ip),
              Reason::bad_ipv4_length) << total;
  }
  {  // IHL 6 but total length 20.
    Ipv4Opts o;
    o.ihl = 6;
    o.total_length = 20;
    EXPECT_EQ(reason_of(cat({ethernet(0x0800), ipv4(6, kClient4, kServer4, {}, o)}), KeyMode::src_ip),
              Reason::bad_ipv4_length);
  }
  {  // Total length beyond the captured bytes.
    Ipv4Opts o;
    o.total_length = static_cast<int>(20 + payload.size() + 1);
    for (KeyMode mode : kAllModes) {
      EXPECT_EQ(reason_of(cat({ethernet(0x0800), ipv4(6, kClient4, kServer4, payload, o)}), mode),
                Reason::truncated_l3);
    }
  }
}

TEST(KeyExtract, EthernetPaddingIsIgnored) {
  // A bare ACK padded to the 60-byte Ethernet minimum with garbage that looks
  // like a request: the IP total length excludes it, so click sees no payload.
  Bytes frame = eth_ipv4_tcp({});
  const Bytes unpadded_flow = run(frame, KeyMode::flow).key;
  const Bytes pad = text("GET / HTTP/1.1\r\n");
  frame.insert(frame.end(), pad.begin(), pad.end());
  EXPECT_EQ(run(frame, KeyMode::flow).key, unpadded_flow);
  EXPECT_EQ(reason_of(frame, KeyMode::click), Reason::no_http_request);
}

// ------------------------------------------------------------ IPv6 extension headers

TEST(KeyExtract, Ipv6ExtensionHeadersAreWalked) {
  const Bytes l4 = tcp(40000, 80, http_request("GET", "/x"));
  const Bytes chain = cat({ext6(43, 1), ext6(44, 0), frag6(51, 0, true), ah(60), ext6(6, 2), l4});
  const Bytes frame = cat({ethernet(0x86DD), ipv6(0, kClient6, kServer6, chain)});
  const Bytes plain = eth_ipv6_tcp(http_request("GET", "/x"));
  const Extracted f = run(frame, KeyMode::flow);
  ASSERT_EQ(f.result.reason, Reason::ok) << reason_name(f.result.reason);
  EXPECT_EQ(f.key, run(plain, KeyMode::flow).key);
  EXPECT_EQ(f.result.ip_proto, 6);
  EXPECT_EQ(run(frame, KeyMode::click).key, run(plain, KeyMode::click).key);
}

// A trace taken with a snap length: every frame cut at every length L, told
// its wire length. A key comes out exactly when its bytes were captured (the
// IP header for addresses, the TCP or UDP header too for flows, the whole
// packet for packet keys), and it is then the whole frame's key; told
// nothing (wire length = L), a cut frame is truncated as before.
TEST(KeyExtract, SnappedFramesKeyWhenTheKeysBytesWereCaptured) {
  struct Case {
    const char* name;
    Bytes frame;
    std::size_t addr_end, l4_end;  // captured bytes an address key, and a flow key, need
  };
  const Bytes body = http_request("GET", "/snapped?x=1");
  const Case cases[] = {
      {"ipv4 tcp", eth_ipv4_tcp(body), 14 + 20, 14 + 20 + 20},
      {"ipv4 udp", cat({ethernet(0x0800), ipv4(17, kClient4, kServer4, udp(5353, 53, text("question")))}),
       14 + 20, 14 + 20 + 8},
      {"ipv4 options, vlan", cat({ethernet(0x0800, {0x8100}), ipv4(6, kClient4, kServer4, tcp(40000, 80, body), {.ihl = 7})}),
       18 + 28, 18 + 28 + 20},
      {"ipv6 tcp", eth_ipv6_tcp(body), 14 + 40, 14 + 40 + 20},
      {"ipv6 ext tcp", cat({ethernet(0x86DD), ipv6(0, kClient6, kServer6, cat({ext6(6, 1), tcp(40000, 80, body)}))}),
       14 + 40, 14 + 40 + 16 + 20},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    for (KeyMode mode : kAllModes) {
      const Extracted whole = run(c.frame, mode);
      if (!whole.result.ok()) {  // click over DNS: no request line at all
        EXPECT_EQ(mode, KeyMode::click) << reason_name(whole.result.reason);
        continue;
      }
      for (std::size_t len = 0; len < c.frame.size(); ++len) {
        auto buf = exact_copy(c.frame.data(), len);
        Key key;
        const Result cut = extract_key(linktype::en10mb, buf.get(), len, mode, ClickOptions{}, key, c.frame.size());
        const std::size_t needs = mode == KeyMode::src_ip || mode == KeyMode::dst_ip ? c.addr_end
                                  : mode == KeyMode::flow                            ? c.l4_end
                                  : mode == KeyMode::packet                          ? c.frame.size()
                                                                                     : 0;  // click: below
        if (mode == KeyMode::click) {
          // The request line is the key: kept when it was captured whole.
          if (cut.ok()) {
            EXPECT_EQ(Bytes(key.bytes, key.bytes + key.length), whole.key) << len;
          }
          continue;
        }
        EXPECT_EQ(cut.ok(), len >= needs) << "mode " << static_cast<int>(mode) << " snap " << len << ": "
                                          << reason_name(cut.reason);
        if (cut.ok()) {
          EXPECT_EQ(Bytes(key.bytes, key.bytes + key.length), whole.key) << len;
        }
        // Without the wire length the same bytes are a truncated frame.
        EXPECT_FALSE(extract_key(linktype::en10mb, buf.get(), len, mode, ClickOptions{}, key).ok()) << len;
      }
    }
  }
  // A wire length shorter than the IP length field says is a damaged frame,
  // as a short capture without one is.
  const Bytes f = eth_ipv4_tcp(body);
  auto buf = exact_copy(f.data(), 60);
  Key key;
  EXPECT_EQ(extract_key(linktype::en10mb, buf.get(), 60, KeyMode::src_ip, ClickOptions{}, key, f.size() - 1).reason,
            Reason::truncated_l3);
}

TEST(KeyExtract, Ipv6ExtensionChainBound) {
  auto chain_of = [](int n) {
    Bytes chain;
    for (int i = 0; i < n; ++i) chain = cat({chain, ext6(i + 1 < n ? 60 : 17)});
    return cat({ethernet(0x86DD), ipv6(60, kClient6, kServer6, cat({chain, udp(1, 2)}))});
  };
  EXPECT_EQ(reason_of(chain_of(kMaxIpv6ExtHeaders), KeyMode::flow), Reason::ok);
  EXPECT_EQ(reason_of(chain_of(kMaxIpv6ExtHeaders + 1), KeyMode::flow), Reason::ipv6_ext_chain_too_long);
  EXPECT_EQ(reason_of(chain_of(kMaxIpv6ExtHeaders + 1), KeyMode::click), Reason::ipv6_ext_chain_too_long);
  // src/dst keys do not depend on the chain.
  EXPECT_EQ(reason_of(chain_of(kMaxIpv6ExtHeaders + 1), KeyMode::src_ip), Reason::ok);
  // A self-referencing chain (each header says "another dest-opts follows").
  Bytes loop;
  for (int i = 0; i < 64; ++i) loop = cat({loop, ext6(60)});
  EXPECT_EQ(reason_of(cat({ethernet(0x86DD), ipv6(60, kClient6, kServer6, loop)}), KeyMode::flow),
            Reason::ipv6_ext_chain_too_long);
}

TEST(KeyExtract, Ipv6TruncatedExtensionHeader) {
  // Hop-by-hop header claiming 8 * (1 + 200) bytes inside a 24-byte payload.
  Bytes hbh = ext6(6, 0);
  hbh[1] = 200;
  const Bytes frame = cat({ethernet(0x86DD), ipv6(0, kClient6, kServer6, cat({hbh, Bytes(16, 0)}))});
  EXPECT_EQ(reason_of(frame, KeyMode::flow), Reason::truncated_ext_header);
  EXPECT_EQ(reason_of(frame, KeyMode::src_ip), Reason::ok);
  // Payload ends right where a header should start.
  EXPECT_EQ(reason_of(cat({ethernet(0x86DD), ipv6(0, kClient6, kServer6, {})}), KeyMode::flow),
            Reason::truncated_ext_header);
  // IPv6 payload length beyond the capture.
  EXPECT_EQ(reason_of(cat({ethernet(0x86DD), ipv6(17, kClient6, kServer6, udp(1, 2), 100)}), KeyMode::src_ip),
            Reason::truncated_l3);
}

// ------------------------------------------------------------ fragments and L4

TEST(KeyExtract, Ipv4Fragments) {
  const Bytes l4 = tcp(40000, 80, http_request("GET", "/x"));
  Ipv4Opts first;
  first.flags_frag = 0x2000;  // MF, offset 0
  const Bytes f0 = cat({ethernet(0x0800), ipv4(6, kClient4, kServer4, l4, first)});
  EXPECT_EQ(reason_of(f0, KeyMode::flow), Reason::ok);
  EXPECT_EQ(reason_of(f0, KeyMode::click), Reason::ok);

  Ipv4Opts later;
  later.flags_frag = 0x0000 | 185;  // last fragment at offset 1480
  const Bytes f1 = cat({ethernet(0x0800), ipv4(6, kClient4, kServer4, l4, later)});
  EXPECT_EQ(reason_of(f1, KeyMode::src_ip), Reason::ok);
  EXPECT_EQ(reason_of(f1, KeyMode::dst_ip), Reason::ok);
  EXPECT_EQ(reason_of(f1, KeyMode::flow), Reason::non_first_fragment);
  EXPECT_EQ(reason_of(f1, KeyMode::click), Reason::non_first_fragment);
}

TEST(KeyExtract, Ipv6Fragments) {
  const Bytes l4 = udp(5000, 53, Bytes(32, 0xAB));
  const Bytes first = cat({ethernet(0x86DD), ipv6(44, kClient6, kServer6, cat({frag6(17, 0, true), l4}))});
  EXPECT_EQ(run(first, KeyMode::flow).key,
            run(cat({ethernet(0x86DD), ipv6(17, kClient6, kServer6, l4)}), KeyMode::flow).key);
  const Bytes later = cat({ethernet(0x86DD), ipv6(44, kClient6, kServer6, cat({frag6(17, 185, false), Bytes(8, 0)}))});
  EXPECT_EQ(reason_of(later, KeyMode::src_ip), Reason::ok);
  const Extracted f = run(later, KeyMode::flow);
  EXPECT_EQ(f.result.reason, Reason::non_first_fragment);
  EXPECT_EQ(f.result.ip_proto, 17);
}

TEST(KeyExtract, NonTcpUdpFlowKeysHaveZeroPorts) {
  Bytes icmp{8, 0, 0, 0, 0, 1, 0, 1};  // echo request
  const Extracted f = run(cat({ethernet(0x0800), ipv4(1, kClient4, kServer4, icmp)}), KeyMode::flow);
  ASSERT_TRUE(f.result.ok());
  ASSERT_EQ(f.key.size(), 14u);
  EXPECT_EQ(f.key[9], 1);  // proto
  EXPECT_EQ(f.key[10] | f.key[11] | f.key[12] | f.key[13], 0);
  // IPv6 "no next header" with an empty payload, and ESP.
  EXPECT_EQ(reason_of(cat({ethernet(0x86DD), ipv6(59, kClient6, kServer6, {})}), KeyMode::flow), Reason::ok);
  EXPECT_EQ(reason_of(cat({ethernet(0x0800), ipv4(50, kClient4, kServer4, Bytes(4, 0))}), KeyMode::flow),
            Reason::ok);
  EXPECT_EQ(reason_of(cat({ethernet(0x0800), ipv4(1, kClient4, kServer4, icmp)}), KeyMode::click),
            Reason::no_http_request);
}

TEST(KeyExtract, L4Validation) {
  // TCP header cut short by the IP length.
  const Bytes short_tcp = cat({ethernet(0x0800), ipv4(6, kClient4, kServer4, Bytes(19, 0))});
  EXPECT_EQ(reason_of(short_tcp, KeyMode::flow), Reason::truncated_l4);
  EXPECT_EQ(reason_of(short_tcp, KeyMode::src_ip), Reason::ok);
  EXPECT_EQ(reason_of(cat({ethernet(0x0800), ipv4(17, kClient4, kServer4, Bytes(7, 0))}), KeyMode::flow),
            Reason::truncated_l4);
  for (uint8_t doff : {0, 4, 6, 15}) {  // 6 and 15 point past a 20-byte segment
    Bytes seg = tcp(1, 80);
    seg[12] = static_cast<uint8_t>(doff << 4);
    EXPECT_EQ(reason_of(cat({ethernet(0x0800), ipv4(6, kClient4, kServer4, seg)}), KeyMode::flow),
              Reason::bad_tcp_offset) << int{doff};
  }
  // TCP options are skipped before the request line.
  EXPECT_EQ(run(cat({ethernet(0x0800), ipv4(6, kClient4, kServer4, tcp(40000, 80, http_request("GET", "/o"), 8))}),
                KeyMode::click).key,
            click_key4("GET", "/o"));
}

// ------------------------------------------------------------ click mode

TEST(KeyExtract, ClickRequestLineRules) {
  struct Case {
    std::string_view payload;
    Reason want;
  };
  const Case cases[] = {
      {"GET / HTTP/1.1\r\n\r\n", Reason::ok},
      {"POST /submit HTTP/1.0\r\n", Reason::ok},
      {"OPTIONS * HTTP/1.1\r\n", Reason::ok},
      {"VERSION-CONTROL /x HTTP/1.1\r\n", Reason::ok},
      {"GET /no-crlf-yet HTTP/1.1", Reason::ok},  // snaplen cut after the version
      {"", Reason::no_http_request},
      {"get / HTTP/1.1\r\n", Reason::no_http_request},
      {"GET  / HTTP/1.1\r\n", Reason::no_http_request},
      {"GET / HTTP/2.0\r\n", Reason::no_http_request},
      {"GET / HTTP/1.\r\n", Reason::no_http_request},
      {"GET / HTTP/1.", Reason::no_http_request},
      {"GET /\r\n", Reason::no_http_request},          // HTTP/0.9
      {"GET / HTTP", Reason::no_http_request},
      {"GET /a\x01 HTTP/1.1\r\n", Reason::no_http_request},
      {"-GET / HTTP/1.1\r\n", Reason::no_http_request},
      {"HTTP/1.1 200 OK\r\n", Reason::no_http_request},  // a response
      {"AVERYVERYVERYLONGMETHOD / HTTP/1.1\r\n", Reason::no_http_request},
      {"\x16\x03\x01\x02\x00", Reason::no_http_request},  // TLS
      {"GET ", Reason::no_http_request},
      {"GET /very/long/url?that=continues", Reason::http_request_incomplete},  // next segment
      {"POST /x", Reason::http_request_incomplete},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(reason_of(eth_ipv4_tcp(text(c.payload)), KeyMode::click), c.want) << c.payload;
  }
}

TEST(KeyExtract, ClickZeroLengthPayloadAndPorts) {
  EXPECT_EQ(reason_of(eth_ipv4_tcp({}), KeyMode::click), Reason::no_http_request);
  EXPECT_EQ(reason_of(eth_ipv6_tcp({}), KeyMode::click), Reason::no_http_request);
  const Bytes req = http_request("GET", "/p");
  EXPECT_EQ(reason_of(eth_ipv4_tcp(req, 8080), KeyMode::click), Reason::ok);
  EXPECT_EQ(reason_of(eth_ipv4_tcp(req, 8081), KeyMode::click), Reason::no_http_request);
  ClickOptions custom;
  custom.ports = {8081};
  custom.port_count = 1;
  EXPECT_EQ(reason_of(eth_ipv4_tcp(req, 8081), KeyMode::click, custom), Reason::ok);
  EXPECT_EQ(reason_of(eth_ipv4_tcp(req, 80), KeyMode::click, custom), Reason::no_http_request);
  ClickOptions any;
  any.port_count = 0;
  EXPECT_EQ(reason_of(eth_ipv4_tcp(req, 80), KeyMode::click, any), Reason::no_http_request);
  any.any_port = true;
  EXPECT_EQ(reason_of(eth_ipv4_tcp(req, 3128), KeyMode::click, any), Reason::ok);
  ClickOptions overfull;
  overfull.port_count = 200;  // clamped to kMaxPorts, never read past the array
  EXPECT_EQ(reason_of(eth_ipv4_tcp(req, 80), KeyMode::click, overfull), Reason::ok);
}

TEST(KeyExtract, ClickParam) {
  ClickOptions o;
  o.param = "adid";
  auto key_for = [&](std::string_view target) { return run(eth_ipv4_tcp(http_request("GET", target)), KeyMode::click, o); };
  auto value_key = [](std::string_view value) {
    Bytes b{0x54};
    b.insert(b.end(), kClient4.begin(), kClient4.end());
    b.push_back(3);
    for (char c : std::string_view("GET")) b.push_back(static_cast<uint8_t>(c));
    put16(b, static_cast<uint16_t>(value.size()));
    b.insert(b.end(), value.begin(), value.end());
    return b;
  };
  EXPECT_EQ(key_for("/click?adid=42&x=1").key, value_key("42"));
  EXPECT_EQ(key_for("/other/path?x=1&adid=42").key, value_key("42"));  // same ad, same key
  EXPECT_EQ(key_for("/c?adid=42#frag").key, value_key("42"));
  EXPECT_EQ(key_for("/c?adid=&x").key, value_key(""));
  EXPECT_EQ(key_for("/c?adid").key, value_key(""));
  EXPECT_EQ(key_for("/c?x=1&adid=7&adid=8").key, value_key("7"));  // first occurrence
  EXPECT_EQ(key_for("/c?xadid=1&adidx=2").result.reason, Reason::no_click_param);
  EXPECT_EQ(key_for("/adid=42").result.reason, Reason::no_click_param);  // not in the query
  EXPECT_EQ(key_for("/c?x=1#adid=42").result.reason, Reason::no_click_param);
  EXPECT_EQ(key_for("/c?").result.reason, Reason::no_click_param);
  EXPECT_EQ(key_for("/c?&&").result.reason, Reason::no_click_param);
  o.param = "";  // empty name: whole target
  EXPECT_EQ(key_for("/c?adid=1").key, click_key4("GET", "/c?adid=1"));
}

TEST(KeyExtract, ClickRequestLineSplitAcrossSegments) {
  // First segment of a request whose target continues in the next segment.
  const Bytes first = eth_ipv4_tcp(text("GET /click?rid=7f3a&impid=1&adid=42&sig=AAAABBBBCCCC"));
  EXPECT_EQ(reason_of(first, KeyMode::click), Reason::http_request_incomplete);
  EXPECT_EQ(reason_of(first, KeyMode::flow), Reason::ok);
  ClickOptions o;
  o.param = "adid";  // value ends at '&' inside the segment: exact key
  const Extracted e = run(first, KeyMode::click, o);
  ASSERT_EQ(e.result.reason, Reason::ok);
  EXPECT_EQ(e.key, run(eth_ipv4_tcp(http_request("GET", "/click?adid=42")), KeyMode::click, o).key);
  o.param = "sig";  // value runs to the end of the segment: may continue
  EXPECT_EQ(reason_of(first, KeyMode::click, o), Reason::http_request_incomplete);
  o.param = "nope";  // might be in the next segment
  EXPECT_EQ(reason_of(first, KeyMode::click, o), Reason::http_request_incomplete);
  o.param = "adid";
  o.include_host = true;  // Host is in a later segment
  EXPECT_EQ(reason_of(first, KeyMode::click, o), Reason::http_request_incomplete);
}

TEST(KeyExtract, ClickHost) {
  ClickOptions o;
  o.include_host = true;
  auto host_of = [&](const Bytes& payload) -> std::string {
    const Extracted e = run(eth_ipv4_tcp(payload), KeyMode::click, o);
    EXPECT_TRUE(e.result.ok()) << reason_name(e.result.reason);
    if (!e.result.ok()) return "<none>";
    EXPECT_EQ(e.key[0], 0x64);
    const std::size_t at = 1 + 4 + 1 + e.key[5];
    const std::size_t tlen = std::size_t{e.key[at]} << 8 | e.key[at + 1];
    const std::size_t h = at + 2 + tlen;
    const std::size_t hlen = std::size_t{e.key[h]} << 8 | e.key[h + 1];
    EXPECT_EQ(h + 2 + hlen, e.key.size());
    return std::string(e.key.begin() + static_cast<long>(h + 2), e.key.end());
  };
  EXPECT_EQ(host_of(http_request("GET", "/", "Example.COM")), "example.com");
  EXPECT_EQ(host_of(text("GET / HTTP/1.1\r\nAccept: x\r\nhOsT: \t a.b:8080 \r\n\r\n")), "a.b:8080");
  EXPECT_EQ(host_of(text("GET / HTTP/1.1\nHost:bare-lf\n\n")), "bare-lf");
  EXPECT_EQ(host_of(text("GET / HTTP/1.0\r\n\r\n")), "");                       // no Host
  EXPECT_EQ(host_of(text("GET / HTTP/1.1\r\nX: y\r\n\r\nHost: body\r\n")), "");  // after headers
  EXPECT_EQ(host_of(text("GET / HTTP/1.1\r\nX-Host: no\r\nHost: yes\r\n\r\n")), "yes");
  // Headers the segment (or a snap length) ended before a Host line: the
  // Host is unknown, not absent, so the request is not keyed as one without
  // (that would merge requests to different hosts).
  for (const char* cut : {"GET / HTTP/1.1\r\nHost: cut-off", "GET / HTTP/1.1", "GET / HTTP/1.1\r\nAccept: x\r\n"})
    EXPECT_EQ(reason_of(eth_ipv4_tcp(text(cut)), KeyMode::click, o), Reason::http_request_incomplete) << cut;
  o.include_host = false;  // without --click-host the request line alone is the key
  EXPECT_EQ(reason_of(eth_ipv4_tcp(text("GET / HTTP/1.1\r\nHost: cut-off")), KeyMode::click, o), Reason::ok);
  o.include_host = true;

  // Host distinguishes otherwise equal requests; param + host uses tag 0x7.
  const Bytes a = run(eth_ipv4_tcp(http_request("GET", "/", "a.example")), KeyMode::click, o).key;
  const Bytes b = run(eth_ipv4_tcp(http_request("GET", "/", "b.example")), KeyMode::click, o).key;
  EXPECT_NE(a, b);
  o.param = "id";
  EXPECT_EQ(run(eth_ipv4_tcp(http_request("GET", "/?id=1", "a")), KeyMode::click, o).key[0], 0x74);
}

TEST(KeyExtract, ClickKeyTooLongIsNeverTruncated) {
  const std::string long_target = "/" + std::string(kMaxKeyBytes, 'a');
  EXPECT_EQ(reason_of(eth_ipv4_tcp(http_request("GET", long_target)), KeyMode::click), Reason::key_too_long);
  // The longest target that fits: tag + addr + mlen + "GET" + tlen.
  const std::size_t fits = kMaxKeyBytes - (1 + 4 + 1 + 3 + 2);
  const std::string max_target = "/" + std::string(fits - 1, 'b');
  const Extracted e = run(eth_ipv4_tcp(http_request("GET", max_target)), KeyMode::click);
  EXPECT_EQ(e.result.reason, Reason::ok);
  EXPECT_EQ(e.key.size(), kMaxKeyBytes);
  EXPECT_EQ(reason_of(eth_ipv4_tcp(http_request("GET", max_target + "b")), KeyMode::click), Reason::key_too_long);
  // Host pushes it over.
  ClickOptions host;
  host.include_host = true;
  EXPECT_EQ(reason_of(eth_ipv4_tcp(http_request("GET", max_target)), KeyMode::click, host), Reason::key_too_long);
  // A long target is fine when only a short parameter is keyed.
  ClickOptions param;
  param.param = "id";
  EXPECT_EQ(reason_of(eth_ipv4_tcp(http_request("GET", long_target + "?id=5")), KeyMode::click, param), Reason::ok);
}

// ------------------------------------------------------------ truncation sweep

// Every prefix of a valid frame: never a crash, never a key, and the reason
// names the layer where the bytes ran out (the IP length field always claims
// the full packet, so any cut past L2 is truncated_l3).
void sweep_prefixes(const Bytes& frame, std::size_t l2_len, uint32_t dlt = linktype::en10mb) {
  for (KeyMode mode : kAllModes) {
    ClickOptions o;
    o.include_host = true;
    ASSERT_EQ(run(frame, mode, o, dlt).result.reason, Reason::ok) << "full frame, mode " << int(mode);
    for (std::size_t len = 0; len < frame.size(); ++len) {
      const Reason r = run(frame, mode, o, dlt, len).result.reason;
      const Reason want = len < l2_len ? Reason::truncated_l2 : Reason::truncated_l3;
      ASSERT_EQ(r, want) << "len " << len << " of " << frame.size() << ", mode " << int(mode) << ": "
                         << reason_name(r);
    }
  }
}

TEST(KeyExtract, EveryTruncationOfValidFrames) {
  const Bytes req = http_request("GET", "/t?adid=9");
  sweep_prefixes(eth_ipv4_tcp(req), 14);
  sweep_prefixes(eth_ipv4_tcp(req, 80, {0x88A8, 0x8100}), 22);
  sweep_prefixes(eth_ipv6_tcp(req, 80, {0x8100}), 18);
  const Bytes chain = cat({ext6(43, 1), ext6(44, 0), frag6(51, 0, true), ah(60), ext6(6, 2),
                           tcp(40000, 80, req)});
  sweep_prefixes(cat({ethernet(0x86DD), ipv6(0, kClient6, kServer6, chain)}), 14);
  sweep_prefixes(cat({Bytes{0, 0, 8, 0, 1, 0, 0, 0}, eth_ipv4_tcp(req)}), 22, linktype::ppi);
}

// extract_key's inline Ethernet + IPv4 fast path against the general walk
// alone: same Result, same key, for valid frames of every IPv4 shape the fast
// path takes or declines and for random corruptions of their header bytes
// (ethertype, version/IHL, lengths, fragment field, protocol, TCP offset) and
// lengths, in every mode. Counts the frames the fast path must have decided
// (untagged IPv4 keyed ok) so the comparison cannot pass vacuously.
TEST(KeyExtract, FastPathAgreesWithTheWalk) {
  const Bytes req = http_request("GET", "/t?adid=9");
  Ipv4Opts frag;
  frag.flags_frag = 0x2003;  // MF, offset 3 units: a later fragment
  Ipv4Opts options;
  options.ihl = 7;
  const Bytes bases[] = {
      eth_ipv4_tcp(req),
      cat({ethernet(0x0800), ipv4(17, kClient4, kServer4, udp(5353, 53, text("q")))}),
      cat({ethernet(0x0800), ipv4(1, kClient4, kServer4, Bytes{8, 0, 0, 0, 0, 1, 0, 1})}),
      cat({ethernet(0x0800), ipv4(17, kClient4, kServer4, udp(1, 2), frag)}),
      cat({ethernet(0x0800), ipv4(6, kClient4, kServer4, tcp(1, 80, req), options)}),
      eth_ipv4_tcp(req, 80, {0x8100}),
      eth_ipv6_tcp(req),
  };
  std::mt19937_64 rng(0xFA57FA57u);
  ClickOptions click;
  uint64_t compared = 0, fast = 0;
  for (const Bytes& base : bases) {
    for (int round = 0; round < 4000; ++round) {
      Bytes frame = base;
      const int flips = round == 0 ? 0 : static_cast<int>(rng() % 3);
      for (int f = 0; f < flips; ++f) frame[12 + rng() % std::min<std::size_t>(frame.size() - 12, 48)] ^=
          static_cast<uint8_t>(1u << (rng() % 8));
      const std::size_t len = (round % 4 == 3) ? rng() % (frame.size() + 1) : frame.size();
      auto buf = exact_copy(frame.data(), len);
      for (KeyMode mode : kAllModes) {
        Key got, want;
        const Result r = extract_key(linktype::en10mb, buf.get(), len, mode, click, got);
        const Result w = detail::extract_key_walk(linktype::en10mb, buf.get(), len, mode, click, want);
        ASSERT_EQ(r.reason, w.reason) << "round " << round << " mode " << int(mode) << ": " << reason_name(r.reason)
                                      << " vs " << reason_name(w.reason);
        ASSERT_EQ(r.ip_version, w.ip_version);
        ASSERT_EQ(r.ip_proto, w.ip_proto);
        ASSERT_EQ(Bytes(got.bytes, got.bytes + got.length), Bytes(want.bytes, want.bytes + want.length));
        ++compared;
        fast += r.ok() && mode != KeyMode::click && mode != KeyMode::packet && r.ip_version == 4 && len >= 14 && buf[12] == 0x08 &&
                buf[13] == 0x00;
      }
    }
  }
  EXPECT_GT(fast, compared / 5) << "the fast path decided too few frames for the comparison to mean much";
}

// The fast path's bounds one by one: the IP total length at and around its
// limits (below the header, the header alone, the frame's end) and the TOS
// byte (outside the EtherType/version compare), each against the walk.
TEST(KeyExtract, FastPathBoundsAgreeWithTheWalk) {
  const Bytes base = cat({ethernet(0x0800), ipv4(17, kClient4, kServer4, udp(5353, 53, text("query")))});
  const std::size_t ip_room = base.size() - 14;
  ClickOptions click;
  int keyed = 0;
  for (std::size_t total : {std::size_t{0}, std::size_t{19}, std::size_t{20}, std::size_t{21}, std::size_t{27},
                            std::size_t{28}, ip_room - 1, ip_room, ip_room + 1, std::size_t{0xFFFF}}) {
    for (uint8_t tos : {uint8_t{0}, uint8_t{0x45}, uint8_t{0xFF}}) {
      Bytes frame = base;
      frame[16] = static_cast<uint8_t>(total >> 8);
      frame[17] = static_cast<uint8_t>(total);
      frame[15] = tos;
      auto buf = exact_copy(frame.data(), frame.size());
      for (KeyMode mode : kAllModes) {
        Key got, want;
        const Result r = extract_key(linktype::en10mb, buf.get(), frame.size(), mode, click, got);
        const Result w = detail::extract_key_walk(linktype::en10mb, buf.get(), frame.size(), mode, click, want);
        ASSERT_EQ(r.reason, w.reason) << "total " << total << " tos " << int(tos) << " mode " << int(mode);
        ASSERT_EQ(Bytes(got.bytes, got.bytes + got.length), Bytes(want.bytes, want.bytes + want.length));
        keyed += r.ok() && mode == KeyMode::src_ip;
      }
      // The fast path itself takes every frame the walk keys by address here
      // (an untagged IPv4 header without options): a fast path that wrongly
      // declined would pass the comparison above through the walk.
      Key fast;
      Result fr;
      const bool taken = detail::ethernet_ipv4_fast(buf.get(), frame.size(), KeyMode::src_ip, fast, fr);
      EXPECT_EQ(taken, total >= 20 && total <= ip_room) << "total " << total << " tos " << int(tos);
    }
  }
  EXPECT_EQ(keyed, 3 * 6);  // totals 20, 21, 27, 28, ip_room - 1 and ip_room key by address, under each TOS
}

TEST(KeyExtract, ReasonNamesAreDistinct) {
  std::set<std::string> names;
  for (std::size_t i = 0; i < kReasonCount; ++i) {
    const std::string name = reason_name(static_cast<Reason>(i));
    EXPECT_NE(name, "unknown") << i;
    names.insert(name);
  }
  EXPECT_EQ(names.size(), kReasonCount);
  EXPECT_STREQ(reason_name(Reason::ok), "ok");
  EXPECT_STREQ(reason_name(Reason::too_many_vlans), "too_many_vlans");
  EXPECT_STREQ(reason_name(static_cast<Reason>(250)), "unknown");
}

}  // namespace
}  // namespace agebloom::packet
