#include "ports.hpp"

#include "capture_files.hpp"

#include <rte_devargs.h>
#include <rte_malloc.h>
#include <rte_mbuf_dyn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace dedup_fwd {

namespace {

constexpr uint16_t kRxDesc = 1024;
constexpr uint16_t kTxDesc = 1024;

[[noreturn]] void config_error(const std::string& msg) {
  std::fprintf(stderr, "dedup_fwd: %s\n", msg.c_str());
  rte_eal_cleanup();
  std::exit(2);
}

// The RSS fields that keep equal keys on one queue. Source-only hashing
// (src-ip, click) and destination-only hashing need the NIC's L3_*_ONLY
// support; flow keys take the standard 4-tuple hash, which is a function of
// every field of the key.
uint64_t rss_fields(agebloom::packet::KeyMode mode) {
  using agebloom::packet::KeyMode;
  switch (mode) {
    case KeyMode::src_ip:
    case KeyMode::click: return RTE_ETH_RSS_IP | RTE_ETH_RSS_L3_SRC_ONLY;
    case KeyMode::dst_ip: return RTE_ETH_RSS_IP | RTE_ETH_RSS_L3_DST_ONLY;
    case KeyMode::flow:
    // Copies of one packet share its 5-tuple, so they meet on one lcore.
    case KeyMode::packet: return RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP;
  }
  return RTE_ETH_RSS_IP;
}

// Every --vdev the user asked for must have become a port. When a driver
// refuses its arguments (net_pcap: an rx_pcap that is missing, empty, not a
// capture or a directory) the EAL logs "Bus (vdev) probe failed" and carries
// on without the device; running on with the other ports would report a
// missing input as an empty one. Ethernet vdevs only (net_*, or the eth_*
// aliases); other classes (crypto_*, ...) are no concern of dedup_fwd's.
void check_vdevs() {
  std::string failed;
  for (const rte_devargs* da = rte_devargs_next("vdev", nullptr); da != nullptr; da = rte_devargs_next("vdev", da)) {
    if (std::strncmp(da->name, "net_", 4) != 0 && std::strncmp(da->name, "eth_", 4) != 0) continue;
    uint16_t port;
    if (rte_eth_dev_get_port_by_name(da->name, &port) == 0) continue;
    // The user's paths, not the names their tx_pcap files are written aside as.
    const std::string args =
        da->args != nullptr && *da->args ? std::string(",").append(with_user_paths(da->name, da->args)) : std::string();
    std::fprintf(stderr, "dedup_fwd: --vdev %s%s: the device could not be created (the driver's reason, where it gives one, is above)\n",
                 da->name, args.c_str());
    failed += failed.empty() ? da->name : std::string(", ") + da->name;
  }
  if (!failed.empty())
    config_error("cannot use " + failed + ": check the file names and arguments of each --vdev (net_pcap: rx_pcap "
                 "must name a readable pcap or pcapng file)");
}

}  // namespace

void plan_ports(App& app) {
  const Options& o = app.opt;
  check_vdevs();
  const uint16_t avail = rte_eth_dev_count_avail();
  if (avail == 0) config_error("no Ethernet ports: bind a NIC to DPDK or pass --vdev (e.g. net_pcap0,rx_pcap=IN,tx_pcap=OUT)");
  uint16_t port;
  RTE_ETH_FOREACH_DEV(port) {
    if (o.portmask == 0 || (port < 64 && (o.portmask >> port & 1))) app.ports.push_back(port);
  }
  if (o.portmask) {
    for (unsigned p = 0; p < 64; ++p)
      if ((o.portmask >> p & 1) && !rte_eth_dev_is_valid_port(static_cast<uint16_t>(p)))
        config_error("--portmask names port " + std::to_string(p) + ", which does not exist (" +
                     std::to_string(avail) + " ports available)");
  }
  if (app.ports.empty()) config_error("--portmask selects no available port");
  if (o.action == Action::mirror) {
    bool found = false;
    for (uint16_t p : app.ports) found |= p == o.mirror_port;
    if (!found) {
      std::string in_use;
      for (uint16_t p : app.ports) {
        if (!in_use.empty()) in_use += ' ';
        in_use += std::to_string(p);
      }
      config_error("--action mirror:" + std::to_string(o.mirror_port) + " names port " +
                   std::to_string(o.mirror_port) + ", which is not one of the ports in use (" + in_use + ")");
    }
  }

  // l2fwd pairing: enabled ports in order, 0<->1, 2<->3... A single port, or
  // --same-port, sends packets back out of the port they arrived on.
  const bool same = o.same_port || app.ports.size() == 1;
  if (!same && app.ports.size() % 2)
    config_error("an odd number of ports (" + std::to_string(app.ports.size()) +
                 ") cannot be paired: pass --same-port or a --portmask with pairs");
  for (size_t i = 0; i < app.ports.size(); ++i)
    app.dst[app.ports[i]] = same ? app.ports[i] : app.ports[i ^ 1];
  // Mirroring to the port every packet goes out of separates nothing.
  if (o.action == Action::mirror) {
    bool apart = false;
    for (uint16_t p : app.ports) apart |= app.dst[p] != o.mirror_port;
    if (!apart)
      std::fprintf(stderr, "dedup_fwd: warning: --action mirror:%u is the port every packet is forwarded out of: "
                   "duplicates and unique packets leave together (as with --action count); mirror to another "
                   "port to keep them apart\n", o.mirror_port);
  }

  // With several workers, equal keys must meet the same filter. The NIC can
  // do that when every port gives each worker its own Rx queue with RSS on
  // the key's fields (and its own Tx queue); otherwise the main lcore becomes
  // a software dispatcher that hashes the keys itself (worker.cpp).
  const uint16_t n = app.nb_workers;
  const uint64_t want = rss_fields(o.mode);
  std::string why_dispatch;  // each port's reason, "; " between: an operator fixes them all at once
  for (uint16_t p : app.ports) {
    rte_eth_dev_info info{};
    if (int rc = rte_eth_dev_info_get(p, &info); rc != 0)
      config_error("port " + std::to_string(p) + ": cannot read device info: " + std::strerror(-rc));
    if (info.max_rx_queues == 0 || info.max_tx_queues == 0)
      config_error("port " + std::to_string(p) + " (" + info.driver_name + ") has no Rx or no Tx queue");
    if (n > 1) {
      std::string why;
      if (info.max_rx_queues < n || info.max_tx_queues < n)
        why = "port " + std::to_string(p) + " (" + info.driver_name + ") has " + std::to_string(info.max_rx_queues) +
              " Rx / " + std::to_string(info.max_tx_queues) + " Tx queues for " + std::to_string(n) + " workers";
      else if ((info.flow_type_rss_offloads & want) != want)
        why = "port " + std::to_string(p) + " (" + info.driver_name +
              ") cannot spread packets by the key's fields with RSS";
      if (!why.empty()) why_dispatch += (why_dispatch.empty() ? "" : "; ") + why;
    }
    app.nb_txq[p] = info.max_tx_queues < n ? info.max_tx_queues : n;
    // net_pcap stamps packets with the capture's time in microseconds; other
    // PMDs that fill the field (e.g. mlx5 in real-time mode) write nanoseconds.
    app.ts_scale[p] = std::strcmp(info.driver_name, "net_pcap") == 0 ? 1000 : 1;
  }
  app.dispatch = !why_dispatch.empty();
  app.nb_rxq = app.dispatch ? 1 : n;
  if (app.dispatch)
    std::printf("dedup_fwd: %s: lcore %u dispatches keys to the %u workers in software\n", why_dispatch.c_str(),
                rte_get_main_lcore(), n);

  // Workers beyond a port's Tx queues share them, each queue under a lock.
  for (uint16_t p : app.ports) {
    if (app.nb_txq[p] >= n) continue;
    auto* locks = static_cast<rte_spinlock_t*>(
        rte_zmalloc("dedup_tx_locks", app.nb_txq[p] * sizeof(rte_spinlock_t), RTE_CACHE_LINE_SIZE));
    if (!locks) rte_exit(EXIT_FAILURE, "cannot allocate Tx queue locks\n");
    for (uint16_t q = 0; q < app.nb_txq[p]; ++q) rte_spinlock_init(&locks[q]);
    app.tx_lock[p] = locks;
  }
}

void init_port(App& app, uint16_t port) {
  const Options& o = app.opt;
  rte_eth_dev_info info{};
  if (int rc = rte_eth_dev_info_get(port, &info); rc != 0)
    rte_exit(EXIT_FAILURE, "port %u: cannot read device info: %s\n", port, std::strerror(-rc));

  rte_eth_conf conf{};
  if (app.nb_rxq > 1) {
    conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
    conf.rx_adv_conf.rss_conf.rss_key = nullptr;  // the driver's key: the same on every port of a driver
    conf.rx_adv_conf.rss_conf.rss_hf = rss_fields(o.mode) & info.flow_type_rss_offloads;
  }
  if (o.time_source == TimeSource::rx_timestamp && (info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_TIMESTAMP))
    conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_TIMESTAMP;
  if (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE)
    conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE;  // one pool, refcnt 1

  const uint16_t nb_txq = app.nb_txq[port];
  int rc = rte_eth_dev_configure(port, app.nb_rxq, nb_txq, &conf);
  if (rc < 0) rte_exit(EXIT_FAILURE, "port %u: cannot configure: %s\n", port, std::strerror(-rc));
  uint16_t nb_rxd = kRxDesc, nb_txd = kTxDesc;
  rc = rte_eth_dev_adjust_nb_rx_tx_desc(port, &nb_rxd, &nb_txd);
  if (rc < 0) rte_exit(EXIT_FAILURE, "port %u: cannot adjust descriptor counts: %s\n", port, std::strerror(-rc));

  const int socket = rte_eth_dev_socket_id(port);
  for (uint16_t q = 0; q < app.nb_rxq; ++q) {
    rte_eth_rxconf rxconf = info.default_rxconf;
    rxconf.offloads = conf.rxmode.offloads;
    rc = rte_eth_rx_queue_setup(port, q, nb_rxd, socket, &rxconf, app.pool);
    // The pool is the usual cause: a PMD may fill it at setup (net_pcap's
    // infinite_rx=1 loads the whole capture into it).
    if (rc < 0)
      rte_exit(EXIT_FAILURE, "port %u: Rx queue %u setup failed: %s (%u mbufs in the pool, %u free: a PMD that "
               "keeps packets of its own, such as net_pcap with infinite_rx=1, needs --mbufs above what it keeps)\n",
               port, q, std::strerror(-rc), app.pool->size, rte_mempool_avail_count(app.pool));
  }
  for (uint16_t q = 0; q < nb_txq; ++q) {
    rte_eth_txconf txconf = info.default_txconf;
    txconf.offloads = conf.txmode.offloads;
    rc = rte_eth_tx_queue_setup(port, q, nb_txd, socket, &txconf);
    if (rc < 0) rte_exit(EXIT_FAILURE, "port %u: Tx queue %u setup failed: %s\n", port, q, std::strerror(-rc));
  }
  rc = rte_eth_dev_start(port);
  if (rc < 0) rte_exit(EXIT_FAILURE, "port %u: cannot start: %s\n", port, std::strerror(-rc));
  // Promiscuous: a dedup box sits on a path and forwards whatever it sees.
  // Virtual devices without the notion answer -ENOTSUP, which is fine.
  rc = rte_eth_promiscuous_enable(port);
  if (rc != 0 && rc != -ENOTSUP)
    std::fprintf(stderr, "dedup_fwd: port %u: promiscuous mode: %s\n", port, std::strerror(-rc));

  rte_ether_addr mac{};
  if (rte_eth_macaddr_get(port, &mac) == 0)
    std::printf("dedup_fwd: port %u (%s) up, MAC " RTE_ETHER_ADDR_PRT_FMT ", %u Rx / %u Tx queue(s)%s, forwarding to port %u\n",
                port, info.driver_name, RTE_ETHER_ADDR_BYTES(&mac), app.nb_rxq, nb_txq,
                app.tx_lock[port] ? " (shared under locks)" : "", app.dst[port]);
}

int close_ports(App& app) {
  int failures = 0;
  for (uint16_t p : app.ports) {
    if (int rc = rte_eth_dev_stop(p); rc != 0) {
      std::fprintf(stderr, "dedup_fwd: port %u: stop failed: %s\n", p, std::strerror(-rc));
      ++failures;
    }
    // close releases the queues, and with them the mbufs a NIC's Rx ring holds.
    if (int rc = rte_eth_dev_close(p); rc != 0) {
      std::fprintf(stderr, "dedup_fwd: port %u: close failed: %s\n", p, std::strerror(-rc));
      ++failures;
    }
    rte_free(app.tx_lock[p]);
    app.tx_lock[p] = nullptr;
  }
  return failures;
}

}  // namespace dedup_fwd
