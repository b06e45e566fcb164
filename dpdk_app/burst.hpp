// The per-burst work of dedup_fwd on packets already received: key and hash
// every packet, ask the worker's filter, and split the burst into the packets
// to forward and the duplicates. Nothing here touches a port, so the same code
// runs inside the worker's Rx/Tx loop (worker.cpp) and over mbufs in memory
// (perf/pipeline_bench.cpp), and the benchmark measures what ships.
//
// Run-wide settings (key mode, policy, action, time source, the Rx timestamp
// field) are read from g_app, which main() fills before any lcore starts.
#pragma once

#include <rte_mbuf.h>

#include "app.hpp"

namespace dedup_fwd {

// What the filter needs from a burst: the keyed packets' hashes and clocks.
struct Keyed {
  agebloom::KeyHash hash[kBurst];
  uint64_t time[kBurst];  // the window's clock for each keyed packet (time windows), when `stamped`
  uint16_t at[kBurst];    // index in the burst of keyed packet j
  double penalty_fn[kBurst];  // --decide penalties with --penalty-param: each click's $FN
  uint16_t k = 0;
  // The usual run clocks a burst, not its packets: one clock for all, and
  // time[] left unwritten (32 stores a burst that a worker never reads).
  bool stamped = true;
  uint64_t clock = 0;
  uint64_t time_of(uint16_t j) const { return stamped ? time[j] : clock; }
};

// Stage 1, on whichever lcore receives (a worker, or the dispatcher): key,
// hash and clock of every packet. Malformed mbufs (see burst.cpp) are freed,
// counted in st.malformed and removed from pkts, the rest keeping their
// order; returns how many packets remain. Unparsed frames get no key (they
// pass untouched, like replay) and are counted by reason in `st`. clock_ns
// enters as the burst's clock (TSC) or the latest Rx stamp seen, and leaves
// as the latest stamp when the clock is per packet.
[[nodiscard]] uint16_t key_burst(rte_mbuf** pkts, uint16_t n, LcoreStats& st, uint8_t* scratch,
                                 agebloom::packet::Key& key, const agebloom::Hasher& hasher,
                                 const agebloom::packet::KeyOptions& keys, uint64_t& clock_ns, Keyed& out);

// How a burst was split: fwd[0..nf) and dups[0..nd), nf + nd = the burst
// less its malformed mbufs.
struct Split {
  uint16_t nf = 0;
  uint16_t nd = 0;
};

// Stage 2, on the worker that owns the keys: the verdicts of the keyed packets
// in arrival order, then the split. Every packet lands in exactly one list, in
// order: duplicates in `dups` (unless --action count, which forwards them
// too), everything else, unparsed packets included, in `fwd`. Counts rx,
// keyed and duplicates on the worker; what happens to each list (tx,
// suppressed, mirrored, dropped_error) is the caller's to count.
// now == nullptr: the filter was advanced for the whole burst already. fwd and
// dups must each have room for all n packets (n <= kBurst).
// lines: the keyed packets' filter lines from DedupFilter::prefetch_burst, or
// nullptr.
Split decide_keyed(Worker& w, rte_mbuf** pkts, uint16_t n, const Keyed& in, const uint64_t* now, rte_mbuf** fwd,
                   rte_mbuf** dups, void* const* lines = nullptr);

// A burst between its stages: received, keyed and hashed (stage 1) and the
// filter lines of its keys requested, its verdicts (stage 2) not yet taken.
// A worker keeps one in flight: it receives and keys the next burst before it
// decides this one, so this one's filter lines arrive while that work runs
// instead of stalling the probe (docs/PERFORMANCE.md, "One burst in flight").
// The verdicts are the same: bursts are still decided one after another, in
// arrival order.
struct Staged {
  rte_mbuf* pkts[kBurst];
  uint16_t n = 0;         // packets, after stage 1 dropped the malformed ones
  Keyed keyed;
  void* lines[kBurst];    // keyed packet j's filter line, where the filter names one (prefetch_burst)
  uint64_t clock_ns = 0;  // the burst's clock on the TSC (time windows without Rx stamps)
  int port = -1;          // the Rx port every packet of it came from
};

// A worker's bursts in flight: at most one staged and not yet decided; the
// next receive takes the other slot.
struct InFlight {
  Staged slot[2];
  Staged* pending = nullptr;  // staged, verdicts not yet taken
  Staged& free_slot() noexcept { return pending == &slot[0] ? slot[1] : slot[0]; }
};

// Stage 1 on the received b.pkts[0..n), then the keyed packets' filter lines
// requested (DedupFilter::prefetch_burst). clock_ns as for key_burst; b.clock_ns
// is set to it, b.n to the packets left.
void stage_burst(Worker& w, Staged& b, uint16_t n, const agebloom::Hasher& hasher,
                     const agebloom::packet::KeyOptions& keys, uint64_t& clock_ns);

// Stage 2 of a staged burst: for a TSC clock the filter is advanced to
// b.clock_ns first (with Rx timestamps each packet advances it to its own),
// then decide_keyed.
Split decide_staged(Worker& w, Staged& b, rte_mbuf** fwd, rte_mbuf** dups);

// True when time windows take each packet's Rx timestamp (not one TSC reading
// per burst).
inline bool per_packet_time() noexcept {
  return g_app.opt.spec.window.is_time() && g_app.opt.time_source == TimeSource::rx_timestamp;
}

}  // namespace dedup_fwd
