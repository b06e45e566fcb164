// The accuracy lab's experiments: one row each in kExperiments (main.cpp),
// like the registry of structures. An experiment reproduces one paper
// result, writes its CSV, a PNG plot (lab/plots/NAME.py over the CSV) and a
// markdown table into the output folder, prints its headline numbers and
// returns the process's exit status.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "agebloom/core/hash.hpp"
#include "agebloom/registry/structure.hpp"

namespace agebloom::lab {

struct LabOptions {
  std::string out = "lab-out";  // --out DIR
  bool quick = false;            // --quick: the small variant scripts/test.sh runs
  uint64_t seed = 1;             // --seed S
  std::vector<Structure> only;   // --filter NAME[,NAME...]: the registry rows `structures` runs (empty: all)
};

// The hash of an experiment whose workload is its keys' hashes (the APBF and
// time-limited tables): --seed S draws other keys; `published` is seed 1's
// hash seed, the runs of docs/RESULTS.md.
inline Hasher workload_hasher(uint64_t published, const LabOptions& o) {
  return Hasher(published ^ ((o.seed - 1) * 0x9E3779B97F4A7C15ull));
}

struct Experiment {
  const char* name;
  const char* reproduces;  // one line: the paper's result
  int (*run)(const LabOptions&);
  bool takes_filter = false;       // --filter chooses its rows (else it is refused)
  const char* also = nullptr;      // a second report it writes (NAME.csv/.md/.png), beside `name`'s
};

// Draws `csv` into `png` with lab/plots/<script> (tools/plot.hpp); false
// (and a message on stderr) when Python or matplotlib is missing or the
// script fails.
bool plot(const LabOptions& o, const std::string& script, const std::string& csv, const std::string& png);

int table1_000(const LabOptions& o);
int real_log_000(const LabOptions& o);
int table2_001(const LabOptions& o);
int figure6_001(const LabOptions& o);
int figure4_001(const LabOptions& o);
int table2_002(const LabOptions& o);
int penalties_003(const LabOptions& o);
int structures(const LabOptions& o);
int rte_member(const LabOptions& o);

}  // namespace agebloom::lab
