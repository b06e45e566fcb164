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

// One line: rx, tx, suppressed, the suppression ratio, mirrored, unparsed,
// errors, Mpps since the last line, cycles per packet, the filter's fill and
// effective window, each port's rx, tx, imissed and rx_nombuf; and a warning
// while there are input errors (input_errors()).
void print_stats_line(uint64_t now_tsc);
// Asks every worker to publish its filter's figures, fill included (stats line).
void request_fill();
// One worker's filter figures into its LcoreStats: fill ratio (only when
// `with_fill`: it scans the whole filter; else the last one is kept), budget
// saturations, overloaded epochs, early rotations, effective window and the
// structure's own stats. Called by the filter's owner (the worker between
// bursts, when asked; main before the workers start and once they stopped),
// since only the owner reads the filter without a race.
void publish_filter_figures(const Worker& w, bool with_fill);
// Before the workers start or after they stopped (main is then the only
// thread that touches a filter): publishes every filter's figures.
void publish_all_figures(bool with_fill);

// One consistent set of a worker's published figures.
struct FilterFigures {
  uint64_t fill_ppm = 0, effective_window = 0;
  uint64_t budget_saturations = 0, overloaded_epochs = 0, early_rotations = 0;
  std::array<double, kFilterStats> stats{};  // App::filter_stat_names
};
// Any thread: the figures the worker published last.
FilterFigures read_filter_figures(const LcoreStats& s);

// What went wrong in the filters, over every worker's published figures: the
// flood counters and the time-limited filter's exhausted budget. text()
// is their account for the stats line ("" when all is well), and the exit
// warning's when the stats line is off.
struct FilterHealth {
  uint64_t overloaded = 0, early = 0, saturated = 0;
  // stats_line: each part after " | ", the budget's marked WARNING; else
  // (the exit warning) the parts between " | " alone, unmarked.
  std::string text(bool stats_line = true) const;
};
FilterHealth filter_health();

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
// Before the workers' memory is freed: no telemetry handler reads it after
// this returns (they answer -ENODEV from then on).
void close_telemetry();

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
