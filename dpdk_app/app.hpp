// State shared by dedup_fwd's parts: options, the port plan, the workers and
// their counters. Set up once by main() before any lcore is launched; after
// launch only the counters (single writer: the owning worker) and the quit
// flag change.
#pragma once

#include <rte_common.h>
#include <rte_ethdev.h>
#include <rte_mempool.h>
#include <rte_ring.h>
#include <rte_spinlock.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "agebloom/packet/bpf.hpp"
#include "agebloom/dedup/dedup_filter.hpp"
#include "agebloom/packet/key_extract.hpp"
#include "options.hpp"

namespace dedup_fwd {

inline constexpr uint16_t kBurst = 32;
// Most named figures a structure reports (DedupFilter::stats(); the
// time-limited filter has 6, an epoch filter under --ttl 3).
inline constexpr size_t kFilterStats = 16;
// What LcoreStats::figures_request asks for.
inline constexpr uint32_t kAskFigures = 1, kAskFill = 2;

// A counter with one writer (its worker) and any number of readers (the stats
// line, telemetry, the exit JSON). Relaxed load + store: no locked
// instruction on the fast path, yet no torn or undefined reads elsewhere.
class Counter {
 public:
  void add(uint64_t n) noexcept { v_.store(v_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed); }
  void set(uint64_t n) noexcept { v_.store(n, std::memory_order_relaxed); }
  uint64_t get() const noexcept { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> v_{0};
};

// Per worker lcore, on its own cache lines so workers never share one.
struct alignas(RTE_CACHE_LINE_SIZE) LcoreStats {
  Counter rx, tx, keyed, duplicates, suppressed, mirrored, dropped_error;
  Counter time_regressions, no_timestamp, bursts, busy_cycles;
  // The first poll that found nothing since the last that found packets
  // (0: the last poll found some, or none was made yet): --exit-on-idle's
  // clock, which a poller preempted or still starting cannot run.
  Counter idle_since_tsc;
  Counter ring_full;  // dispatcher: enqueues that found a worker's ring full and waited
  // --decide penalties: Σ expected penalty of the verdicts in millionths (a
  // counter, so the stats line and telemetry read it without a lock), and
  // the clicks whose $FN came from --penalty-param.
  Counter expected_penalty_micro, penalty_from_param;
  // Mbufs a PMD handed over that are no frame: zero length, or segment
  // lengths that do not add up to pkt_len (net_pcap reading a damaged
  // capture). Freed as stage 1 keys the burst, never forwarded; totals
  // count them as received and dropped_error.
  Counter malformed;
  // Frames --bpf did not match: passed untouched, neither keyed nor unparsed.
  Counter bpf_unmatched;
  std::array<Counter, agebloom::packet::kReasonCount> reasons;  // [ok] unused
  // The filter's figures. Only the filter's owner may read the filter, so
  // the stats line and telemetry ask (figures_request: kAskFigures, plus
  // kAskFill for the fill, which scans the whole filter) and the worker
  // publishes them between two bursts under the seqlock figures_seq
  // (publish_filter_figures and read_filter_figures in stats.cpp, which say
  // why the ordering is enough).
  std::atomic<uint32_t> figures_request{0};
  std::atomic<uint64_t> figures_seq{0};  // odd while the worker writes the figures below
  Counter fill_ppm;  // parts per 1e6
  Counter effective_window;  // insertions or ns (DedupFilter::effective_window)
  std::array<Counter, kFilterStats> filter_stats;  // DedupFilter::stats() values as double bits, App::filter_stat_names
  // Periodic snapshots: main asks, the worker copies its arena into
  // Worker::snapshot_copy between two bursts (it owns the filter) with its
  // clock, then says it is ready.
  std::atomic<bool> snapshot_request{false};
  std::atomic<bool> snapshot_ready{false};
  Counter snapshot_clock_ns;
  Counter last_clock_ns;  // the worker's clock when it stopped (the final snapshot's)
  // The filter's own warnings, published with its figures: budget
  // saturations (tlbf), overloaded epochs and early rotations (--on-flood).
  Counter budget_saturations, overloaded_epochs, early_rotations;
};

struct RxQueue {
  uint16_t port;
  uint16_t queue;
};

// One worker lcore: the queues it polls and the filter shard it owns.
struct Worker {
  unsigned lcore_id = 0;
  unsigned index = 0;
  // Its Tx queue on each port: index mod that port's queue count (queues are
  // shared under a lock when there are fewer than workers), set once.
  std::array<uint16_t, RTE_MAX_ETHPORTS> txq{};
  int socket = 0;
  std::vector<RxQueue> rxq;
  agebloom::dedup::DedupFilter filter;  // arena below, on the lcore's socket
  void* arena_mem = nullptr;
  size_t arena_bytes = 0;
  LcoreStats* stats = nullptr;  // rte_zmalloc_socket, cache aligned
  uint8_t* scratch = nullptr;   // linearises multi-segment frames for extract_key
  agebloom::packet::Key* key = nullptr;
  unsigned char* snapshot_copy = nullptr;  // --snapshot-interval: arena_bytes, on the worker's socket
  rte_ring* ring = nullptr;  // dispatch mode: what the dispatcher hands this worker
  bool clock_anchored = false;  // dispatch mode: filter's epochs anchored at time_anchor_ns
  uint64_t idle_advance_tsc = 0;  // TSC clock: when an empty poll last advanced the filter (0: no burst
                                 // yet and nothing restored, the epochs not begun)
};

inline constexpr size_t kScratchBytes = 65536;

// Dispatch mode (ports without RSS on the key's fields, or with too few
// queues): the main lcore receives every packet, keys and hashes it, and
// hands it to the worker that owns the key over a single-producer,
// single-consumer ring. One entry per packet: the hash and the time are
// computed once, on the dispatcher, so the worker only decides and sends.
struct Dispatched {
  rte_mbuf* m;
  uint64_t now;  // time windows: the packet's clock in ns (the dispatcher's)
  agebloom::KeyHash hash;
  uint32_t keyed;  // 0: unparsed, passes untouched (always worker 0)
  uint32_t pad;
};
static_assert(sizeof(Dispatched) % 4 == 0, "rte_ring elements are multiples of 4 bytes");

// Entries per worker ring; a full ring makes the dispatcher wait (back-pressure
// onto the NIC's Rx ring) rather than drop.
inline constexpr unsigned kRingSize = 1024;

struct Dispatcher {
  unsigned lcore_id = 0;
  std::vector<RxQueue> rxq;     // queue 0 of every port
  LcoreStats* stats = nullptr;  // rx from the ports, unparsed reasons, clock anomalies, ring_full
  uint8_t* scratch = nullptr;
  agebloom::packet::Key* key = nullptr;
  std::vector<std::array<Dispatched, kBurst>> stage;  // per worker: this burst's share
  bool clock_anchored = false;  // time_anchor_ns published
};

struct App {
  Options opt;
  agebloom::dedup::DedupFilter shape;  // the planned filter every worker builds (planned before the EAL)
  // --bpf, compiled for Ethernet before the EAL; run by whichever lcore keys
  // (a compiled program is read-only: every lcore runs the same one).
  agebloom::packet::BpfFilter bpf;
  uint64_t seed = 0;
  bool seed_from_snapshot = false;  // no --seed: the seed --snapshot's file was taken under
  std::vector<uint16_t> ports;                  // enabled, ascending
  std::array<uint16_t, RTE_MAX_ETHPORTS> dst{};  // forwarding destination per Rx port
  std::array<uint32_t, RTE_MAX_ETHPORTS> ts_scale{};  // Rx timestamp unit → ns, per port
  uint16_t nb_workers = 1;
  uint16_t nb_rxq = 1;                          // Rx queues per port: workers, or 1 when dispatching
  std::array<uint16_t, RTE_MAX_ETHPORTS> nb_txq{};  // Tx queues per port: one per worker where the port has them
  // Per port, one lock per Tx queue when workers must share queues (a port
  // with fewer Tx queues than workers, e.g. net_pcap); null: queues are private.
  std::array<rte_spinlock_t*, RTE_MAX_ETHPORTS> tx_lock{};
  rte_mempool* pool = nullptr;
  std::vector<Worker> workers;
  bool dispatch = false;  // software dispatcher on the main lcore (see Dispatcher)
  Dispatcher dispatcher;
  // The names of DedupFilter::stats() (fixed per structure), read once from
  // the first filter before the lcores start; the values are per lcore.
  std::vector<std::string> filter_stat_names;
  std::atomic<bool> dispatch_done{false};  // set by the dispatcher after its last enqueue
  // Time windows, dispatch mode: the clock of the first keyed packet received,
  // where every worker's filter starts its epochs (see process_ring_burst).
  std::atomic<uint64_t> time_anchor_ns{0};
  uint64_t tsc_hz = 0;
  uint64_t start_tsc = 0;
  // Time windows on the TSC: added to the process's clock so that a filter
  // restored from a snapshot sees time go on from where it was saved (plus
  // the wall-clock time the process was down), never backwards.
  uint64_t clock_offset_ns = 0;
  bool filters_restored = false;  // a snapshot was restored: the filters' epochs have begun
  // Time windows on Rx timestamps after a restore: the clock the snapshot was
  // saved at. Each lcore's clock starts there, so a stamp behind it is held
  // at it and counted as a time regression, as within one run.
  uint64_t restored_clock_ns = 0;
  int ts_offset = -1;  // mbuf dynamic field of Rx timestamps
  uint64_t ts_flag = 0;
  std::atomic<bool> quit{false};
  std::atomic<uint64_t> budget{0};  // --max-packets left to receive
  // Each worker's last act (release); main reads it (acquire) once
  // rte_eal_mp_wait_lcore has returned, before it touches what the workers
  // used (filters, ports, rings). DPDK's wait synchronises too, but inside
  // librte_eal, out of ThreadSanitizer's sight: this edge is in our own code.
  std::atomic<unsigned> workers_stopped{0};
};

extern App g_app;

}  // namespace dedup_fwd
