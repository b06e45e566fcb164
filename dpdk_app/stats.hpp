// Observability: the periodic stats line, rte_telemetry commands and the JSON
// written at exit.
#pragma once

#include <string>

#include "app.hpp"

namespace dedup_fwd {

struct Totals {
  uint64_t rx = 0, tx = 0, keyed = 0, duplicates = 0, suppressed = 0, mirrored = 0, dropped_error = 0;
  uint64_t unparsed = 0, time_regressions = 0, no_timestamp = 0, bursts = 0, busy_cycles = 0;
  uint64_t malformed = 0;  // in rx and dropped_error too (LcoreStats::malformed)
  uint64_t expected_penalty_micro = 0, penalty_from_param = 0;  // --decide penalties
  uint64_t bpf_unmatched = 0;  // --bpf did not match: forwarded untouched
  std::array<uint64_t, agebloom::packet::kReasonCount> reasons{};
};
Totals totals();

// One line: rx, tx, suppressed, mirrored, unparsed, errors, Mpps since the
// last line, cycles per packet, filter fill; and a warning while there are
// input errors (input_errors()).
void print_stats_line(uint64_t now_tsc);
// Asks every worker to publish its filter's figures (stats line).
void request_fill();
// What the stats line shows of one worker's filter, into its LcoreStats:
// fill ratio, budget saturations, overloaded epochs and early rotations.
// Called by the filter's owner (the worker between bursts, when asked; main
// once the workers have stopped), since only the owner reads it without a race.
void publish_filter_figures(const Worker& w);
// After the workers stopped: publishes each filter's figures from the
// filter itself, so the closing stats line shows the final ones.
void publish_final_fill();

// Damage seen on the way in: what the ports' drivers count as ierrors (for
// net_pcap, each record libpcap refused: a truncated or corrupt capture) plus
// the malformed mbufs dedup_fwd dropped. On a finite input any of it means
// the output is not the whole capture. `detail`, when given, gets a short
// account ("port 0 ierrors 1, malformed frames 18750").
uint64_t input_errors(std::string* detail = nullptr);

// Registers /dedup_fwd/stats and /dedup_fwd/filter; false (with a message)
// when the library refuses a command. Every value they answer that is a
// number is a JSON number (telemetry in DPDK 22.11 has integers only, so
// fractions are scaled: _ppm, _ppb, _micro), with its unit in its name.
bool register_telemetry();

// What only main() knows at exit, for the JSON.
struct ExitFacts {
  double seconds = 0;
  unsigned mempool_size = 0;
  unsigned mempool_in_use = 0;
  std::string port_stats_json;  // array, gathered before the ports closed
  uint64_t input_errors = 0;    // input_errors(), read before the ports closed
};
// Writes --stats-json; false on an I/O error (message printed).
bool write_stats_json(const std::string& path, const ExitFacts& facts);

// Port counters as a JSON array text, read before the ports are closed.
std::string port_stats_json();

}  // namespace dedup_fwd
