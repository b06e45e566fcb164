// Observability: the periodic stats line, rte_telemetry commands and the JSON
// written at exit.
#pragma once

#include <string>

#include "app.hpp"

namespace dedup_fwd {

struct Totals {
  uint64_t rx = 0, tx = 0, keyed = 0, duplicates = 0, suppressed = 0, mirrored = 0, dropped_error = 0;
  uint64_t unparsed = 0, time_regressions = 0, no_timestamp = 0, bursts = 0, busy_cycles = 0;
  std::array<uint64_t, agebloom::packet::kReasonCount> reasons{};
};
Totals totals();

// One line: rx, tx, suppressed, mirrored, unparsed, errors, Mpps since the
// last line, cycles per packet, filter fill.
void print_stats_line(uint64_t now_tsc);

// Registers /dedup_fwd/stats and /dedup_fwd/filter; false (with a message)
// when the library refuses a command.
bool register_telemetry();

// What only main() knows at exit, for the JSON.
struct ExitFacts {
  double seconds = 0;
  unsigned mempool_size = 0;
  unsigned mempool_in_use = 0;
  std::string port_stats_json;  // array, gathered before the ports closed
};
// Writes --stats-json; false on an I/O error (message printed).
bool write_stats_json(const std::string& path, const ExitFacts& facts);

// Port counters as a JSON array text, read before the ports are closed.
std::string port_stats_json();

}  // namespace dedup_fwd
