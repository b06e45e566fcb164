#include "burst.hpp"

#include <rte_prefetch.h>

#include "agebloom/packet/click_value.hpp"

namespace dedup_fwd {

namespace ab = agebloom;
namespace pk = agebloom::packet;

namespace {

// Packets ahead whose first data line is prefetched while one is parsed.
constexpr uint16_t kPrefetchAhead = 4;

// A packet's Rx timestamp in nanoseconds. net_pcap stamps microseconds from
// libpcap's record header, whose seconds libpcap reads as a signed 32-bit
// number although the format's field is unsigned: from 2038 on the stamp is
// (seconds - 2^32) * 10^6 + microseconds modulo 2^64, which reads as negative.
// No stamp of a real time reaches 2^63 microseconds, so a negative one is
// such a record, and adding 2^32 * 10^6 back gives its time (as
// trace::PcapReader reads it for agebloom-replay).
inline uint64_t rx_stamp_ns(const rte_mbuf* m) {
  uint64_t t = *RTE_MBUF_DYNFIELD(m, g_app.ts_offset, const rte_mbuf_timestamp_t*);
  const uint32_t scale = g_app.ts_scale[m->port];
  if (scale == 1000 && static_cast<int64_t>(t) < 0) t += (uint64_t{1} << 32) * 1'000'000u;
  return t * scale;
}

// An mbuf that cannot be a received frame. net_pcap hands these over from
// damaged captures: after libpcap refuses a record ("invalid packet capture
// length 300000, bigger than maximum of 262144") the driver counts an ierror
// and, at the next burst, reads on from the refused record's data, whose
// bytes parse as records of length 0 (thousands of empty frames from one
// record of zeros); and a record over 65535 bytes wraps the driver's 16-bit
// jumbo length, leaving a chain much shorter than pkt_len, which any read of
// the frame would run off.
// A single segment is judged on the mbuf's first cache line alone, the part
// every PMD's Rx writes and stage 1 reads anyway (`next` lies in the second);
// only chains are walked.
inline bool whole_single_segment(const rte_mbuf* m) {
  return (m->pkt_len != 0) & (m->nb_segs == 1) & (m->data_len == m->pkt_len);
}
bool malformed(const rte_mbuf* m) {
  if (m->nb_segs == 1 || m->pkt_len == 0) return !whole_single_segment(m);
  uint32_t bytes = 0;
  uint16_t segs = 0;
  for (const rte_mbuf* s = m; s != nullptr; s = s->next) {
    bytes += s->data_len;
    ++segs;
  }
  return bytes != m->pkt_len || segs != m->nb_segs;
}

// The rare path after stage 1 met malformed mbufs (bit i of `bad` = pkts[i]):
// frees and counts them, closes the gaps in pkts and renumbers the keyed
// packets' indices to match. Returns the packets left.
[[gnu::cold, gnu::noinline]] uint16_t drop_malformed(rte_mbuf** pkts, uint16_t n, uint64_t bad, LcoreStats& st,
                                                     Keyed& out) {
  uint16_t renumbered[kBurst];
  uint16_t good = 0;
  for (uint16_t i = 0; i < n; ++i) {
    if ((bad >> i) & 1) {
      rte_pktmbuf_free(pkts[i]);
    } else {
      renumbered[i] = good;
      pkts[good++] = pkts[i];
    }
  }
  for (uint16_t j = 0; j < out.k; ++j) out.at[j] = renumbered[out.at[j]];
  st.malformed.add(n - good);
  return good;
}

// A chain's frame as contiguous bytes, copied into the lcore's scratch:
// extract_key reads one buffer (jumbo frames arrive chained).
// Returned with its length, not through a reference: the loop's `len` then
// stays in a register instead of being stored for every frame.
struct FrameBytes {
  const uint8_t* data;
  uint32_t len;
};
[[gnu::noinline]] FrameBytes chained_frame_bytes(uint8_t* scratch, const rte_mbuf* m) {
  uint32_t len = rte_pktmbuf_pkt_len(m);
  if (len > kScratchBytes) len = kScratchBytes;
  return {static_cast<const uint8_t*>(rte_pktmbuf_read(m, 0, len, scratch)), len};
}

// Stage 1 for one key mode, fixed at compile time so the common frame's path
// is straight-line: untagged Ethernet + IPv4 is keyed by the inline fast path,
// its key kept as words, and the burst's fast keys hashed together after the
// loop at their constant length (Hasher::fixed_bulk: two keys an instruction
// with VAES; docs/PERFORMANCE.md, "Short keys hashed by AES rounds"); everything else (click and packet
// always, every mode under --vlan-in-key) goes through the general walk and is
// hashed in the loop. Both give the same key and hash (tests/packet and
// tests/core check each half).
// Plain: the run takes the fast path whenever a frame allows (Mode is not click
// or packet, no --vlan-in-key), filters with no BPF expression and clocks
// bursts, not packets (no Rx stamps): dedup_fwd's usual run, compiled without
// those checks and with the burst's clock stored once after the loop.
template <pk::KeyMode Mode, bool Plain>
uint16_t key_burst_mode(rte_mbuf** pkts, uint16_t n, LcoreStats& st, uint8_t* scratch, pk::Key& key,
                        const ab::Hasher& hasher, const pk::KeyOptions& keys, uint64_t& clock_ns, Keyed& out) {
  constexpr std::size_t kFastKeyBytes = Mode == pk::KeyMode::flow ? 14 : 5;  // tag + fields, as the walk writes
  // Run-wide switches, the clock and the count are kept in locals: the loop's
  // stores through `out` and `key` may alias anything reached through a
  // reference, so the compiler would reload them for every packet.
  const bool stamps = !Plain && per_packet_time();
  const pk::BpfFilter& bpf = g_app.bpf;
  const bool filtering = !Plain && bpf.active();
  const bool fast = Plain || (Mode != pk::KeyMode::click && Mode != pk::KeyMode::packet && !keys.vlan_in_key);
  uint64_t clock = clock_ns;
  uint64_t no_ts = 0, regressions = 0;
  unsigned k = 0;  // 32-bit counters: no zero-extension per use
  uint64_t bad = 0;  // malformed mbufs, bit i = pkts[i]
  uint64_t walked = 0;  // keyed packets the walk keyed and hashed, bit j = keyed packet j
  static_assert(kBurst <= 64, "one bit per packet of a burst");
  // The fast path's keys, keyed packet j's bytes [0, 8) and [8, 16), hashed
  // after the loop; and the walk's hashes, kept aside from that hash's stores
  // ({h1, h2} of keyed packet j at 2j).
  uint64_t first[kBurst], second[kBurst], walk_hash[2 * kBurst];
  for (uint16_t i = 0; i < kPrefetchAhead && i < n; ++i) rte_prefetch0(rte_pktmbuf_mtod(pkts[i], void*));
  // Packet i's work, run by two loops: the first over the packets that have a
  // packet kPrefetchAhead later to request, the rest after it, so no packet
  // checks the bound (2 instructions a packet fewer; docs/PERFORMANCE.md).
  auto key_one = [&](unsigned i) __attribute__((always_inline)) {
    const rte_mbuf* m = pkts[i];
    uint32_t len = rte_pktmbuf_pkt_len(m);
    const uint8_t* data = rte_pktmbuf_mtod(m, const uint8_t*);
    pk::Result r;
    pk::detail::FastKey fk;  // local: its stores fold into the key words below
    auto keep_fast_key = [&] {
      __builtin_memcpy(&first[k], fk.bytes, 8);
      if constexpr (kFastKeyBytes > 8) __builtin_memcpy(&second[k], fk.bytes + 8, 8);
    };
    // A plain run tries the usual frame first: one whole segment, keyed by
    // the fast path. Any other frame is judged from the start below, where
    // the fast path is tried again only on bytes it has not seen (a chain's).
    const bool one_segment = m->nb_segs == 1 && m->data_len == len;
    if (Plain && likely(one_segment) && pk::detail::ethernet_ipv4_fast(data, len, Mode, fk, r)) {
      keep_fast_key();
    } else {
      // Judged here, on the header line the next lines read anyway, not in a
      // pass of its own at receive: that pass cost 1-10 cycles per packet on
      // net_pcap, in TLB misses over the mbufs' pages (docs/PERFORMANCE.md).
      if (unlikely(!whole_single_segment(m))) {
        if (malformed(m)) {
          bad |= uint64_t{1} << i;
          return;
        }
        const FrameBytes whole = chained_frame_bytes(scratch, m);
        data = whole.data;
        len = whole.len;
      }
      if (filtering && !bpf.matches(data, len, rte_pktmbuf_pkt_len(m))) {
        st.bpf_unmatched.add(1);  // no key: forwarded untouched, like an unparsed frame
        return;
      }
      if (fast && !(Plain && one_segment) && data != nullptr &&
          pk::detail::ethernet_ipv4_fast(data, len, Mode, fk, r)) {
        keep_fast_key();
      } else {
        r = pk::detail::extract_key_walk(pk::linktype::en10mb, data, len, Mode, keys, key);
        if (!r.ok()) {
          st.reasons[static_cast<size_t>(r.reason)].add(1);
          return;
        }
        const ab::KeyHash h = hasher(key.bytes, key.length);
        out.hash[k] = h;
        walk_hash[2 * k] = h.h1;
        walk_hash[2 * k + 1] = h.h2;
        walked |= uint64_t{1} << k;
        first[k] = second[k] = 0;  // hashed with the rest below, the result replaced
      }
    }
    if (stamps) {
      // The replay's rule: a stamp that steps back holds the clock at the latest.
      if (m->ol_flags & g_app.ts_flag) {
        const uint64_t t = rx_stamp_ns(m);
        if (t < clock) ++regressions;
        else clock = t;
      } else {
        ++no_ts;
      }
    }
    if (Mode == pk::KeyMode::click && !g_app.opt.penalty_param.empty()) {
      // $FN from the click's own request (e.g. its bid), else --penalty-fn.
      double fn = g_app.opt.penalties.fn;
      if (pk::click_param_number(pk::linktype::en10mb, data, len, keys.click, g_app.opt.penalty_param.c_str(), fn))
        st.penalty_from_param.add(1);
      out.penalty_fn[k] = fn;
    }
    if constexpr (!Plain) out.time[k] = clock;
    out.at[k++] = static_cast<uint16_t>(i);
  };
  const unsigned ahead = n > kPrefetchAhead ? n - kPrefetchAhead : 0u;
  unsigned i = 0;
  for (; i < ahead; ++i) {
    rte_prefetch0(rte_pktmbuf_mtod(pkts[i + kPrefetchAhead], void*));
    key_one(i);
  }
  for (; i < n; ++i) key_one(i);
  out.stamped = !Plain;  // a plain run's burst has one clock
  out.clock = clock;
  out.k = static_cast<uint16_t>(k);
  if (fast && k != 0) {
    hasher.fixed_bulk<kFastKeyBytes>(first, second, k, out.hash);
    for (uint64_t w = walked; w != 0; w &= w - 1) {  // the frames the walk keyed keep their hash
      const unsigned j = static_cast<unsigned>(__builtin_ctzll(w));
      out.hash[j] = ab::KeyHash{walk_hash[2 * j], walk_hash[2 * j + 1]};
    }
  }
  clock_ns = clock;
  if (regressions) st.time_regressions.add(regressions);
  if (no_ts) st.no_timestamp.add(no_ts);
  return unlikely(bad != 0) ? drop_malformed(pkts, n, bad, st, out) : n;
}

}  // namespace

uint16_t key_burst(rte_mbuf** pkts, uint16_t n, LcoreStats& st, uint8_t* scratch, pk::Key& key,
                   const ab::Hasher& hasher, const pk::KeyOptions& keys, uint64_t& clock_ns, Keyed& out) {
#define AGEBLOOM_KEY_BURST(MODE, PLAIN) \
  key_burst_mode<pk::KeyMode::MODE, PLAIN>(pkts, n, st, scratch, key, hasher, keys, clock_ns, out)
  const bool plain = !keys.vlan_in_key && !g_app.bpf.active() && !per_packet_time();
  switch (g_app.opt.mode) {
    case pk::KeyMode::src_ip: return plain ? AGEBLOOM_KEY_BURST(src_ip, true) : AGEBLOOM_KEY_BURST(src_ip, false);
    case pk::KeyMode::dst_ip: return plain ? AGEBLOOM_KEY_BURST(dst_ip, true) : AGEBLOOM_KEY_BURST(dst_ip, false);
    case pk::KeyMode::flow: return plain ? AGEBLOOM_KEY_BURST(flow, true) : AGEBLOOM_KEY_BURST(flow, false);
    case pk::KeyMode::click: return AGEBLOOM_KEY_BURST(click, false);
    case pk::KeyMode::packet: return AGEBLOOM_KEY_BURST(packet, false);
  }
#undef AGEBLOOM_KEY_BURST
  __builtin_unreachable();  // options.cpp parses every mode into one of the above
}

Split decide_keyed(Worker& w, rte_mbuf** pkts, uint16_t n, const Keyed& in, const uint64_t* now, rte_mbuf** fwd,
                   rte_mbuf** dups, void* const* lines) {
  const Options& o = g_app.opt;
  bool dup[kBurst];
  if (o.decide == ab::dedup::Decide::penalties) {
    // The inferential filter, one key at a time: count windows only (no clock).
    double expected = 0;
    const bool per_click = o.mode == pk::KeyMode::click && !o.penalty_param.empty();
    for (uint16_t j = 0; j < in.k; ++j) {
      ab::inference::Penalties pen = o.penalties;
      if (per_click) pen.fn = in.penalty_fn[j];
      const ab::dedup::PenaltyVerdict v = w.filter.decide_with_penalties(in.hash[j], o.policy, o.prior, pen);
      dup[j] = v.duplicate;
      expected += v.expected_penalty;
    }
    w.stats->expected_penalty_micro.add(static_cast<uint64_t>(expected * 1e6 + 0.5));
  } else {
    w.filter.decide_burst(in.hash, now, in.k, o.policy, dup, lines);
  }

  // Duplicates are counted whatever the action: under count they are the only
  // trace of the verdict. A burst with none (most bursts of a stream whose
  // duplicates are rare), or under count, is forwarded whole: one copy, where
  // the walk below costs ~16 instructions a packet (docs/PERFORMANCE.md).
  // Otherwise the walk takes the burst in order, consuming the keyed packets'
  // verdicts as their indices come up: unkeyed packets have no verdict and
  // are forwarded. Branch-free: each packet is written to both lists and only
  // the list it belongs to advances (both hold a whole burst), so a verdict
  // the branch predictor cannot guess costs nothing.
  const bool divert = o.action != Action::count;
  Split s;
  // The verdicts are bytes of 0 or 1: counted eight at a time by popcount
  // (a byte loop took 5 instructions a packet).
  uint64_t ndup = 0;
  uint16_t v = 0;
  for (; v + 8 <= in.k; v += 8) {
    uint64_t eight;
    __builtin_memcpy(&eight, dup + v, 8);
    ndup += static_cast<uint64_t>(__builtin_popcountll(eight));
  }
  for (; v < in.k; ++v) ndup += dup[v];
  if (!divert || ndup == 0) {
    for (uint16_t i = 0; i < n; ++i) fwd[i] = pkts[i];
    s.nf = n;
  } else if (in.k == n) {  // every packet keyed (the common burst): verdict i is packet i's
    for (uint16_t i = 0; i < n; ++i) {
      const bool to_dups = dup[i];
      fwd[s.nf] = pkts[i];
      dups[s.nd] = pkts[i];
      s.nf += !to_dups;
      s.nd += to_dups;
    }
  } else {
    for (uint16_t i = 0, j = 0; i < n; ++i) {
      const bool keyed = j < in.k && in.at[j] == i;
      const bool to_dups = keyed && dup[j];
      j += keyed;
      fwd[s.nf] = pkts[i];
      dups[s.nd] = pkts[i];
      s.nf += !to_dups;
      s.nd += to_dups;
    }
  }

  LcoreStats& st = *w.stats;
  st.rx.add(n);
  st.keyed.add(in.k);
  st.duplicates.add(ndup);
  return s;
}

void stage_burst(Worker& w, Staged& b, uint16_t n, const ab::Hasher& hasher, const pk::KeyOptions& keys,
                 uint64_t& clock_ns) {
  b.n = key_burst(b.pkts, n, *w.stats, w.scratch, *w.key, hasher, keys, clock_ns, b.keyed);
  b.clock_ns = clock_ns;
  w.filter.prefetch_burst(b.keyed.hash, b.keyed.k, b.lines);
}

Split decide_staged(Worker& w, Staged& b, rte_mbuf** fwd, rte_mbuf** dups) {
  const bool per_packet = per_packet_time();
  if (g_app.opt.spec.window.is_time() && !per_packet)
    (void)w.filter.advance(b.clock_ns);  // cannot fail: the TSC does not go back
  return decide_keyed(w, b.pkts, b.n, b.keyed, per_packet ? b.keyed.time : nullptr, fwd, dups, b.lines);
}

}  // namespace dedup_fwd
