// agebloom-lab: the accuracy lab. One command per paper result.
//
//   agebloom-lab EXPERIMENT [--out DIR] [--quick] [--seed S] [--filter NAME,...]
//   agebloom-lab --list
//
// Exit codes: 0 done (and, with --quick, the headline numbers within their
// bounds), 1 an experiment's check failed or an output could not be written,
// 2 bad options.
#include <getopt.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "agebloom/dedup/filter_options.hpp"
#include "agebloom/dedup/stdout_checked.hpp"
#include "experiment.hpp"
#include "plot.hpp"

namespace agebloom::lab {

namespace {

const Experiment kExperiments[] = {
    {"000-table1",
     "Guarded Epoch Bloom Filters, Table 1 (synthetic): counting, stable, guarded epoch r=4/r=8/blocked at the "
     "same bits per item; FPR, live FNR, expired positives",
     table1_000},
    {"000-real-log", "Guarded Epoch Bloom Filters, Table 1 (real log): the same on an Apache access log", real_log_000},
    {"001-table2", "Age-Partitioned Bloom Filters, Table 2: the 25 (k, l) rows, measured FP beside the model and the paper",
     table2_001},
    {"001-figure6", "Age-Partitioned Bloom Filters, Figure 6: FP over 10^4 insertions, w = 10^3, lowest (k, l) per "
     "precision 1e-1..1e-5", figure6_001},
    {"001-figure4", "Age-Partitioned Bloom Filters, Sec. 5.2: the reporting probability through the window and the slack",
     figure4_001},
    {"002-table2", "Time-limited Bloom Filter, Table 2: bits per window element (min, max) per error rate, and a rate "
     "step", table2_002},
    {"structures", "every registered structure at FPR 1% on synthetic and real streams: bits per item, FPR, live FNR, "
     "expired positives, accesses, NPWS, time per key", structures, /*takes_filter=*/true, "structures-bits"},
    {"rte-member", "DPDK's rte_member (HT cache mode, a ping-pong pair of vBFs) beside ours on the same streams: live FNR, "
     "FPR, expired positives, bits per item", rte_member},
    {"003-penalties",
     "Inferential Time-Decaying Bloom Filters, Sec. 5 (Figures 7-10): penalty ratio standard/inferential BTBF "
     "and posterior error, uniform and power-law streams, both conditions, across bits per item",
     penalties_003},
};

[[noreturn]] void bad(const std::string& msg) {
  std::fprintf(stderr, "agebloom-lab: %s\ntry 'agebloom-lab --help'\n", msg.c_str());
  std::exit(2);
}

void usage(std::FILE* out) {
  std::fprintf(out,
               "usage: agebloom-lab EXPERIMENT [--out DIR] [--quick] [--seed S] [--filter NAME,...]\n"
               "       agebloom-lab --list\n"
               "  --out DIR   where the CSV, PNG and markdown go (default lab-out, with --quick\n"
               "              lab-out/quick; created)\n"
               "  --quick     the small variant (seconds), checked against the headline bounds\n"
               "  --seed S    workload seed (default 1; 1 is the published runs' of docs/RESULTS.md)\n"
               "  --filter NAME[,NAME...]  structures: only these registered structures (names as\n"
               "              agebloom-replay --list-filters lists them; given again, its names are added)\n"
               "  --version   the version, and exit\n"
               "Exit codes: 0 done, 1 a check failed or an output could not be written, 2 bad options.\n");
}

// The files an experiment writes, checked before it runs (a full run takes
// minutes): none may be a folder or anything but a file, and the folder must
// take new files. Empty when fine, else why not.
std::string unwritable(const LabOptions& o, const Experiment& e) {
  // A file made and removed: access() says yes to root where a write fails (/sys).
  std::string probe = o.out + "/.agebloom-lab-XXXXXX";
  const int fd = mkstemp(probe.data());
  if (fd < 0) return "cannot write into " + o.out + ": " + std::strerror(errno);
  close(fd);
  unlink(probe.c_str());
  for (const char* report : {e.name, e.also}) {
    if (report == nullptr) continue;
    for (const char* ext : {".csv", ".md", ".png"}) {
      const std::string path = o.out + "/" + report + ext;
      struct stat st;
      if (stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) return path + " exists and is not a file";
      if (stat(path.c_str(), &st) == 0 && access(path.c_str(), W_OK) != 0)
        return "cannot write " + path + ": " + std::strerror(errno);
    }
  }
  return {};
}

// Makes the folder `path` and its parents: "" when it is there, else why not
// (a file where the folder should be is said as such, not as EEXIST).
std::string make_dirs(const std::string& path) {
  std::string cur;
  for (size_t i = 0; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') {
      if (!cur.empty() && mkdir(cur.c_str(), 0755) != 0 && errno != EEXIST) return std::strerror(errno);
    }
    if (i < path.size()) cur += path[i];
  }
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return std::strerror(errno);
  return S_ISDIR(st.st_mode) ? "" : "it exists and is not a folder";
}

}  // namespace

bool plot(const LabOptions&, const std::string& script, const std::string& csv, const std::string& png) {
  const std::string err = tools::draw_plot(script, csv, png);
  if (!err.empty()) std::fprintf(stderr, "agebloom-lab: %s not drawn: %s (the data is in %s)\n", png.c_str(), err.c_str(), csv.c_str());
  return err.empty();
}

}  // namespace agebloom::lab

int main(int argc, char** argv) {
  using namespace agebloom::lab;
  // First: a closed standard output is filled before any CSV could take its
  // descriptor, and a listing, usage or headline that did not reach it is
  // exit 1 (include/agebloom/dedup/stdout_checked.hpp).
  agebloom::dedup::check_stdout_at_exit("agebloom-lab");
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // progress lines show up in a log file as they come
  LabOptions o;
  bool list = false;
  bool out_given = false;
  enum { kOut = 1, kQuick, kSeed, kList, kHelp, kFilter, kVersion };
  const option table[] = {{"out", required_argument, nullptr, kOut},   {"quick", no_argument, nullptr, kQuick},
                          {"seed", required_argument, nullptr, kSeed}, {"list", no_argument, nullptr, kList},
                          {"help", no_argument, nullptr, kHelp},       {"filter", required_argument, nullptr, kFilter},
                          {"version", no_argument, nullptr, kVersion}, {nullptr, 0, nullptr, 0}};
  opterr = 0;
  int c, longindex = -1;
  agebloom::dedup::RepeatCheck repeats(table);
  while ((c = getopt_long(argc, argv, "h", table, &longindex)) != -1) {
    const std::string arg = optarg ? optarg : "";
    // --filter adds to the structures given so far: it may repeat.
    if (c != kFilter)
      if (const std::string e = repeats.check(c, longindex, optarg); !e.empty()) bad(e);
    longindex = -1;
    switch (c) {
      case kOut:
        if (arg.empty()) bad("--out needs a folder");
        o.out = arg;
        out_given = true;
        break;
      case kQuick: o.quick = true; break;
      case kSeed: {
        char* end = nullptr;
        errno = 0;
        o.seed = std::strtoull(arg.c_str(), &end, 10);
        // strtoull takes leading blanks, a sign and wraps "-1": digits only.
        if (arg.empty() || arg.find_first_not_of("0123456789") != std::string::npos || *end != '\0')
          bad("--seed needs a whole number, not '" + arg + "'");
        if (errno == ERANGE) bad("--seed " + arg + " is past 2^64 - 1");
        break;
      }
      case kList: list = true; break;
      case kFilter: {
        size_t at = 0;
        while (at <= arg.size()) {
          const size_t comma = arg.find(',', at);
          const std::string one = arg.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
          const agebloom::StructureInfo* s = agebloom::find_structure(one.data(), one.size());
          if (s == nullptr) bad("--filter: no structure '" + one + "' (agebloom-replay --list-filters lists them)");
          o.only.push_back(s->id);
          if (comma == std::string::npos) break;
          at = comma + 1;
        }
        break;
      }
      case kHelp:
      case 'h': usage(stdout); return 0;
      case kVersion: agebloom::dedup::print_version(stdout, "agebloom-lab"); return 0;
      default: bad(std::string("unknown or incomplete option '") + argv[optind - 1] + "'");
    }
  }
  // A --quick run's files have the full run's names: by default they go to a
  // folder of their own, not over the published run's (minutes to hours).
  if (o.quick && !out_given) o.out += "/quick";
  if (list) {
    if (optind != argc) bad(std::string("--list takes no EXPERIMENT ('") + argv[optind] + "')");
    for (const Experiment& e : kExperiments) std::printf("%-16s %s\n", e.name, e.reproduces);
    return 0;
  }
  if (optind + 1 != argc) bad(optind == argc ? "no EXPERIMENT given (--list lists them)" : "more than one EXPERIMENT");
  const std::string name = argv[optind];
  for (const Experiment& e : kExperiments) {
    if (name != e.name) continue;
    if (!o.only.empty() && !e.takes_filter) bad("--filter chooses the rows of structures only, not of " + name);
    if (const std::string why = make_dirs(o.out); !why.empty()) {
      std::fprintf(stderr, "agebloom-lab: cannot create %s: %s\n", o.out.c_str(), why.c_str());
      return 1;
    }
    if (const std::string why = unwritable(o, e); !why.empty()) {
      std::fprintf(stderr, "agebloom-lab: %s\n", why.c_str());
      return 1;
    }
    // The headline numbers are the run's output too: a stdout that could not
    // take them (a full disk) is exit 1, said by the handler above.
    return e.run(o);
  }
  bad("no experiment '" + name + "' (--list lists them)");
}
