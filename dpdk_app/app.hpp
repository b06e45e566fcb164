// State shared by dedup_fwd's parts: options, the port plan, the workers and
// their counters. Set up once by main() before any lcore is launched; after
// launch only the counters (single writer: the owning worker) and the quit
// flag change.
#pragma once

#include <rte_common.h>
#include <rte_ethdev.h>
#include <rte_mempool.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <vector>

#include "agebloom/dedup/dedup_filter.hpp"
#include "agebloom/packet/key_extract.hpp"
#include "options.hpp"

namespace dedup_fwd {

inline constexpr uint16_t kBurst = 32;

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
  Counter last_rx_tsc;
  std::array<Counter, agebloom::packet::kReasonCount> reasons;  // [ok] unused
  // The stats line asks for the filter's fill ratio; the worker computes it
  // between two bursts (it owns the filter) and publishes it in parts per 1e6.
  std::atomic<bool> fill_request{false};
  Counter fill_ppm;
};

struct RxQueue {
  uint16_t port;
  uint16_t queue;
};

// One worker lcore: the queues it polls and the filter shard it owns.
struct Worker {
  unsigned lcore_id = 0;
  unsigned index = 0;  // also its Tx queue on every port
  int socket = 0;
  std::vector<RxQueue> rxq;
  agebloom::dedup::DedupFilter filter;  // arena below, on the lcore's socket
  void* arena_mem = nullptr;
  size_t arena_bytes = 0;
  LcoreStats* stats = nullptr;  // rte_zmalloc_socket, cache aligned
  uint8_t* scratch = nullptr;   // linearises multi-segment frames for extract_key
  agebloom::packet::Key* key = nullptr;
};

inline constexpr size_t kScratchBytes = 65536;

struct App {
  Options opt;
  uint64_t seed = 0;
  std::vector<uint16_t> ports;                  // enabled, ascending
  std::array<uint16_t, RTE_MAX_ETHPORTS> dst{};  // forwarding destination per Rx port
  std::array<uint32_t, RTE_MAX_ETHPORTS> ts_scale{};  // Rx timestamp unit → ns, per port
  uint16_t nb_queues = 1;                       // Rx and Tx queues per port (= workers)
  rte_mempool* pool = nullptr;
  std::vector<Worker> workers;
  uint64_t tsc_hz = 0;
  uint64_t start_tsc = 0;
  int ts_offset = -1;  // mbuf dynamic field of Rx timestamps
  uint64_t ts_flag = 0;
  std::atomic<bool> quit{false};
  std::atomic<uint64_t> budget{0};  // --max-packets left to receive
};

extern App g_app;

}  // namespace dedup_fwd
