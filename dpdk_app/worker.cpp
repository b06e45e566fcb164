// The worker's loop around a burst: receive, then stages 1 and 2 (key, hash,
// decide, split; burst.cpp, shared with perf/pipeline_bench.cpp), then stage
// 3, send. Also the dispatcher's loop and the main lcore's housekeeping.
#include "worker.hpp"

#include <rte_cycles.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_pause.h>
#include <rte_ring_elem.h>

#include <cstring>

#include "burst.hpp"
#include "snapshot.hpp"
#include "stats.hpp"

namespace dedup_fwd {

namespace ab = agebloom;
namespace pk = agebloom::packet;

namespace {

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

// Sends pkts[0..n) on `port`, Tx queue = the worker's index (shared queues
// under their lock); what the PMD refuses after a few tries is freed and
// counted as dropped-for-error, so no mbuf is ever lost.
uint16_t send(Worker& w, uint16_t port, rte_mbuf** pkts, uint16_t n) {
  const uint16_t queue = w.txq[port];
  rte_spinlock_t* lock = g_app.tx_lock[port] ? &g_app.tx_lock[port][queue] : nullptr;
  if (lock) rte_spinlock_lock(lock);
  uint16_t sent = 0;
  for (int tries = 0; sent < n && tries < 4; ++tries)
    sent += rte_eth_tx_burst(port, queue, pkts + sent, n - sent);
  if (lock) rte_spinlock_unlock(lock);
  if (sent < n) {
    rte_pktmbuf_free_bulk(pkts + sent, n - sent);
    w.stats->dropped_error.add(n - sent);
  }
  return sent;
}

// Forwards pkts[0..n) to each one's destination port, in order: one
// rte_eth_tx_burst per run of packets bound for the same port (with RSS a
// burst comes from one port; a dispatched one may mix them).
uint16_t forward(Worker& w, rte_mbuf** pkts, uint16_t n) {
  uint16_t sent = 0;
  for (uint16_t i = 0; i < n;) {
    const uint16_t port = g_app.dst[pkts[i]->port];
    uint16_t j = i + 1;
    while (j < n && g_app.dst[pkts[j]->port] == port) ++j;
    sent += send(w, port, pkts + i, j - i);
    i = j;
  }
  return sent;
}

// Receives up to a burst from one queue within the --max-packets budget.
// Malformed mbufs come back too: stage 1 (key_burst) drops them while it
// reads each header anyway, so the burst is not walked twice.
uint16_t receive(const RxQueue& q, rte_mbuf** pkts) {
  uint16_t want = kBurst;
  if (g_app.opt.max_packets) {
    want = reserve_budget(kBurst);
    if (want == 0) {
      g_app.quit.store(true, std::memory_order_relaxed);
      return 0;
    }
  }
  const uint16_t n = rte_eth_rx_burst(q.port, q.queue, pkts, want);
  if (g_app.opt.max_packets && n < want) g_app.budget.fetch_add(want - n, std::memory_order_relaxed);
  return n;
}

// Stage 3: forward what passed, and drop, mirror or (under --action count,
// where decide_keyed put them in fwd) forward the duplicates. Every mbuf is
// sent or freed here and counted once: tx, mirrored, suppressed, or
// dropped_error for what a PMD refused.
// from_port: the port the whole burst came from (its packets share one
// destination), or -1 when a dispatched burst may mix ports.
void send_split(Worker& w, rte_mbuf** fwd, rte_mbuf** dups, Split s, int from_port) {
  LcoreStats& st = *w.stats;
  if (s.nf) st.tx.add(from_port >= 0 ? send(w, g_app.dst[from_port], fwd, s.nf) : forward(w, fwd, s.nf));
  if (s.nd && g_app.opt.action == Action::mirror) {
    st.mirrored.add(send(w, g_app.opt.mirror_port, dups, s.nd));
  } else if (s.nd) {
    rte_pktmbuf_free_bulk(dups, s.nd);
    st.suppressed.add(s.nd);
  }
}

// Stage 2 and stage 3 of the burst in flight, if any: decide, split, send.
void finish_pending(Worker& w, InFlight& f) {
  Staged* b = f.pending;
  if (b == nullptr) return;
  f.pending = nullptr;
  rte_mbuf* fwd[kBurst];
  rte_mbuf* dups[kBurst];
  const Split s = decide_staged(w, *b, fwd, dups);
  send_split(w, fwd, dups, s, b->port);
  w.stats->bursts.add(1);
}

// --exit-on-idle's clock (LcoreStats::idle_since_tsc), per round over all
// of a poller's queues: an empty queue beside a busy one is no idle streak.
void note_poll_round(LcoreStats& st, unsigned received) {
  if (received != 0) st.idle_since_tsc.set(0);
  else if (st.idle_since_tsc.get() == 0) st.idle_since_tsc.set(rte_rdtsc());
}

// An empty poll with no burst in flight, on the TSC clock of a time window:
// the filter's clock moves on (at most every 10 µs, and only once a burst has
// started its epochs), so that epoch rotations, and interleaved-swept's sweep
// of its spare lane, happen while nothing arrives rather than inside the next
// burst after a quiet spell. clock_ns follows, so that a snapshot records the
// filter's own time. With --time-source rx-timestamp the packets are the clock.
void advance_when_idle(Worker& w, uint64_t tsc, uint64_t& clock_ns) {
  if (w.idle_advance_tsc == 0 || tsc - w.idle_advance_tsc < g_app.tsc_hz / 100'000) return;
  w.idle_advance_tsc = tsc;
  clock_ns = tsc_to_ns(tsc - g_app.start_tsc) + g_app.clock_offset_ns;
  (void)w.filter.advance(clock_ns);  // cannot fail: the TSC does not go back
}

// One poll of one of the worker's own Rx queues (RSS or a single worker),
// top to bottom: receive and key the new burst, request its filter lines,
// then decide and send the burst received before it, which stays in flight
// for one poll only (an empty poll sends it at once). Both bursts' work in
// one loop, so the lines requested for the new one arrive while the old one
// is decided and the next is received.
uint16_t process_burst(Worker& w, const RxQueue& q, InFlight& f, uint64_t& clock_ns, const ab::Hasher& hasher,
                       const pk::KeyOptions& keys) {
  const Options& o = g_app.opt;
  // Busy cycles run from before the receive to after the send, counted for
  // polls that brought packets or sent some: what testpmd's
  // --record-core-cycles counts, so the two are compared like for like
  // (scripts/bench_pipeline.sh).
  const uint64_t t0 = rte_rdtsc();
  Staged& b = f.free_slot();
  const uint16_t n = receive(q, b.pkts);
  if (n == 0 && f.pending == nullptr) {
    advance_when_idle(w, t0, clock_ns);
    return 0;
  }
  if (n != 0) {
    // Time windows on the TSC clock: one reading for the burst.
    if (o.spec.window.is_time() && !per_packet_time()) {
      clock_ns = tsc_to_ns(t0 - g_app.start_tsc) + g_app.clock_offset_ns;
      w.idle_advance_tsc = t0;
    }
    b.port = q.port;
    stage_burst(w, b, n, hasher, keys, clock_ns);
  }
  finish_pending(w, f);
  if (n != 0) f.pending = &b;
  w.stats->busy_cycles.add(rte_rdtsc() - t0);
  return n;
}

// Dispatch mode, the worker's side: one burst from its ring, already keyed
// and hashed by the dispatcher, which also stamped each packet's clock.
uint16_t process_ring_burst(Worker& w) {
  Dispatched d[kBurst];
  const uint64_t t0 = rte_rdtsc();  // busy cycles as in process_burst
  const unsigned n = rte_ring_sc_dequeue_burst_elem(w.ring, d, sizeof(Dispatched), kBurst, nullptr);
  if (n == 0) return 0;

  rte_mbuf* pkts[kBurst];
  Keyed keyed;
  for (uint16_t i = 0; i < n; ++i) {
    pkts[i] = d[i].m;
    if (!d[i].keyed) continue;
    keyed.hash[keyed.k] = d[i].hash;
    keyed.time[keyed.k] = d[i].now;
    keyed.at[keyed.k++] = i;
  }
  // A time window's epochs start at the filter's first advance. One filter
  // (replay, or a single worker) starts them at the first keyed packet; so
  // must every shard, or a key aged between T and T + one epoch could get a
  // different verdict depending on which worker owns it.
  if (!w.clock_anchored && keyed.k) {
    (void)w.filter.advance(g_app.time_anchor_ns.load(std::memory_order_acquire));  // count windows: no-op
    w.clock_anchored = true;
  }
  rte_mbuf* fwd[kBurst];
  rte_mbuf* dups[kBurst];
  const Split s = decide_keyed(w, pkts, static_cast<uint16_t>(n), keyed,
                               g_app.opt.spec.window.is_time() ? keyed.time : nullptr, fwd, dups);
  send_split(w, fwd, dups, s, -1);

  w.stats->bursts.add(1);
  w.stats->busy_cycles.add(rte_rdtsc() - t0);
  return static_cast<uint16_t>(n);
}

// The worker that owns a key. Not a bit the filters read directly: they take
// their line or block from the top bits of h1 and their probe bits from h2
// (double hashing, salted products, and in the one-line layouts h2's bits
// consumed in fields from the bottom up). Routing on any of those bits, say
// reduce(h2, N), would fix them within each worker's keys and skew its
// filter (e.g. one interleaved pattern field confined to half its range). A
// bijective mix of both words leaves every bit of h1 and h2 uniform.
inline unsigned owner(const ab::KeyHash& h, unsigned nworkers) {
  return static_cast<unsigned>(ab::reduce(ab::mix64(h.h1 ^ h.h2), nworkers));
}

// Dispatch mode, the dispatcher's side: receive, key and hash a burst, then
// enqueue each packet to the worker owning its key (unparsed ones to worker
// 0). A full ring is waited on, never dropped from: back-pressure reaches the
// NIC's Rx ring, and the accounting stays exact. Workers drain their rings
// until the dispatcher says it is done, so the wait always ends.
uint16_t dispatch_burst(Dispatcher& d, const RxQueue& q, uint64_t& clock_ns, const ab::Hasher& hasher,
                    const pk::KeyOptions& keys) {
  const Options& o = g_app.opt;
  LcoreStats& st = *d.stats;
  rte_mbuf* pkts[kBurst];
  const uint64_t t0 = rte_rdtsc();  // busy cycles as in process_burst
  const uint16_t received = receive(q, pkts);
  if (received == 0) return 0;
  if (o.spec.window.is_time() && o.time_source == TimeSource::tsc)
    clock_ns = tsc_to_ns(t0 - g_app.start_tsc) + g_app.clock_offset_ns;

  Keyed keyed;
  const uint16_t n = key_burst(pkts, received, st, d.scratch, *d.key, hasher, keys, clock_ns, keyed);
  if (keyed.k && !d.clock_anchored) {
    g_app.time_anchor_ns.store(keyed.time_of(0), std::memory_order_release);  // before any enqueue
    d.clock_anchored = true;
  }

  const unsigned nworkers = static_cast<unsigned>(g_app.workers.size());
  unsigned count[RTE_MAX_LCORE] = {};
  for (uint16_t i = 0, j = 0; i < n; ++i) {
    const bool is_keyed = j < keyed.k && keyed.at[j] == i;
    const unsigned w = is_keyed ? owner(keyed.hash[j], nworkers) : 0;
    d.stage[w][count[w]++] = is_keyed ? Dispatched{pkts[i], keyed.time_of(j), keyed.hash[j], 1, 0}
                                      : Dispatched{pkts[i], 0, {}, 0, 0};
    j += is_keyed;
  }
  for (unsigned w = 0; w < nworkers; ++w) {
    unsigned done = rte_ring_sp_enqueue_burst_elem(g_app.workers[w].ring, d.stage[w].data(), sizeof(Dispatched),
                                                   count[w], nullptr);
    if (done < count[w]) st.ring_full.add(1);
    while (done < count[w]) {
      rte_pause();
      done += rte_ring_sp_enqueue_burst_elem(g_app.workers[w].ring, d.stage[w].data() + done, sizeof(Dispatched),
                                             count[w] - done, nullptr);
    }
  }
  st.rx.add(n);
  st.bursts.add(1);
  st.busy_cycles.add(rte_rdtsc() - t0);
  return received;
}

}  // namespace

int worker_main(void* arg) {
  Worker& w = *static_cast<Worker*>(arg);
  const Options& o = g_app.opt;
  const ab::Hasher hasher(g_app.seed);
  const pk::KeyOptions keys = o.key_options();
  const bool housekeeper = rte_lcore_id() == rte_get_main_lcore();
  // Rx stamps go on from a restore; the TSC clock from its offset (the
  // restored clock plus the time down, else 0), so that a snapshot saved
  // before any burst does not record a clock behind the filter's own.
  uint64_t clock_ns = per_packet_time() ? g_app.restored_clock_ns : g_app.clock_offset_ns;
  InFlight in_flight;
  // A restored filter's epochs have begun: idle polls advance it from the
  // start, so that what expired while the process was down (and since) is
  // cleared before traffic comes back, not inside its first burst.
  if (g_app.filters_restored && o.spec.window.is_time() && !per_packet_time()) w.idle_advance_tsc = rte_rdtsc();

  std::printf("dedup_fwd: worker %u on lcore %u (socket %d) polls", w.index, w.lcore_id, w.socket);
  if (w.ring) std::printf(" its ring from the dispatcher");
  for (const RxQueue& q : w.rxq) std::printf(" port %u queue %u", q.port, q.queue);
  std::printf("\n");
  std::fflush(stdout);

  for (;;) {
    if (w.ring) {
      // Read "done" before polling: an empty ring after the dispatcher's last
      // enqueue means nothing is left in flight for this worker.
      const bool last = g_app.dispatch_done.load(std::memory_order_acquire);
      if (process_ring_burst(w) == 0 && last) break;
    } else {
      if (g_app.quit.load(std::memory_order_relaxed)) {
        finish_pending(w, in_flight);
        break;
      }
      unsigned got = 0;
      for (const RxQueue& q : w.rxq) got += process_burst(w, q, in_flight, clock_ns, hasher, keys);
      note_poll_round(*w.stats, got);
    }
    // The filter's figures and snapshots describe every packet received so
    // far: the burst in flight is decided first.
    if (w.stats->figures_request.load(std::memory_order_relaxed) != 0 ||
        w.stats->snapshot_request.load(std::memory_order_acquire))
      finish_pending(w, in_flight);
    if (w.stats->figures_request.load(std::memory_order_relaxed) != 0) {
      // Done here, between bursts, because only the owner may read the
      // filter without a race. The ask is taken before publishing, so one
      // made meanwhile is answered by the next loop.
      const uint32_t asked = w.stats->figures_request.exchange(0, std::memory_order_relaxed);
      publish_filter_figures(w, (asked & kAskFill) != 0);
    }
    if (w.stats->snapshot_request.load(std::memory_order_acquire)) {
      // A consistent copy for --snapshot-interval, taken by the owner between bursts.
      std::memcpy(w.snapshot_copy, w.arena_mem, w.arena_bytes);
      w.stats->snapshot_clock_ns.set(clock_ns);
      w.stats->snapshot_request.store(false, std::memory_order_relaxed);
      w.stats->snapshot_ready.store(true, std::memory_order_release);
    }
    if (housekeeper) housekeeping(rte_rdtsc());
  }
  w.stats->last_clock_ns.set(clock_ns);
  g_app.workers_stopped.fetch_add(1, std::memory_order_release);  // see App::workers_stopped
  return 0;
}

int dispatcher_main(Dispatcher& d) {
  const ab::Hasher hasher(g_app.seed);  // the workers' filters are probed with these hashes
  const pk::KeyOptions keys = g_app.opt.key_options();
  // Rx stamps go on from a restore; the TSC clock from its offset (as a worker's).
  uint64_t clock_ns = per_packet_time() ? g_app.restored_clock_ns : g_app.clock_offset_ns;
  std::printf("dedup_fwd: dispatcher on lcore %u polls", d.lcore_id);
  for (const RxQueue& q : d.rxq) std::printf(" port %u queue %u", q.port, q.queue);
  std::printf("\n");
  std::fflush(stdout);

  while (!g_app.quit.load(std::memory_order_relaxed)) {
    unsigned got = 0;
    for (const RxQueue& q : d.rxq) got += dispatch_burst(d, q, clock_ns, hasher, keys);
    note_poll_round(*d.stats, got);
    d.stats->last_clock_ns.set(clock_ns);  // dispatch mode: the workers' clock, for snapshots
    housekeeping(rte_rdtsc());
  }
  // Everything received has been enqueued: the workers may stop once their
  // rings are empty.
  g_app.dispatch_done.store(true, std::memory_order_release);
  return 0;
}

void housekeeping(uint64_t now) {
  const Options& o = g_app.opt;
  static uint64_t next_stats = 0;
  const uint64_t hz = g_app.tsc_hz;
  if (o.stats_interval_s) {
    if (next_stats == 0) next_stats = g_app.start_tsc + o.stats_interval_s * hz;
    // The fill ratio is computed by each worker between bursts (it owns its
    // filter): ask 100 ms before the line is due, so the line shows this
    // interval's fill rather than the previous one's.
    static uint64_t asked_for = 0;
    if (asked_for != next_stats && now + hz / 10 >= next_stats) {
      request_fill();
      asked_for = next_stats;
    }
    if (now >= next_stats) {
      print_stats_line(now);
      next_stats += o.stats_interval_s * hz;
    }
  }
  snapshot_tick(now);
  if (o.exit_on_idle_ms) {
    // Idle = every lcore that polls the ports (the dispatcher, else each
    // worker) has found nothing for the whole period, by its own polls: one
    // not yet polling (a worker still starting), or descheduled after a
    // burst, has no idle streak, so a short period cannot end a capture
    // early (it did: 0 of 4631 packets at --exit-on-idle 1 on two lcores).
    uint64_t since = 0;
    auto streak = [&](const LcoreStats& st) {
      const uint64_t t = st.idle_since_tsc.get();
      if (t == 0) return false;
      since = std::max(since, t);
      return true;
    };
    bool idle = true;
    if (g_app.dispatch) idle = streak(*g_app.dispatcher.stats);
    else
      for (const Worker& w : g_app.workers) idle = streak(*w.stats) && idle;
    if (idle && now > since && (now - since) * 1000 / hz >= o.exit_on_idle_ms)
      g_app.quit.store(true, std::memory_order_relaxed);
  }
}

}  // namespace dedup_fwd
