/* dedup_src_ip: a C DPDK application over the agebloom C API. It forwards
 * what it receives on each port back out of that port, minus every packet
 * whose source IP was already seen among the last --window keyed packets
 * (dedup_fwd --key src-ip, in C, on one lcore). The shape of DPDK's
 * examples/skeleton: init the ports, then one burst loop.
 *
 * Builds with nothing but pkg-config:
 *   cc -O2 main.c $(pkg-config --cflags --libs agebloom libdpdk) -o dedup_src_ip
 * Runs on a capture, no NIC and no hugepages needed:
 *   ./dedup_src_ip --no-huge --no-pci -m 512 -l 0 \
 *       --vdev net_pcap0,rx_pcap=in.pcap,tx_pcap=out.pcap -- --window 100000 --seed 1
 * It stops after --idle-ms without a packet (a capture has ended) or on
 * SIGINT, and prints its counts:
 *   dedup_src_ip: rx N keyed K suppressed S passed P
 * which equal agebloom-replay in.pcap --key src-ip with the same --filter,
 * --window, --fpr and --seed (tests/capi/install_test.sh checks they do). */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include <agebloom/agebloom.h>

#define RX_RING_SIZE 1024
#define TX_RING_SIZE 1024
#define NUM_MBUFS 8191
#define MBUF_CACHE_SIZE 250
#define BURST_SIZE 32

static volatile sig_atomic_t quit;
static void on_signal(int sig) {
  (void)sig;
  quit = 1;
}

struct options {
  const char* filter; /* a registry name, or "auto" */
  uint64_t window;    /* keyed packets */
  double fpr;
  uint64_t seed;
  unsigned idle_ms;
};

/* A whole unsigned number in `base`: strtoull alone takes "-1" (as 2^64 - 1),
 * "" and out-of-range values without a word. */
static int parse_u64(const char* s, int base, uint64_t* out) {
  char* end;
  if (*s == '\0' || *s == '-' || *s == '+' || isspace((unsigned char)*s)) return -1;
  errno = 0;
  *out = strtoull(s, &end, base);
  return *end || errno == ERANGE ? -1 : 0;
}

static void usage(FILE* to, const char* prog) {
  fprintf(to,
          "usage: %s [EAL options] -- [--filter NAME|auto] [--window N] [--fpr P] [--seed HEX] [--idle-ms MS]\n"
          "  --idle-ms MS  stop after MS ms without a packet (default 500; 0: only on SIGINT or SIGTERM)\n",
          prog);
}

/* A refused value, said with its option (the usage line alone did not say which). */
static int refuse(const char* option, const char* what, const char* value) {
  fprintf(stderr, "dedup_src_ip: %s needs %s, not '%s'\n", option, what, value);
  return -1;
}

static int parse_options(int argc, char** argv, struct options* o) {
  static const struct option table[] = {{"filter", required_argument, NULL, 'f'},
                                        {"window", required_argument, NULL, 'w'},
                                        {"fpr", required_argument, NULL, 'p'},
                                        {"seed", required_argument, NULL, 's'},
                                        {"idle-ms", required_argument, NULL, 'i'},
                                        {"help", no_argument, NULL, 'h'},
                                        {NULL, 0, NULL, 0}};
  int c;
  char* end;
  uint64_t v;
  while ((c = getopt_long(argc, argv, "", table, NULL)) != -1) {
    switch (c) {
      case 'f': o->filter = optarg; break;
      case 'w':
        if (parse_u64(optarg, 10, &v) || v == 0) return refuse("--window", "a positive whole number", optarg);
        o->window = v;
        break;
      case 'p':
        o->fpr = strtod(optarg, &end);
        if (end == optarg || *end) return refuse("--fpr", "a number (0.01)", optarg);
        break;
      case 's':
        if (parse_u64(optarg, 16, &v)) return refuse("--seed", "at most 16 hexadecimal digits", optarg);
        o->seed = v;
        break;
      case 'i':
        if (parse_u64(optarg, 10, &v) || v > UINT32_MAX) return refuse("--idle-ms", "a whole number of ms", optarg);
        o->idle_ms = (unsigned)v;
        break;
      case 'h': return 1;
      default: return -1; /* getopt said which option */
    }
  }
  if (optind == argc) return 0;
  fprintf(stderr, "dedup_src_ip: unexpected argument '%s'\n", argv[optind]);
  return -1;
}

/* One RX and one TX queue, as examples/skeleton sets them up. */
static int port_init(uint16_t port, struct rte_mempool* pool) {
  struct rte_eth_conf conf;
  struct rte_eth_dev_info info;
  uint16_t nb_rxd = RX_RING_SIZE, nb_txd = TX_RING_SIZE;
  int rc;

  memset(&conf, 0, sizeof conf);
  if (!rte_eth_dev_is_valid_port(port)) return -1;
  if ((rc = rte_eth_dev_info_get(port, &info)) != 0) return rc;
  if (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE)
    conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE;
  if ((rc = rte_eth_dev_configure(port, 1, 1, &conf)) != 0) return rc;
  if ((rc = rte_eth_dev_adjust_nb_rx_tx_desc(port, &nb_rxd, &nb_txd)) != 0) return rc;
  if ((rc = rte_eth_rx_queue_setup(port, 0, nb_rxd, rte_eth_dev_socket_id(port), NULL, pool)) < 0) return rc;
  if ((rc = rte_eth_tx_queue_setup(port, 0, nb_txd, rte_eth_dev_socket_id(port), &info.default_txconf)) < 0)
    return rc;
  if ((rc = rte_eth_dev_start(port)) < 0) return rc;
  /* Every frame on the wire, not only those to this MAC; a driver that
   * cannot (net_pcap can) still forwards what it receives. */
  (void)rte_eth_promiscuous_enable(port);
  return 0;
}

struct counts {
  uint64_t rx, keyed, suppressed, passed;
};

/* One burst: key every frame, ask the filter about the keyed ones in one
 * bulk call, send what passes. The keys are hashed as they are extracted,
 * so the bulk call gets hashes and its prefetch can run ahead on them. */
static void dedup_burst(agebloom_filter* f, uint16_t port, struct rte_mbuf** pkts, uint16_t n, struct counts* c) {
  agebloom_hash hashes[BURST_SIZE];
  uint16_t keyed_at[BURST_SIZE]; /* which packet each hash is of */
  uint8_t dup[BURST_SIZE];
  uint8_t key[AGEBLOOM_KEY_MAX];
  struct rte_mbuf* out[BURST_SIZE];
  uint16_t keyed = 0, sent = 0, i;

  agebloom_key_options ko;
  agebloom_key_options_init(&ko);
  for (i = 0; i < n; ++i) {
    size_t len;
    /* The first segment holds the headers a src-ip key needs; a jumbo
     * frame's IP length runs on into the chain, so the frame's whole length
     * is given as its wire length (else it would have no key). */
    ko.wire_len = rte_pktmbuf_pkt_len(pkts[i]);
    if (agebloom_extract_key_with(AGEBLOOM_LINKTYPE_ETHERNET, rte_pktmbuf_mtod(pkts[i], const void*),
                                  rte_pktmbuf_data_len(pkts[i]), AGEBLOOM_KEY_SRC_IP, &ko, key, sizeof key, &len,
                                  NULL) == AGEBLOOM_OK) {
      hashes[keyed] = agebloom_hash_key(f, key, len);
      keyed_at[keyed++] = i;
    }
    dup[i] = 0;
  }
  /* dup[] is indexed by keyed position first, then spread to packets. */
  {
    uint8_t verdict[BURST_SIZE];
    agebloom_test_and_insert_bulk(f, hashes, keyed, verdict);
    for (i = 0; i < keyed; ++i) dup[keyed_at[i]] = verdict[i];
  }
  for (i = 0; i < n; ++i) {
    if (dup[i]) rte_pktmbuf_free(pkts[i]);
    else out[sent++] = pkts[i];
  }
  c->rx += n;
  c->keyed += keyed;
  c->suppressed += (uint64_t)(n - sent);
  c->passed += sent;
  {
    uint16_t tx = rte_eth_tx_burst(port, 0, out, sent);
    for (; tx < sent; ++tx) rte_pktmbuf_free(out[tx]); /* a full TX ring drops, as skeleton does */
  }
}

/* Where the application's arguments start: after the first "--" (argc
 * without one). */
static int app_start(int argc, char** argv) {
  int i;
  for (i = 1; i < argc; ++i)
    if (strcmp(argv[i], "--") == 0) return i + 1;
  return argc;
}

int main(int argc, char** argv) {
  struct options o = {"auto", 1000000, 0.01, 0, 500}; /* dedup_fwd's and agebloom-replay's defaults */
  struct rte_mempool* pool;
  uint16_t port, nb_ports;
  agebloom_spec spec;
  agebloom_plan plan;
  agebloom_filter* f;
  void* mem;
  struct counts c = {0, 0, 0, 0};
  uint64_t hz, last_rx;
  char* saved;
  int at, rc, ret;

  /* The options and the filter's plan first, as dedup_fwd does: the EAL
   * opens the devices, and net_pcap truncates a tx_pcap file as it opens
   * it, so a bad option must be refused before rte_eal_init. getopt takes
   * the word before the options as the program's name: argv[0] stands in
   * for it, and optind is reset for the EAL's own getopt. */
  if (argc < 1) return 2; /* no program name: nothing to stand in for it */
  at = app_start(argc, argv);
  saved = argv[at - 1];
  argv[at - 1] = argv[0];
  rc = parse_options(argc - at + 1, argv + at - 1, &o);
  argv[at - 1] = saved;
  optind = 1;
  if (rc != 0) {
    usage(rc > 0 ? stdout : stderr, argv[0]);
    return rc > 0 ? 0 : 2;
  }
  agebloom_spec_init(&spec);
  spec.structure = o.filter;
  spec.window = o.window;
  spec.fpr = o.fpr;
  spec.seed = o.seed;
  agebloom_plan_init(&plan);
  if ((rc = agebloom_plan_spec(&spec, &plan)) != AGEBLOOM_OK) {
    fprintf(stderr, "dedup_src_ip: filter: %s: %s\n", agebloom_strerror(rc), agebloom_plan_error());
    return 2;
  }

  ret = rte_eal_init(argc, argv);
  if (ret < 0) rte_exit(EXIT_FAILURE, "cannot initialise the EAL\n");
  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);

  nb_ports = rte_eth_dev_count_avail();
  if (nb_ports == 0) rte_exit(EXIT_FAILURE, "no ports (give a --vdev net_pcap0,rx_pcap=...,tx_pcap=...)\n");
  pool = rte_pktmbuf_pool_create("MBUF_POOL", NUM_MBUFS * nb_ports, MBUF_CACHE_SIZE, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
                                 rte_socket_id());
  if (pool == NULL) rte_exit(EXIT_FAILURE, "cannot create the mbuf pool\n");
  RTE_ETH_FOREACH_DEV(port) {
    if (port_init(port, pool) != 0) rte_exit(EXIT_FAILURE, "cannot init port %" PRIu16 "\n", port);
  }

  /* The filter the plan describes, in memory of this lcore's socket:
   * agebloom allocates nothing (and, from a plan, does not plan again). */
  mem = rte_zmalloc_socket("agebloom", plan.filter_bytes, AGEBLOOM_ALIGN, (int)rte_socket_id());
  if (mem == NULL) rte_exit(EXIT_FAILURE, "cannot allocate %" PRIu64 " bytes for the filter\n", plan.filter_bytes);
  if ((rc = agebloom_filter_init_plan(&plan, mem, plan.filter_bytes, &f)) != AGEBLOOM_OK)
    rte_exit(EXIT_FAILURE, "filter: %s\n", agebloom_strerror(rc));
  printf("dedup_src_ip: filter %s (%s), %" PRIu64 " bytes, model FPR %.3g, window %" PRIu64 "\n", plan.structure,
         plan.parameters, plan.filter_bytes, plan.model_fpr, plan.window);

  hz = rte_get_timer_hz();
  last_rx = rte_get_timer_cycles();
  while (!quit) {
    int got = 0;
    RTE_ETH_FOREACH_DEV(port) {
      struct rte_mbuf* bufs[BURST_SIZE];
      const uint16_t n = rte_eth_rx_burst(port, 0, bufs, BURST_SIZE);
      if (n == 0) continue;
      got = 1;
      dedup_burst(f, port, bufs, n, &c);
    }
    if (got) last_rx = rte_get_timer_cycles();
    else if (o.idle_ms && (rte_get_timer_cycles() - last_rx) * 1000 / hz >= o.idle_ms) break;
  }

  printf("dedup_src_ip: rx %" PRIu64 " keyed %" PRIu64 " suppressed %" PRIu64 " passed %" PRIu64 "\n", c.rx,
         c.keyed, c.suppressed, c.passed);
  RTE_ETH_FOREACH_DEV(port) {
    rte_eth_dev_stop(port);
    rte_eth_dev_close(port);
  }
  agebloom_filter_destroy(f);
  rte_free(mem);
  rte_eal_cleanup();
  return 0;
}
