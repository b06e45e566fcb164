// dedup_fwd's per-packet cost without a PMD: its own burst code
// (dpdk_app/burst.cpp: parse, hash, filter, split into forward / duplicate)
// over bursts of 32 mbufs already in memory, beside a baseline that does what
// testpmd's 5tswap forwarding engine does to each packet (parse the 5-tuple
// and swap it) on the same mbufs. The figure is the ratio of the two.
//
// What is measured, and how:
//   - One mempool of kPackets mbufs (256 bursts, the size of dedup_fwd's
//     smallest pool), each holding a 60-byte UDP/IPv4 frame. The mbufs are
//     allocated once and reused, never freed, between iterations: each
//     iteration first rewrites every frame (timer paused), then times all 256
//     bursts. Refilling is what a NIC's DMA does, and like DDIO it leaves the
//     frames warm in the cache; the filter is not (a 3.5 MB interleaved filter
//     at W = 1M lives in L3 or memory, as in the filter table).
//   - Source IPs are fresh: packet p carries 10.0.0.0 + bij(p mod 2^24), a
//     bijection, so 2^24 consecutive packets have distinct sources and a
//     source repeats only 16M packets later, far outside W = 1M. Every lookup
//     is a miss over the whole filter, the costly case of a dedup stream; the
//     duplicates counted are the false positives.
//   - The filter is filled to steady state (2W + W/16 packets through the same
//     burst code, every segment rotated) before the first timed burst.
//   - Cycles as in the rest of the suite: cpu_cycles_per_pkt is the thread's
//     CPU time over the timed bursts × the measured TSC rate; cycles_per_pkt
//     is rdtsc around them (wall clock).
#include <rte_errno.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_prefetch.h>
#include <rte_tcp.h>
#include <rte_udp.h>

#include <cstring>

#include "agebloom/dedup/filter_options.hpp"
#include <memory>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "burst.hpp"

// Instruction counts (scripts/bench_instructions.sh): under valgrind's
// callgrind, started with --collect-atstart=no, only the timed bursts are
// counted; natively the toggles are a few no-op instructions outside the
// per-packet loop.
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#else
#define CALLGRIND_TOGGLE_COLLECT
#define RUNNING_ON_VALGRIND 0
#endif

// dedup_fwd's burst code reads the run's options from g_app, which the
// application defines in main.cpp. This binary does not link main.cpp, so it
// owns the instance and fills the options a `dedup_fwd --key src-ip` run
// would have.
namespace dedup_fwd {
App g_app;
}

namespace agebloom::perf {

namespace {

namespace df = dedup_fwd;
namespace pk = agebloom::packet;

constexpr uint16_t kBurst32 = df::kBurst;  // dedup_fwd's (and testpmd's default) Rx burst
constexpr unsigned kBursts = 256;
constexpr unsigned kPackets = kBursts * kBurst32;
constexpr uint64_t kWindow = uint64_t{1} << 20;
constexpr uint32_t kSourceMask = (uint32_t{1} << 24) - 1;
constexpr uint16_t kFrameLen = 60;  // 64 on the wire with the FCS

// Packet p's source address: an odd multiplier is a bijection modulo 2^24,
// so sources are distinct over 2^24 packets but not in counting order.
uint32_t source_of(uint64_t p) { return 0x0A00'0000u | (static_cast<uint32_t>(p * 0x9E3779u) & kSourceMask); }

// Ethernet + IPv4 + UDP to 192.168.0.1:53, 18 bytes of payload: the frames of
// scripts/bench_pipeline.sh.
void write_frame(uint8_t* f, uint32_t src, uint16_t sport) {
  static constexpr uint8_t kHeader[14] = {0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01, 0x08, 0x00};
  std::memcpy(f, kHeader, sizeof kHeader);
  auto* ip = reinterpret_cast<rte_ipv4_hdr*>(f + sizeof(rte_ether_hdr));
  ip->version_ihl = RTE_IPV4_VHL_DEF;
  ip->type_of_service = 0;
  ip->total_length = rte_cpu_to_be_16(kFrameLen - sizeof(rte_ether_hdr));
  ip->packet_id = 0;
  ip->fragment_offset = 0;
  ip->time_to_live = 64;
  ip->next_proto_id = IPPROTO_UDP;
  ip->src_addr = rte_cpu_to_be_32(src);
  ip->dst_addr = rte_cpu_to_be_32(0xC0A8'0001u);
  ip->hdr_checksum = 0;
  auto* udp = reinterpret_cast<rte_udp_hdr*>(ip + 1);
  udp->src_port = rte_cpu_to_be_16(sport);
  udp->dst_port = rte_cpu_to_be_16(53);
  udp->dgram_len = rte_cpu_to_be_16(kFrameLen - sizeof(rte_ether_hdr) - sizeof(rte_ipv4_hdr));
  udp->dgram_cksum = 0;
  std::memset(udp + 1, 0, kFrameLen - sizeof(rte_ether_hdr) - sizeof(rte_ipv4_hdr) - sizeof(rte_udp_hdr));
}

// testpmd's 5tswap engine (app/test-pmd/5tswap.c, DPDK 22.11), per packet:
// prefetch the next packet's data, swap the MACs, step over VLAN/QinQ tags,
// swap the IPv4 or IPv6 addresses, then the UDP or TCP ports, and record
// l2/l3/l4 lengths and Tx flags in the mbuf. Written out here (testpmd is a
// program, not a library); noinline because testpmd reaches it through a
// function pointer per burst, as dedup_fwd's worker calls into burst.cpp.
// tx_flags: testpmd's Tx offload flags, none on these ports.
__attribute__((noinline)) void five_tuple_swap(rte_mbuf** pkts, uint16_t n, uint64_t tx_flags) {
  // What testpmd keeps of the Rx flags when it sets its own for Tx.
  constexpr uint64_t kKeep = RTE_MBUF_F_INDIRECT | RTE_MBUF_F_EXTERNAL;
  for (uint16_t i = 0; i < n; ++i) {
    if (i + 1 < n) rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 1], void*));
    rte_mbuf* m = pkts[i];
    auto* eth = rte_pktmbuf_mtod(m, rte_ether_hdr*);
    rte_ether_addr mac;
    rte_ether_addr_copy(&eth->dst_addr, &mac);
    rte_ether_addr_copy(&eth->src_addr, &eth->dst_addr);
    rte_ether_addr_copy(&mac, &eth->src_addr);
    uint16_t proto = eth->ether_type;
    auto* p = reinterpret_cast<uint8_t*>(eth + 1);
    m->l2_len = sizeof(rte_ether_hdr);
    while (proto == RTE_BE16(RTE_ETHER_TYPE_VLAN) || proto == RTE_BE16(RTE_ETHER_TYPE_QINQ)) {
      auto* vlan = reinterpret_cast<rte_vlan_hdr*>(p);
      proto = vlan->eth_proto;
      p += sizeof(rte_vlan_hdr);
      m->l2_len += sizeof(rte_vlan_hdr);
    }
    uint8_t next;
    if (proto == RTE_BE16(RTE_ETHER_TYPE_IPV4)) {
      auto* ip = reinterpret_cast<rte_ipv4_hdr*>(p);
      const rte_be32_t a = ip->src_addr;
      ip->src_addr = ip->dst_addr;
      ip->dst_addr = a;
      next = ip->next_proto_id;
      m->l3_len = rte_ipv4_hdr_len(ip);
    } else if (proto == RTE_BE16(RTE_ETHER_TYPE_IPV6)) {
      auto* ip = reinterpret_cast<rte_ipv6_hdr*>(p);
      uint8_t a[16];
      std::memcpy(a, ip->src_addr, 16);
      std::memcpy(ip->src_addr, ip->dst_addr, 16);
      std::memcpy(ip->dst_addr, a, 16);
      next = ip->proto;
      m->l3_len = sizeof(rte_ipv6_hdr);
    } else {
      m->ol_flags = (m->ol_flags & kKeep) | tx_flags;
      continue;
    }
    p += m->l3_len;
    if (next == IPPROTO_UDP) {
      auto* udp = reinterpret_cast<rte_udp_hdr*>(p);
      const rte_be16_t port = udp->src_port;
      udp->src_port = udp->dst_port;
      udp->dst_port = port;
      m->l4_len = sizeof(rte_udp_hdr);
    } else if (next == IPPROTO_TCP) {
      auto* tcp = reinterpret_cast<rte_tcp_hdr*>(p);
      const rte_be16_t port = tcp->src_port;
      tcp->src_port = tcp->dst_port;
      tcp->dst_port = port;
      m->l4_len = static_cast<uint16_t>((tcp->data_off & 0xf0) >> 2);
    }
    m->ol_flags = (m->ol_flags & kKeep) | tx_flags;
  }
}

// The mbufs and, for dedup_fwd, one worker as dedup_fwd sets it up (filter in
// rte_malloc'd memory, its counters, its key buffer). Kept alive across the
// repeated runs Google Benchmark makes of one benchmark (bench_common's one
// live subject), so the filter is filled once.
class Rig final : public Live {
 public:
  // filter: a dedup_fwd --filter name; empty for the 5tswap baseline.
  // mode: dedup_fwd's --key (the one live Rig's, in g_app). widest: the
  // widest instruction set the filter's bulk body and the hash may use (their
  // use_isa; dedup_fwd allows them all).
  explicit Rig(const std::string& filter, pk::KeyMode mode = pk::KeyMode::src_ip, Isa widest = Isa::avx512) {
    pool_ = rte_pktmbuf_pool_create("pipeline_bench", kPackets, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
    if (!pool_ || rte_pktmbuf_alloc_bulk(pool_, mbufs_.data(), kPackets) != 0) {
      error_ = std::string("mempool: ") + rte_strerror(rte_errno);
      return;
    }
    allocated_ = true;
    for (rte_mbuf* m : mbufs_) {
      m->data_len = kFrameLen;
      m->pkt_len = kFrameLen;
    }
    if (filter.empty()) return;

    df::Options& o = df::g_app.opt;
    o.mode = mode;
    o.policy = dedup::Policy::insert_always;
    o.action = df::Action::drop;
    o.time_source = df::TimeSource::tsc;
    if (std::string err = dedup::parse_filter_option(filter, o.spec); !err.empty()) {
      error_ = err;
      return;
    }
    o.spec.window = Window::count(kWindow);
    o.spec.fpr = 0.01;
    click_ = o.key_options();
    auto planned = dedup::DedupFilter::plan(o.spec);
    if (auto* err = std::get_if<std::string>(&planned)) {
      error_ = "filter: " + *err;
      return;
    }
    df::Worker& w = worker_;
    w.filter = std::get<dedup::DedupFilter>(planned);
    w.arena_bytes = w.filter.bytes_needed();
    w.arena_mem = rte_malloc("pipeline_filter", w.arena_bytes, RTE_CACHE_LINE_SIZE);
    w.stats = &stats_;
    w.key = &key_;
    w.scratch = scratch_.data();
    if (!w.arena_mem) {
      error_ = "cannot allocate the filter (rte_malloc)";
      return;
    }
    Arena arena(w.arena_mem, w.arena_bytes);
    if (std::string err = w.filter.create(arena); !err.empty()) {
      error_ = "filter: " + err;
      return;
    }
    w.filter.use_isa(widest);
    // The hash's narrowest hardware body, AES-NI, under the baseline row
    // (the portable rounds are a fallback no x86-64 server needs).
    hasher_.use_body(widest == Isa::baseline ? Hasher::Body::aes : Hasher::Body::vaes);
    // Steady state: every segment rotated at least once.
    for (uint64_t done = 0; done < 2 * kWindow + kWindow / 16; done += kPackets) {
      refill();
      for (unsigned b = 0; b < kBursts; ++b) (void)decide(b);
      (void)finish();
    }
  }
  ~Rig() override {
    rte_free(worker_.arena_mem);
    if (allocated_) rte_pktmbuf_free_bulk(mbufs_.data(), kPackets);
    rte_mempool_free(pool_);
  }

  // Rewrites every frame with the next kPackets sources and clears what the
  // forwarding code may have set in the mbuf (5tswap swaps in place).
  void refill() {
    for (rte_mbuf* m : mbufs_) {
      write_frame(rte_pktmbuf_mtod(m, uint8_t*), source_of(next_source_), static_cast<uint16_t>(next_source_));
      ++next_source_;
      m->ol_flags = 0;
      m->l2_len = m->l3_len = m->l4_len = 0;
    }
  }

  // The first stages of dedup_fwd's work on burst b alone, for the per-stage
  // figures (each includes the ones before it; the differences are the
  // stages): `parse` runs the fast key extraction dedup_fwd's stage 1 uses
  // for these frames, `key` the whole stage 1 (parse and hash, key_burst),
  // `filter` stage 1, its filter lines requested and the verdicts of the
  // burst before it (decide_burst; one burst in flight, as decide() does),
  // without the split into lists and the counters decide() adds. Returns a
  // count that depends on the work, so none of it is optimised away.
  uint32_t parse(unsigned b) {
    uint32_t keyed = 0;
    rte_mbuf** pkts = &mbufs_[b * kBurst32];
    for (unsigned i = 0; i < 4; ++i) rte_prefetch0(rte_pktmbuf_mtod(pkts[i], void*));  // as key_burst does
    for (unsigned i = 0; i < kBurst32; ++i) {
      if (i + 4 < kBurst32) rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 4], void*));
      rte_mbuf* m = pkts[i];
      pk::Result r;
      pk::detail::FastKey fk;  // as key_burst keeps it
      keyed += pk::detail::ethernet_ipv4_fast(rte_pktmbuf_mtod(m, const uint8_t*), rte_pktmbuf_pkt_len(m),
                                              df::g_app.opt.mode, fk, r) +
               (fk.length ? fk.bytes[fk.length - 1] : 0);
    }
    return keyed;
  }
  uint32_t key(unsigned b) {
    df::Keyed keyed;
    const uint16_t kept = key_burst(b, keyed);
    return kept + keyed.k + static_cast<uint32_t>(keyed.hash[0].h1);
  }
  uint32_t filter_verdicts(unsigned b) {
    df::Staged& next = flight_.free_slot();
    stage(b, next);
    uint32_t n = next.n;
    auto verdicts = [&](const df::Staged& staged) {
      bool dup[kBurst32];
      worker_.filter.decide_burst(staged.keyed.hash, nullptr, staged.keyed.k, df::g_app.opt.policy, dup, staged.lines);
      for (uint16_t i = 0; i < staged.keyed.k; ++i) n += dup[i];
    };
    if (flight_.pending != nullptr) verdicts(*flight_.pending);
    flight_.pending = &next;
    if (b + 1 == kBursts) {  // the frames are rewritten next: none stays in flight
      verdicts(next);
      flight_.pending = nullptr;
    }
    return n;
  }

  // dedup_fwd's work as its worker does it (dpdk_app/worker.cpp): burst b
  // staged (stage 1, its filter lines requested), then the burst staged before
  // it decided and split. Returns that burst's nf + nd (0 when none was in
  // flight), which must be the whole burst; finish() decides the last one.
  uint16_t decide(unsigned b) {
    df::Staged& next = flight_.free_slot();
    stage(b, next);
    const uint16_t placed = finish();
    flight_.pending = &next;
    return placed;
  }
  uint16_t finish() {
    if (flight_.pending == nullptr) return 0;
    const df::Split s = df::decide_staged(worker_, *flight_.pending, fwd_, dups_);
    flight_.pending = nullptr;
    return static_cast<uint16_t>(s.nf + s.nd);
  }
  // Burst b alone, staged and decided at once: dedup_fwd's worker before it
  // kept a burst in flight (the same code, without the overlap).
  uint16_t decide_alone(unsigned b) {
    stage(b, flight_.slot[0]);
    const df::Split s = df::decide_staged(worker_, flight_.slot[0], fwd_, dups_);
    return static_cast<uint16_t>(s.nf + s.nd);
  }
  void swap(unsigned b) { five_tuple_swap(&mbufs_[b * kBurst32], kBurst32, 0); }

  const std::string& error() const { return error_; }
  const df::LcoreStats& stats() const { return stats_; }
  const dedup::DedupFilter& filter() const { return worker_.filter; }
  const Hasher& hasher() const { return hasher_; }

 private:
  // Stage 1 over burst b. Every frame here is one whole segment: none is
  // dropped as malformed, so the count returned stays kBurst32.
  uint16_t key_burst(unsigned b, df::Keyed& keyed) {
    return df::key_burst(&mbufs_[b * kBurst32], kBurst32, stats_, scratch_.data(), key_, hasher_, click_, clock_ns_,
                         keyed);
  }

  void stage(unsigned b, df::Staged& into) {
    std::memcpy(into.pkts, &mbufs_[b * kBurst32], kBurst32 * sizeof(rte_mbuf*));
    into.port = 0;
    df::stage_burst(worker_, into, kBurst32, hasher_, click_, clock_ns_);
  }

  rte_mempool* pool_ = nullptr;
  bool allocated_ = false;
  std::vector<rte_mbuf*> mbufs_ = std::vector<rte_mbuf*>(kPackets);
  df::Worker worker_;
  df::LcoreStats stats_;
  pk::Key key_;
  std::vector<uint8_t> scratch_ = std::vector<uint8_t>(df::kScratchBytes);
  Hasher hasher_{kHashSeed};
  pk::KeyOptions click_;
  uint64_t clock_ns_ = 0;
  uint64_t next_source_ = 0;
  df::InFlight flight_;  // staged by decide(), not yet decided
  rte_mbuf* fwd_[kBurst32];
  rte_mbuf* dups_[kBurst32];
  std::string error_;
};

Rig& rig(const std::string& filter, pk::KeyMode mode = pk::KeyMode::src_ip, Isa widest = Isa::avx512) {
  const std::string key = "pipeline/" + (filter.empty() ? std::string("5tswap") : filter) + "/" +
                          std::to_string(static_cast<int>(mode)) + "/" + isa_name(widest);
  if (Live* l = current_live(key)) return *static_cast<Rig*>(l);
  replace_live(nullptr, "");  // the previous subject's memory (and pool name) first
  auto r = std::make_unique<Rig>(filter, mode, widest);
  Rig& ref = *r;
  replace_live(std::move(r), key);
  return ref;
}

struct Totals {
  uint64_t cycles = 0, cpu_ns = 0, packets = 0;
};

// Every timed 5tswap burst of this process (all runs and repetitions of the
// baseline), for the per_5tswap counter of the dedup_fwd cases, which are
// registered after it. Empty when the filter left the baseline out.
Totals g_swap;

double cpu_cycles_per_pkt(const Totals& t) {
  return t.packets ? static_cast<double>(t.cpu_ns) * tick_hz() / 1e9 / t.packets : 0.0;
}

void report(benchmark::State& st, const Totals& t) {
  const double cpu_cycles = cpu_cycles_per_pkt(t);
  st.SetItemsProcessed(static_cast<int64_t>(t.packets));
  st.counters["cpu_cycles_per_pkt"] = cpu_cycles;
  st.counters["cycles_per_pkt"] = t.packets ? static_cast<double>(t.cycles) / t.packets : 0.0;
  // Packets per second of the thread's CPU time: one core's rate.
  st.counters["pkts_per_s"] = t.cpu_ns ? static_cast<double>(t.packets) * 1e9 / t.cpu_ns : 0.0;
}

// The timed loop of every pipeline case: per iteration, rewrite the frames
// with the timer paused, then time `burst(b)` over all kBursts bursts, in
// thread CPU time and TSC ticks.
template <class Burst>
Totals time_bursts(benchmark::State& st, Rig& r, Burst&& burst) {
  Totals t;
  for (auto _ : st) {
    st.PauseTiming();
    r.refill();
    st.ResumeTiming();
    const uint64_t c0 = thread_cpu_ns();
    const uint64_t t0 = ticks();
    CALLGRIND_TOGGLE_COLLECT;
    for (unsigned b = 0; b < kBursts; ++b) burst(b);
    CALLGRIND_TOGGLE_COLLECT;
    t.cycles += ticks() - t0;
    t.cpu_ns += thread_cpu_ns() - c0;
    t.packets += kPackets;
  }
  return t;
}

void run_5tswap(benchmark::State& st) {
  Rig& r = rig("");
  if (!r.error().empty()) return st.SkipWithError(r.error().c_str());
  const Totals t = time_bursts(st, r, [&](unsigned b) { r.swap(b); });
  report(st, t);
  st.counters["packets"] = static_cast<double>(t.packets);
  g_swap.cycles += t.cycles;
  g_swap.cpu_ns += t.cpu_ns;
  g_swap.packets += t.packets;
  st.SetLabel("parse + swap MAC, IPv4, UDP ports; burst 32");
}

void run_dedup(benchmark::State& st, const std::string& filter, pk::KeyMode mode, Isa widest, bool in_flight) {
  Rig& r = rig(filter, mode, widest);
  if (!r.error().empty()) return st.SkipWithError(r.error().c_str());
  const df::LcoreStats& s = r.stats();
  const uint64_t rx0 = s.rx.get(), keyed0 = s.keyed.get(), dup0 = s.duplicates.get();
  uint64_t placed = 0;
  const Totals t = time_bursts(st, r, [&](unsigned b) {
    if (!in_flight) {
      placed += r.decide_alone(b);
      return;
    }
    placed += r.decide(b);
    if (b + 1 == kBursts) placed += r.finish();  // the frames are rewritten next
  });
  // The accounting dedup_fwd relies on: every packet split into exactly one
  // list, counted once as received, and (these frames all parse) keyed.
  const uint64_t rx = s.rx.get() - rx0, keyed = s.keyed.get() - keyed0;
  if (placed != t.packets || rx != t.packets || keyed != t.packets)
    return st.SkipWithError("accounting: split, rx or keyed differs from the packets processed");
  report(st, t);
  st.counters["packets"] = static_cast<double>(t.packets);
  if (g_swap.packets) st.counters["per_5tswap"] = cpu_cycles_per_pkt(t) / cpu_cycles_per_pkt(g_swap);
  st.counters["dup_rate"] = keyed ? static_cast<double>(s.duplicates.get() - dup0) / keyed : 0.0;
  st.counters["bits_per_item"] = r.filter().bits_per_item();
  st.SetLabel(r.filter().name() + " (" + r.filter().parameters() + ") isa=" + isa_name(r.filter().isa()) +
              " hash=" + short_key_hash::body_name(r.hasher().body()) + "; burst 32" + (in_flight ? ", one in flight" : ", one at a time"));
}

// The stages of dedup_fwd's burst code before the split, for the per-stage
// figures: parse, parse + hash, parse + hash + filter (Rig::parse etc.).
enum class Stage { parse, key, filter };

void run_dedup_stage(benchmark::State& st, const std::string& filter, pk::KeyMode mode, Stage stage) {
  Rig& r = rig(filter, mode);
  if (!r.error().empty()) return st.SkipWithError(r.error().c_str());
  uint64_t sink = 0;
  const Totals t = time_bursts(st, r, [&](unsigned b) {
    sink += stage == Stage::parse ? r.parse(b) : stage == Stage::key ? r.key(b) : r.filter_verdicts(b);
  });
  benchmark::DoNotOptimize(sink);
  report(st, t);
  st.counters["packets"] = static_cast<double>(t.packets);
}

// Under callgrind every case runs a fixed number of iterations once (no
// estimation run), so the instructions it counts belong to `packets` packets.
benchmark::internal::Benchmark* fixed_under_valgrind(benchmark::internal::Benchmark* b) {
  if (RUNNING_ON_VALGRIND) b->Iterations(4);
  return b;
}

}  // namespace

void register_pipeline() {
  // The baseline first: the dedup_fwd cases report their ratio to it.
  fixed_under_valgrind(benchmark::RegisterBenchmark("pipeline/5tswap/burst:32", run_5tswap))
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
  struct Case {
    const char* key;
    pk::KeyMode mode;
    const char* filter;
    Isa widest = Isa::avx512;  // what the filter's bulk body and the hash may use: all but the "-baseline-isa" cases
    bool in_flight = true;     // a burst kept in flight, as the worker does; false: the "-one-burst" case
  };
  // auto, and the one-line layouts, by name; auto again with its bulk
  // body's and the hash's baseline builds, and one burst at a time, so one
  // run shows what AVX2 and the burst in flight buy.
  for (const Case c : {Case{"src_ip", pk::KeyMode::src_ip, "auto"},
                       Case{"src_ip", pk::KeyMode::src_ip, "auto", Isa::avx512, false},
                       Case{"src_ip", pk::KeyMode::src_ip, "auto", Isa::baseline},
                       Case{"src_ip", pk::KeyMode::src_ip, "interleaved"},
                       Case{"src_ip", pk::KeyMode::src_ip, "interleaved-swept"},
                       Case{"src_ip", pk::KeyMode::src_ip, "interleaved-128"},
                       Case{"src_ip", pk::KeyMode::src_ip, "pocket-epoch"},
                       Case{"src_ip", pk::KeyMode::src_ip, "queue-epoch"},
                       Case{"src_ip", pk::KeyMode::src_ip, "interleaved-apbf"},
                       Case{"src_ip", pk::KeyMode::src_ip, "guarded-epoch-blocked"},
                       Case{"src_ip", pk::KeyMode::src_ip, "two-line"},
                       Case{"flow", pk::KeyMode::flow, "auto"}}) {
    const std::string name = std::string("pipeline/dedup_fwd_") + c.key + "/" + c.filter +
                             (c.widest == Isa::baseline ? "-baseline-isa" : "") + (c.in_flight ? "" : "-one-burst") +
                             "/W:" + std::to_string(kWindow) + "/burst:32";
    fixed_under_valgrind(benchmark::RegisterBenchmark(name.c_str(),
                                                      [c](benchmark::State& st) {
                                                        run_dedup(st, c.filter, c.mode, c.widest, c.in_flight);
                                                      }))
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
  // The stages of src-ip with auto's filter (scripts/bench_instructions.sh
  // turns them, with the whole path above, into per-stage figures).
  for (const auto& [stage, label] : {std::pair{Stage::parse, "parse"}, std::pair{Stage::key, "parse+hash"},
                                     std::pair{Stage::filter, "parse+hash+filter"}}) {
    const std::string name = std::string("pipeline/stage/dedup_fwd_src_ip/auto/W:") + std::to_string(kWindow) +
                             "/" + label;
    fixed_under_valgrind(benchmark::RegisterBenchmark(
                             name.c_str(),
                             [stage = stage](benchmark::State& st) { run_dedup_stage(st, "auto", pk::KeyMode::src_ip, stage); }))
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
}

}  // namespace agebloom::perf
