#include "worker.hpp"

#include <rte_cycles.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>

#include "stats.hpp"

namespace dedup_fwd {

namespace ab = agebloom;
namespace pk = agebloom::packet;

namespace {

// Packets ahead whose first data line is prefetched while one is parsed.
constexpr uint16_t kPrefetchAhead = 4;

// TSC cycles since start → nanoseconds, the unit of --ttl. One multiply.
inline uint64_t tsc_to_ns(uint64_t cycles) {
  __extension__ using u128 = unsigned __int128;
  return static_cast<uint64_t>(static_cast<u128>(cycles) * 1'000'000'000u / g_app.tsc_hz);
}

// Reserves up to `want` packets of the --max-packets budget (all workers share
// it), so the run stops at exactly N received packets however many workers.
uint16_t reserve_budget(uint16_t want) {
  uint64_t left = g_app.budget.load(std::memory_order_relaxed);
  uint16_t take;
  do {
    take = static_cast<uint16_t>(left < want ? left : want);
    if (take == 0) return 0;
  } while (!g_app.budget.compare_exchange_weak(left, left - take, std::memory_order_relaxed));
  return take;
}

// Sends pkts[0..n) on (port, queue); what the PMD refuses after a few tries is
// freed and counted as dropped-for-error, so no mbuf is ever lost.
uint16_t send(Worker& w, uint16_t port, rte_mbuf** pkts, uint16_t n) {
  uint16_t sent = 0;
  for (int tries = 0; sent < n && tries < 4; ++tries)
    sent += rte_eth_tx_burst(port, static_cast<uint16_t>(w.index), pkts + sent, n - sent);
  if (sent < n) {
    rte_pktmbuf_free_bulk(pkts + sent, n - sent);
    w.stats->dropped_error.add(n - sent);
  }
  return sent;
}

// The frame as contiguous bytes: extract_key reads one buffer, so chained
// (jumbo) mbufs are copied into the worker's scratch.
inline const uint8_t* frame_bytes(const Worker& w, const rte_mbuf* m, uint32_t& len) {
  len = rte_pktmbuf_pkt_len(m);
  if (rte_pktmbuf_is_contiguous(m)) return rte_pktmbuf_mtod(m, const uint8_t*);
  if (len > kScratchBytes) len = kScratchBytes;
  return static_cast<const uint8_t*>(rte_pktmbuf_read(m, 0, len, w.scratch));
}

// One burst from one queue, top to bottom: receive, key, hash, decide, send.
void process_burst(Worker& w, const RxQueue& q, uint64_t& clock_ns, const ab::Hasher& hasher,
                   const pk::ClickOptions& click) {
  const Options& o = g_app.opt;
  LcoreStats& st = *w.stats;
  rte_mbuf* pkts[kBurst];

  uint16_t want = kBurst;
  if (o.max_packets) {
    want = reserve_budget(kBurst);
    if (want == 0) {
      g_app.quit.store(true, std::memory_order_relaxed);
      return;
    }
  }
  const uint16_t n = rte_eth_rx_burst(q.port, q.queue, pkts, want);
  if (o.max_packets && n < want) g_app.budget.fetch_add(want - n, std::memory_order_relaxed);
  if (n == 0) return;
  const uint64_t t0 = rte_rdtsc();
  st.last_rx_tsc.set(t0);

  // Time windows on the TSC clock: one reading for the whole burst.
  const bool per_packet_time = o.spec.window.is_time() && o.time_source == TimeSource::rx_timestamp;
  if (o.spec.window.is_time() && !per_packet_time) {
    clock_ns = tsc_to_ns(t0 - g_app.start_tsc);
    (void)w.filter.advance(clock_ns);  // cannot fail: the TSC does not go back
  }

  // 1. Keys and their hashes. Unparsed frames pass untouched (like replay).
  ab::KeyHash hashes[kBurst];
  uint64_t times[kBurst];
  uint16_t keyed_at[kBurst];
  uint16_t k = 0;
  uint64_t no_ts = 0, regressions = 0;
  for (uint16_t i = 0; i < kPrefetchAhead && i < n; ++i) rte_prefetch0(rte_pktmbuf_mtod(pkts[i], void*));
  for (uint16_t i = 0; i < n; ++i) {
    if (i + kPrefetchAhead < n) rte_prefetch0(rte_pktmbuf_mtod(pkts[i + kPrefetchAhead], void*));
    uint32_t len;
    const uint8_t* data = frame_bytes(w, pkts[i], len);
    const pk::Result r = pk::extract_key(pk::linktype::en10mb, data, len, o.mode, click, *w.key);
    if (!r.ok()) {
      st.reasons[static_cast<size_t>(r.reason)].add(1);
      continue;
    }
    if (per_packet_time) {
      // The replay's rule: a stamp that steps back holds the clock at the latest.
      const rte_mbuf* m = pkts[i];
      if (m->ol_flags & g_app.ts_flag) {
        const uint64_t t = *RTE_MBUF_DYNFIELD(m, g_app.ts_offset, const rte_mbuf_timestamp_t*) *
                           g_app.ts_scale[m->port];
        if (t < clock_ns) ++regressions;
        else clock_ns = t;
      } else {
        ++no_ts;
      }
      times[k] = clock_ns;
    }
    hashes[k] = hasher(w.key->bytes, w.key->length);
    keyed_at[k++] = i;
  }

  // 2. Verdicts for the keyed packets, in order, lines prefetched ahead.
  bool dup[kBurst];
  w.filter.decide_burst(hashes, per_packet_time ? times : nullptr, k, o.policy, dup);

  // 3. Route: forward the rest, act on duplicates.
  rte_mbuf* fwd[kBurst];
  rte_mbuf* dups[kBurst];
  uint16_t nf = 0, nd = 0;
  for (uint16_t i = 0, j = 0; i < n; ++i) {
    const bool is_dup = j < k && keyed_at[j] == i && dup[j++];
    if (is_dup && o.action != Action::count) dups[nd++] = pkts[i];
    else fwd[nf++] = pkts[i];
  }
  uint64_t ndup = 0;
  for (uint16_t j = 0; j < k; ++j) ndup += dup[j];

  if (nf) st.tx.add(send(w, g_app.dst[q.port], fwd, nf));
  if (nd && o.action == Action::mirror) {
    st.mirrored.add(send(w, o.mirror_port, dups, nd));
  } else if (nd) {
    rte_pktmbuf_free_bulk(dups, nd);
    st.suppressed.add(nd);
  }

  st.rx.add(n);
  st.keyed.add(k);
  st.duplicates.add(ndup);
  if (regressions) st.time_regressions.add(regressions);
  if (no_ts) st.no_timestamp.add(no_ts);
  st.bursts.add(1);
  st.busy_cycles.add(rte_rdtsc() - t0);
}

}  // namespace

int worker_main(void* arg) {
  Worker& w = *static_cast<Worker*>(arg);
  const Options& o = g_app.opt;
  const ab::Hasher hasher(g_app.seed);
  const pk::ClickOptions click = o.click_options();
  const bool housekeeper = rte_lcore_id() == rte_get_main_lcore();
  uint64_t clock_ns = 0;

  std::printf("dedup_fwd: worker %u on lcore %u (socket %d) polls", w.index, w.lcore_id, w.socket);
  for (const RxQueue& q : w.rxq) std::printf(" port %u queue %u", q.port, q.queue);
  std::printf("\n");
  std::fflush(stdout);

  while (!g_app.quit.load(std::memory_order_relaxed)) {
    for (const RxQueue& q : w.rxq) process_burst(w, q, clock_ns, hasher, click);
    if (w.stats->fill_request.load(std::memory_order_relaxed)) {
      // Scans the whole filter: done here, between bursts, because only the
      // owner may read the bits without a race.
      w.stats->fill_ppm.set(static_cast<uint64_t>(w.filter.fill_ratio() * 1e6));
      w.stats->fill_request.store(false, std::memory_order_relaxed);
    }
    if (housekeeper) housekeeping(rte_rdtsc());
  }
  return 0;
}

void housekeeping(uint64_t now) {
  const Options& o = g_app.opt;
  static uint64_t next_stats = 0;
  const uint64_t hz = g_app.tsc_hz;
  if (o.stats_interval_s) {
    if (next_stats == 0) next_stats = g_app.start_tsc + o.stats_interval_s * hz;
    if (now >= next_stats) {
      print_stats_line(now);
      next_stats += o.stats_interval_s * hz;
    }
  }
  if (o.exit_on_idle_ms) {
    // Idle = no worker received anything for the whole period (counted from
    // the start while nothing has arrived yet).
    uint64_t last = g_app.start_tsc;
    for (const Worker& w : g_app.workers) {
      const uint64_t t = w.stats->last_rx_tsc.get();
      if (t > last) last = t;
    }
    if (now > last && (now - last) * 1000 / hz >= o.exit_on_idle_ms) g_app.quit.store(true, std::memory_order_relaxed);
  }
}

}  // namespace dedup_fwd
