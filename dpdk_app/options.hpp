// dedup_fwd's own command line (what follows "--" after the EAL options).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "agebloom/dedup/dedup_filter.hpp"
#include "agebloom/packet/key_extract.hpp"

namespace dedup_fwd {

// What happens to a packet judged a duplicate.
enum class Action : uint8_t {
  drop,    // free it (counted as suppressed)
  mirror,  // send it out of mirror_port instead of the forwarding port
  count,   // forward it anyway; only the duplicate counter moves (monitor mode)
};
const char* action_name(Action a) noexcept;

// Where the clock of time windows comes from.
enum class TimeSource : uint8_t {
  tsc,           // the CPU's TSC read once per burst: live traffic
  rx_timestamp,  // the PMD's per-packet Rx timestamp (net_pcap: the capture's),
                 // so a replayed trace gives the same verdicts on every run
};

struct Options {
  agebloom::packet::KeyMode mode = agebloom::packet::KeyMode::src_ip;
  agebloom::packet::ClickOptions click;
  std::string click_param;  // storage for click.param
  agebloom::packet::PacketOptions packet;  // --key packet: --ignore-vlan, --ignore-l2, --packet-bytes
  bool vlan_in_key = false;                // --vlan-in-key
  std::string bpf;                         // --bpf EXPR (compiled in main, into App::bpf)
  agebloom::dedup::FilterSpec spec;
  agebloom::dedup::Policy policy = agebloom::dedup::Policy::insert_always;
  uint64_t mem_bytes = 0;  // budget per worker lcore; 0 = no limit
  Action action = Action::drop;
  uint16_t mirror_port = 0;
  uint64_t portmask = 0;  // 0 = every available port
  bool same_port = false;
  unsigned stats_interval_s = 10;  // 0 = no periodic line
  std::string stats_json;
  uint64_t seed = 0;
  bool seed_set = false;
  uint64_t max_packets = 0;      // 0 = unlimited
  uint64_t exit_on_idle_ms = 0;  // 0 = run until signalled
  uint64_t mbufs = 0;            // mbuf pool size; 0 = computed from the rings
  TimeSource time_source = TimeSource::tsc;
  // --snapshot FILE: every lcore's filter saved there (every --snapshot-interval
  // seconds and at exit) and restored from it at start (dpdk_app/snapshot.hpp).
  std::string snapshot;
  unsigned snapshot_interval_s = 60;  // 0: at exit only
  bool require_snapshot = false;      // a missing or refused snapshot is an error (exit 1)
  // --decide penalties (the inferential BTBF's per-click decision).
  agebloom::dedup::Decide decide = agebloom::dedup::Decide::filter;
  agebloom::inference::Penalties penalties;
  double prior = 0.0;
  std::string penalty_param;  // click: the query parameter carrying a click's $FN

  // `click` with `param` pointing at click_param: built on use, since a
  // pointer stored at parse time would dangle once Options is moved.
  agebloom::packet::ClickOptions click_options() const noexcept {
    agebloom::packet::ClickOptions c = click;
    c.param = click_param.empty() ? nullptr : click_param.c_str();
    return c;
  }
  // Everything key extraction takes besides the mode, built on use likewise.
  agebloom::packet::KeyOptions key_options() const noexcept {
    agebloom::packet::KeyOptions k;
    k.click = click_options();
    k.packet = packet;
    k.vlan_in_key = vlan_in_key;
    return k;
  }
};

// Parses argv (argv[0] = program name, as rte_eal_init leaves it). Prints a
// message and exits with code 2 on any invalid or conflicting option, and 0
// after --help; touches no DPDK state, so call it before configuring ports.
Options parse_options(int argc, char** argv);

// The --help text (what parse_options prints for --help), without exiting.
void print_usage(FILE* out);

// --version: "dedup_fwd 0.1.0 (DPDK 22.11.x)" on stdout.
void print_version();

// Whether `arg` ("--key", "--window=5") is one of dedup_fwd's own options:
// given before the "--", the EAL would refuse it with its whole usage.
bool is_app_option(const char* arg);

}  // namespace dedup_fwd
