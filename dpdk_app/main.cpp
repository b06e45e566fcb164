// dedup_fwd: forwards unique packets and suppresses recent duplicates of a
// key (source IP, destination IP, 5-tuple or HTTP click), one sliding-window
// filter per worker lcore.
//
//   dedup_fwd [EAL options] -- [options]     (--help lists them)
//
// Start-up order matters: our options first (what follows "--"; exit 2, or 0
// for --help, before the EAL has opened or created any file: a net_pcap
// tx_pcap is truncated when its device is probed, so each is written aside
// until the run starts, capture_files.hpp), then the EAL, then the
// devices it was asked for (exit 2 when one could not be created), filter
// planning (exit 2 when the window/FPR/memory cannot be met), memory, ports,
// telemetry, and finally the workers. Every exit after the EAL started goes
// through rte_eal_cleanup and removes the EAL's runtime directory.
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "agebloom/core/hash.hpp"
#include "agebloom/dedup/key_mode.hpp"
#include "agebloom/dedup/stdout_checked.hpp"
#include "app.hpp"
#include "capture_files.hpp"
#include "options.hpp"
#include "ports.hpp"
#include "runtime_dir.hpp"
#include "snapshot.hpp"
#include "stats.hpp"
#include "worker.hpp"

namespace dedup_fwd {
App g_app;
}

namespace {

using namespace dedup_fwd;
namespace ab = agebloom;

constexpr unsigned kMempoolCache = 256;

volatile std::sig_atomic_t g_signal = 0;

// Only sets flags: the workers notice at their next burst, and main() does
// the orderly shutdown (stop, close, free, report) outside signal context.
void on_signal(int sig) {
  g_signal = sig;
  g_app.quit.store(true, std::memory_order_relaxed);
}

// The EAL's runtime directory (/var/run/dpdk/PREFIX, or under
// $XDG_RUNTIME_DIR): DPDK 22.11 leaves it behind at exit, with its config and
// fbarray files, even after rte_eal_cleanup. Removed at exit (an atexit
// handler, so rte_exit and every exit(2) take it too), for the primary
// process only; only the files the EAL creates there are removed, then the
// directory if it is empty.
std::string g_runtime_dir;

void remove_runtime_dir() { remove_eal_runtime_dir(g_runtime_dir); }

// The EAL prints its usage for `dedup_fwd --help` (no "--") and for an
// invalid EAL option, then calls this for dedup_fwd's; the EAL then exits or
// fails as it would have.
void usage_hook(const char*) {
  std::printf("\n");
  print_usage(stdout);
  std::fflush(stdout);
}

// One filter per worker, planned once (all shards have the same shape) and
// created in memory on the worker's own NUMA node.
void setup_workers(App& app) {
  std::vector<unsigned> lcores;
  if (rte_lcore_count() == 1) {
    lcores.push_back(rte_get_main_lcore());  // the main lcore forwards too
  } else {
    unsigned id;
    RTE_LCORE_FOREACH_WORKER(id) lcores.push_back(id);
  }

  const ab::dedup::DedupFilter& shape = app.shape;  // planned and checked against --mem before the EAL
  const size_t bytes = shape.bytes_needed();

  app.workers.resize(lcores.size());
  for (size_t i = 0; i < lcores.size(); ++i) {
    Worker& w = app.workers[i];
    w.lcore_id = lcores[i];
    w.index = static_cast<unsigned>(i);
    for (uint16_t p : app.ports) w.txq[p] = static_cast<uint16_t>(w.index % app.nb_txq[p]);
    w.socket = static_cast<int>(rte_lcore_to_socket_id(w.lcore_id));
    w.filter = shape;
    w.arena_bytes = bytes;
    w.arena_mem = rte_zmalloc_socket("dedup_filter", bytes, RTE_CACHE_LINE_SIZE, w.socket);  // zeroed: a snapshot copies it whole
    void* st = rte_zmalloc_socket("dedup_stats", sizeof(LcoreStats), RTE_CACHE_LINE_SIZE, w.socket);
    w.scratch = static_cast<uint8_t*>(rte_malloc_socket("dedup_scratch", kScratchBytes, RTE_CACHE_LINE_SIZE, w.socket));
    void* key = rte_malloc_socket("dedup_key", sizeof(ab::packet::Key), RTE_CACHE_LINE_SIZE, w.socket);
    if (!w.arena_mem || !st || !w.scratch || !key)
      rte_exit(EXIT_FAILURE, "cannot allocate %zu bytes of filter memory on socket %d for lcore %u (-m / hugepages)\n",
               bytes, w.socket, w.lcore_id);
    w.stats = new (st) LcoreStats();
    w.key = new (key) ab::packet::Key();
    ab::Arena arena(w.arena_mem, bytes);
    if (std::string err = w.filter.create(arena); !err.empty())
      rte_exit(EXIT_FAILURE, "filter on lcore %u: %s\n", w.lcore_id, err.c_str());
    if (app.dispatch) {
      // Single producer (the dispatcher), single consumer (this worker).
      const std::string name = "dedup_ring" + std::to_string(i);
      w.ring = rte_ring_create_elem(name.c_str(), sizeof(Dispatched), kRingSize, w.socket,
                                    RING_F_SP_ENQ | RING_F_SC_DEQ);
      if (!w.ring) rte_exit(EXIT_FAILURE, "cannot create the ring of worker %zu: %s\n", i, rte_strerror(rte_errno));
    } else {
      for (uint16_t p : app.ports) w.rxq.push_back({p, static_cast<uint16_t>(i)});
    }
  }

  if (app.dispatch) {
    Dispatcher& d = app.dispatcher;
    d.lcore_id = rte_get_main_lcore();
    const int socket = static_cast<int>(rte_lcore_to_socket_id(d.lcore_id));
    void* st = rte_zmalloc_socket("dedup_stats", sizeof(LcoreStats), RTE_CACHE_LINE_SIZE, socket);
    d.scratch = static_cast<uint8_t*>(rte_malloc_socket("dedup_scratch", kScratchBytes, RTE_CACHE_LINE_SIZE, socket));
    void* key = rte_malloc_socket("dedup_key", sizeof(ab::packet::Key), RTE_CACHE_LINE_SIZE, socket);
    if (!st || !d.scratch || !key) rte_exit(EXIT_FAILURE, "cannot allocate the dispatcher's memory\n");
    d.stats = new (st) LcoreStats();
    d.key = new (key) ab::packet::Key();
    d.stage.resize(app.workers.size());
    for (uint16_t p : app.ports) d.rxq.push_back({p, 0});
  }
}

// After every lcore has stopped the rings are empty (workers drain them
// before exiting); should one not be, its mbufs are freed and counted as
// received and dropped-for-error so that no mbuf is lost and the totals add up.
void drain_rings(App& app) {
  for (Worker& w : app.workers) {
    if (!w.ring) continue;
    Dispatched d[kBurst];
    unsigned n;
    while ((n = rte_ring_sc_dequeue_burst_elem(w.ring, d, sizeof(Dispatched), kBurst, nullptr)) != 0) {
      for (unsigned i = 0; i < n; ++i) rte_pktmbuf_free(d[i].m);
      w.stats->rx.add(n);
      w.stats->dropped_error.add(n);
    }
  }
}

void free_workers(App& app) {
  for (Worker& w : app.workers) {
    rte_free(w.arena_mem);
    w.stats->~LcoreStats();
    rte_free(w.stats);
    rte_free(w.scratch);
    rte_free(w.key);
    rte_free(w.snapshot_copy);
    rte_ring_free(w.ring);
  }
  if (Dispatcher& d = app.dispatcher; d.stats) {
    d.stats->~LcoreStats();
    rte_free(d.stats);
    rte_free(d.scratch);
    rte_free(d.key);
  }
}

}  // namespace

int main(int argc, char** argv) {
  // Registered first, so it runs last at exit: the summary, a usage text or a
  // listing that did not reach standard output is exit 1, never a silent 0.
  agebloom::dedup::check_stdout_at_exit("dedup_fwd");
  App& app = g_app;
  // Our options before the EAL's (DPDK's ip_pipeline example does the same):
  // rte_eal_init probes the devices, and net_pcap truncates a tx_pcap file as
  // it opens it, so a typo or --help must stop us before that. They are what
  // follows the first "--"; the EAL stops its own parsing there.
  int dashes = argc;  // the EAL's arguments are argv[1, dashes)
  {
    for (int i = 1; i < argc; ++i)
      if (std::strcmp(argv[i], "--") == 0) {
        dashes = i;
        break;
      }
    // --help (or -h) and --version among the EAL options: ours, printed
    // without starting DPDK (no hugepages, no runtime folder needed);
    // --help-eal asks the EAL for its own list.
    for (int i = 1; i < dashes; ++i) {
      if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
        print_usage(stdout);
        return 0;
      }
      if (std::strcmp(argv[i], "--version") == 0) {  // the EAL has none (its -v logs it at start)
        print_version();
        return 0;
      }
      if (std::strcmp(argv[i], "--help-eal") == 0) argv[i] = const_cast<char*>("--help");
    }
    // One of ours among the EAL's (the "--" forgotten): say so, not the
    // EAL's usage of 190 lines ending in "Invalid option".
    for (int i = 1; i < dashes; ++i)
      if (is_app_option(argv[i])) {
        std::fprintf(stderr, "dedup_fwd: %s is dedup_fwd's own option: it goes after \"--\", which ends the EAL's "
                     "options (dedup_fwd [EAL options] -- [options])\n", argv[i]);
        return 2;
      }
    std::vector<char*> app_argv{const_cast<char*>("dedup_fwd")};
    for (int i = dashes + 1; i < argc; ++i) app_argv.push_back(argv[i]);
    app_argv.push_back(nullptr);
    app.opt = parse_options(static_cast<int>(app_argv.size()) - 1, app_argv.data());
  }
  const Options& o = app.opt;
  // --bpf: a bad expression is a bad option (exit 2), before any device.
  if (!o.bpf.empty()) {
    if (std::string e = app.bpf.compile(o.bpf, agebloom::packet::linktype::en10mb); !e.empty()) {
      std::fprintf(stderr, "dedup_fwd: %s\n", e.c_str());
      return 2;
    }
    if (const std::string note = app.bpf.note(); !note.empty()) std::fprintf(stderr, "dedup_fwd: note: %s\n", note.c_str());
  }
  // The filter too (all shards have one shape): an FPR out of reach or a
  // --mem too small is exit 2 before any device is opened. Bounded: every
  // sizing search is, so this takes milliseconds.
  {
    auto planned = ab::dedup::DedupFilter::plan(o.spec);
    if (auto* err = std::get_if<std::string>(&planned)) {
      std::fprintf(stderr, "dedup_fwd: filter: %s\n", err->c_str());
      return 2;
    }
    app.shape = std::get<ab::dedup::DedupFilter>(planned);
    if (o.decide == ab::dedup::Decide::penalties)
      if (std::string err = app.shape.enable_posteriors(); !err.empty()) {
        std::fprintf(stderr, "dedup_fwd: %s\n", err.c_str());
        return 2;
      }
    // (DedupFilter::plan checked it against --mem: the tlbf's budget, a limit for the others.)
  }

  // Last before the EAL: its probe opens the captures.
  guard_capture_files(dashes, argv, o);
  rte_set_application_usage_hook(usage_hook);
  // EINVAL: the EAL refused its command line; ENODEV: a device argument it
  // could not parse: bad options (exit 2, as ours). Anything else (hugepages,
  // permissions, another primary) is the machine's. (The EAL also answers
  // EINVAL for a few machine refusals, such as IOVA as PA without root.)
  if (rte_eal_init(argc, argv) < 0)
    rte_exit(rte_errno == EINVAL || rte_errno == ENODEV ? 2 : EXIT_FAILURE,
             "the DPDK EAL could not start (%s%sits messages above say why). Without hugepages try "
             "--no-huge -m 512; give it ports, e.g. --vdev net_pcap0,rx_pcap=IN.pcap,tx_pcap=OUT.pcap; a "
             "second DPDK process on this machine needs a --file-prefix of its own; dedup_fwd's own options "
             "go after --\n",
             rte_errno ? rte_strerror(rte_errno) : "", rte_errno ? "; " : "");
  if (rte_eal_process_type() == RTE_PROC_PRIMARY) {
    g_runtime_dir = rte_eal_get_runtime_dir();
    std::atexit(remove_runtime_dir);
  }
  app.seed = o.seed_set ? o.seed : (uint64_t{std::random_device{}()} << 32 | std::random_device{}());

  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  // A closed terminal or SSH session (SIGHUP) stops the run as SIGTERM does,
  // its totals, stats JSON, snapshot and captures written, not killed with
  // them lost. A reader of standard output gone (`| head`) is no reason to
  // stop at all: SIGPIPE ignored, the lines' writes fail, the run goes on.
  if (std::signal(SIGHUP, on_signal) == SIG_IGN) std::signal(SIGHUP, SIG_IGN);  // nohup's choice kept
  std::signal(SIGPIPE, SIG_IGN);

  // Queues per port follow from the workers, so count them before planning ports.
  app.nb_workers = static_cast<uint16_t>(rte_lcore_count() == 1 ? 1 : rte_lcore_count() - 1);
  plan_ports(app);
  check_rx_captures(app.nb_rxq);
  setup_workers(app);
  if (!restore_snapshot()) {
    close_telemetry();
    free_workers(app);
    rte_eal_cleanup();
    return 1;
  }
  // Telemetry may ask before the first stats line: publish the figures of
  // the filters as they start (restored or empty), while no worker runs.
  for (const auto& stat : app.workers.front().filter.stats()) app.filter_stat_names.push_back(stat.first);
  publish_all_figures(false);

  if (o.time_source == TimeSource::rx_timestamp) {
    // The PMD registered the field at probe when it stamps packets; this call
    // then returns the same offset and flag (or registers them, and packets
    // simply arrive without the flag: counted as no_timestamp).
    if (rte_mbuf_dyn_rx_timestamp_register(&app.ts_offset, &app.ts_flag) != 0)
      rte_exit(EXIT_FAILURE, "cannot register the Rx timestamp mbuf field: %s\n", rte_strerror(rte_errno));
  }

  // Enough mbufs for every Rx and Tx ring, the bursts in flight, the
  // dispatcher's rings and the per-lcore caches (l2fwd's formula), at least 8192.
  unsigned nb_mbufs = rte_lcore_count() * (kMempoolCache + kBurst);
  for (uint16_t p : app.ports) nb_mbufs += (app.nb_rxq + app.nb_txq[p]) * 1024;
  if (app.dispatch) nb_mbufs += app.nb_workers * kRingSize;
  if (nb_mbufs < 8192) nb_mbufs = 8192;
  if (app.opt.mbufs != 0) {
    if (app.opt.mbufs < nb_mbufs)
      std::fprintf(stderr, "dedup_fwd: warning: --mbufs %llu is below the %u the rings and bursts can hold; "
                   "receive may stall\n", static_cast<unsigned long long>(app.opt.mbufs), nb_mbufs);
    nb_mbufs = static_cast<unsigned>(app.opt.mbufs);
  }
  app.pool = rte_pktmbuf_pool_create("dedup_fwd_mbufs", nb_mbufs, kMempoolCache, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
                                     static_cast<int>(rte_socket_id()));
  if (!app.pool) rte_exit(EXIT_FAILURE, "cannot create the mbuf pool: %s\n", rte_strerror(rte_errno));

  for (uint16_t p : app.ports) init_port(app, p);
  register_telemetry();  // failure is reported and not fatal: forwarding works without it

  const ab::dedup::DedupFilter& f = app.workers.front().filter;
  // The hash secret is printed only when the user chose it (--seed): a
  // random one stays secret, so nobody who reads the logs can grind keys
  // that collide in the filter (passing duplicates or dropping others).
  char seed_text[64] = "seed random (secret; --seed HEX fixes it)";
  if (app.seed_from_snapshot) std::snprintf(seed_text, sizeof seed_text, "seed from the snapshot (secret)");
  if (o.seed_set) std::snprintf(seed_text, sizeof seed_text, "seed %llx", static_cast<unsigned long long>(app.seed));
  std::printf("dedup_fwd: key %s, policy %s, action %s, filter %s (%s), %zu bytes per lcore, model FPR %.4g, %s\n",
              ab::dedup::key_mode_name(o.mode), ab::dedup::policy_name(o.policy), action_name(o.action),
              f.name().c_str(), f.parameters().c_str(), app.workers.front().arena_bytes, f.model_fpr(), seed_text);
  // The promise in the user's units, before any packet: what is always
  // suppressed, how long past the window a key may linger, the model FPR.
  std::printf("dedup_fwd: guarantee: %s\n", f.guarantee(o.policy).c_str());
  if (std::string note = ab::dedup::DedupFilter::auto_note(o.spec, f); !note.empty())
    std::printf("dedup_fwd: note: %s\n", note.c_str());
  if (const char* slow = ab::Hasher(app.seed).slow_body_note()) std::fprintf(stderr, "dedup_fwd: warning: %s\n", slow);
  std::fflush(stdout);

  keep_tx_captures();  // from here on the run forwards: its captures replace the files at exit
  app.tsc_hz = rte_get_tsc_hz();
  app.budget.store(o.max_packets, std::memory_order_relaxed);
  app.start_tsc = rte_rdtsc();
  const auto wall_start = std::chrono::steady_clock::now();

  if (rte_lcore_count() == 1) {
    worker_main(&app.workers.front());
  } else if (app.dispatch) {
    for (Worker& w : app.workers) {
      if (int rc = rte_eal_remote_launch(worker_main, &w, w.lcore_id); rc != 0)
        rte_exit(EXIT_FAILURE, "cannot launch lcore %u: %s\n", w.lcore_id, std::strerror(-rc));
    }
    // The main lcore dispatches, and keeps time between bursts.
    dispatcher_main(app.dispatcher);
  } else {
    for (Worker& w : app.workers) {
      if (int rc = rte_eal_remote_launch(worker_main, &w, w.lcore_id); rc != 0)
        rte_exit(EXIT_FAILURE, "cannot launch lcore %u: %s\n", w.lcore_id, std::strerror(-rc));
    }
    // The main lcore keeps time: stats lines and exit conditions.
    while (!app.quit.load(std::memory_order_relaxed)) {
      housekeeping(rte_rdtsc());
      rte_delay_us_sleep(1000);
    }
  }
  rte_eal_mp_wait_lcore();
  if (unsigned n = app.workers_stopped.load(std::memory_order_acquire); n != app.workers.size())
    rte_panic("%u of %zu workers stopped after rte_eal_mp_wait_lcore\n", n, app.workers.size());
  drain_rings(app);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  if (g_signal) std::printf("\ndedup_fwd: signal %d received, shutting down\n", static_cast<int>(g_signal));
  if (o.stats_interval_s) {
    publish_all_figures(true);  // the workers have stopped: read each filter directly
    print_stats_line(rte_rdtsc());
  } else {
    publish_all_figures(false);  // for the exit warnings below
  }

  // Shutdown: port counters first, then stop and close (which returns every
  // mbuf a ring held), then count what the pool is still missing.
  ExitFacts facts;
  facts.seconds = seconds;
  facts.port_stats_json = port_stats_json();
  std::string damage;
  facts.input_errors = input_errors(&damage);
  note_tx_counts(app.ports);
  int rc = close_ports(app) ? 1 : 0;
  if (check_tx_captures() != 0) rc = 1;
  facts.mempool_size = app.pool->size;
  facts.mempool_in_use = rte_mempool_in_use_count(app.pool);

  const Totals t = totals();
  std::printf("dedup_fwd: packets in %lu, forwarded %lu, suppressed %lu, mirrored %lu, errors %lu "
              "(duplicates %lu, unparsed %lu, malformed %lu), %.3f s\n",
              t.rx, t.tx, t.suppressed, t.mirrored, t.dropped_error, t.duplicates, t.unparsed, t.malformed, seconds);
  if (t.unparsed) {
    // Per reason, so "unparsed" is never a mystery: a capture of another link
    // type (Linux SLL, raw IP) read as Ethernet is all unsupported_l2 or
    // bad_ip_version, and says so here.
    std::string why;
    for (size_t r = 1; r < t.reasons.size(); ++r)
      if (t.reasons[r])
        why += (why.empty() ? "" : ", ") + std::string(agebloom::packet::reason_name(static_cast<agebloom::packet::Reason>(r))) +
               " " + std::to_string(t.reasons[r]);
    std::printf("dedup_fwd: unparsed by reason: %s\n", why.c_str());
    const uint64_t considered = t.rx - t.malformed - t.bpf_unmatched;
    // Which cause the reasons point at: frames cut short (a capture's snap
    // length, since a port delivers whole frames), or not Ethernet + IP.
    namespace pk = agebloom::packet;
    uint64_t cut = 0;
    for (pk::Reason r : {pk::Reason::truncated_l3, pk::Reason::truncated_l4, pk::Reason::truncated_ext_header})
      cut += t.reasons[static_cast<size_t>(r)];
    if (o.mode != pk::KeyMode::click && t.unparsed * 2 > considered)
      std::fprintf(stderr, "dedup_fwd: warning: %lu of %lu packets had no %s key and passed undeduplicated: %s\n",
                   t.unparsed, considered, agebloom::dedup::key_mode_name(o.mode),
                   cut * 2 > t.unparsed
                       ? "most were cut short of their IP length, so is the input a capture taken with a short snap "
                         "length? (net_pcap hands on what was captured; agebloom-replay keys such a trace from its "
                         "headers)"
                       : "DPDK ports carry Ethernet, so is the input a capture of another link type (e.g. Linux "
                         "SLL), or the key mode not the one intended?");
  }
  if (t.bpf_unmatched)
    std::printf("dedup_fwd: --bpf %s: %lu packets did not match and passed untouched\n",
                agebloom::packet::BpfFilter::shown(o.bpf).c_str(),
                t.bpf_unmatched);
  // What the stats line says of floods and budgets, said once at exit when
  // there was no stats line to say it (--stats-interval 0).
  if (!o.stats_interval_s)
    if (const std::string health = filter_health().text(/*stats_line=*/false); !health.empty())
      std::fprintf(stderr, "dedup_fwd: warning: %s\n", health.c_str());
  if (t.time_regressions)  // as agebloom-replay says it; after a restore, stamps behind the saved clock too
    std::printf("dedup_fwd: %lu packets' Rx timestamps stepped back in time: the clock was held at the latest\n",
                t.time_regressions);
  if (facts.input_errors) {
    // A finite input (--exit-on-idle: a capture, say) that was damaged is not
    // a successful run: what came out is not the whole input. Live ports see
    // the odd bad frame, so there it is a warning only.
    std::fprintf(stderr, "dedup_fwd: warning: %lu input errors (%s): the input is damaged (net_pcap: a "
                 "truncated or corrupt capture), so not all of it was forwarded%s\n",
                 facts.input_errors, damage.c_str(), o.exit_on_idle_ms ? "; exit code 3" : "");
    if (o.exit_on_idle_ms && rc == 0) rc = 3;
  }
  if (const uint64_t bad = rx_bad_timestamps()) {
    std::fprintf(stderr, "dedup_fwd: warning: %lu record%s of the rx_pcap captures had timestamps out of range "
                 "(said at start): the time window's verdicts differ from agebloom-replay's%s\n",
                 bad, bad == 1 ? "" : "s", o.exit_on_idle_ms ? "; exit code 3" : "");
    if (o.exit_on_idle_ms && rc == 0) rc = 3;
  }
  if (t.rx != t.tx + t.suppressed + t.mirrored + t.dropped_error) {
    std::fprintf(stderr, "dedup_fwd: BUG: rx != tx + suppressed + mirrored + dropped_error\n");
    rc = 1;
  }
  if (facts.mempool_in_use != 0) {
    std::fprintf(stderr, "dedup_fwd: BUG: %u mbufs still in use at exit\n", facts.mempool_in_use);
    rc = 1;
  }
  if (!o.stats_json.empty() && !write_stats_json(o.stats_json, facts)) rc = 1;
  if (!save_final_snapshot() && rc == 0) rc = 1;

  close_telemetry();
  free_workers(app);
  rte_mempool_free(app.pool);
  rte_eal_cleanup();
  return rc;
}
