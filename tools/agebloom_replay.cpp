// agebloom-replay: replays a pcap/pcapng trace through a sliding-window
// filter with dedup_fwd's semantics, packet by packet, and reports what it
// suppressed; --truth adds exact ground truth to measure the filter against.
//
//   agebloom-replay TRACE... [the dedup options of filter_options.hpp]
//                   [--truth] [--json] [--verdicts FILE] [--backend cpu|gpu|auto] [--no-progress]
//                   [--write FILE.pcap] [--write-suppressed FILE.pcap] [--plot FILE.png] [--shard I/N]
//                   [--decide penalties --penalty-fp X --penalty-fn Y [--prior P] [--penalty-param NAME]]
//   agebloom-replay TRACE... --split N --split-prefix PREFIX [--key and the keying options] [--json]
//   agebloom-replay [TRACE...] --check [options]
//   agebloom-replay --list-filters
//
// Exit codes: 0 done, 1 the trace could not be read to its end (or an output
// could not be written), 2 bad options (an output path that cannot be
// written among them: checked before the trace is read).
//
// Several traces are one stream, merged by timestamp; --shard keeps the
// packets whose key falls in one shard, --split writes every shard's
// packets to a file of its own in one pass (tools/replay_input.hpp).
// agebloom-cluster runs the split and the shards' replays on a Dask cluster.
//
// main() reads top to bottom: options, the filter, the packets (each keyed
// packet decided on the CPU at once, or queued for the GPU in chunks), the
// verdicts file, the pcap outputs (a second pass over the trace, steered by
// the verdict bits, so both backends write the same files), the report.
#include <getopt.h>
#include <pcap/pcap.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "agebloom/agebloom.hpp"
#include "agebloom/dedup/dedup_filter.hpp"
#include "agebloom/dedup/filter_options.hpp"
#include "agebloom/dedup/key_mode.hpp"
#include "agebloom/packet/bpf.hpp"
#include "agebloom/packet/click_value.hpp"
#include "agebloom/packet/key_extract.hpp"
#include "agebloom/trace/pcap_trace.hpp"
#include "agebloom/trace/pcap_writer.hpp"
#include "agebloom/trace/same_file.hpp"
#include "agebloom/gpu/replay.hpp"  // the CUDA backend (a stub when built without nvcc)
#include "filter_list_json.hpp"
#include "json_text.hpp"
#include "output_folder.hpp"
#include "agebloom/dedup/stdout_checked.hpp"
#include "replay_input.hpp"
#include "replay_plot.hpp"
#include "plot.hpp"
#include "replay_progress.hpp"

namespace {

using namespace agebloom;
namespace pk = agebloom::packet;

enum class Backend { cpu, gpu, automatic };

// --split writes every piece at once, one open file each: well below the
// usual limit of 1024 descriptors.
constexpr uint64_t kMaxPieces = 512;

struct Options {
  dedup::FilterOptions dedup;  // --key, --filter, --window/--ttl, --fpr, --policy, --seed, ...
  std::vector<std::string> traces;
  std::string trace;  // the traces as the report names them: "a.pcap" or "a.pcap, b.pcap"
  bool truth = false, json = false;
  bool progress = true;  // --no-progress turns the terminal's progress line off
  std::string verdicts;
  std::string write_passed, write_suppressed;  // --write, --write-suppressed
  std::string plot, plot_csv;  // --plot FILE.png, and the FILE.csv it is drawn from
  Backend backend = Backend::cpu;
  uint32_t shard_index = 0, shard_count = 0;  // --shard I/N; count 0: every packet
  uint32_t split_count = 0;  // --split N; 0: replay
  std::string split_prefix;  // --split-prefix: the pieces are PREFIX0.pcap ... PREFIX<N-1>.pcap
  bool check = false;        // --check: the options and the plan only
  std::string piece(uint32_t i) const { return split_prefix + std::to_string(i) + ".pcap"; }
  // The verdict bits are kept: for --verdicts, or to steer the pcap outputs.
  bool keep_verdicts() const { return !verdicts.empty() || !write_passed.empty() || !write_suppressed.empty(); }
};

void usage(FILE* out) {
  std::fprintf(out,
               "usage: agebloom-replay TRACE... [options]\n"
               "       agebloom-replay TRACE... --split N --split-prefix PREFIX [--key MODE and keying options]\n"
               "       agebloom-replay [TRACE...] --check [options]\n"
               "       agebloom-replay --list-filters\n"
               "Several traces are replayed as one stream merged by timestamp (as mergecap merges\n"
               "them; on equal stamps the earlier trace first); they must share one link type.\n"
               "%s"
               "  --truth                         exact ground truth, counts and rates: live repeats\n"
               "                                  passed (live FNR), false positives (FPR), suppressions\n"
               "                                  in the slack (expired keys remembered within the\n"
               "                                  guarantee the report prints)\n"
               "  --verdicts FILE                 one bit per packet replayed, in the order replayed, 1 =\n"
               "                                  suppressed: packet i is bit i %% 8 (least significant\n"
               "                                  first) of byte i / 8; ceil(packets / 8) bytes, the last\n"
               "                                  byte's unused high bits 0. No header.\n"
               "  --write FILE.pcap               the packets that pass (the deduplicated capture, like\n"
               "                                  editcap -D): pcap with nanosecond stamps, the trace's\n"
               "                                  link type, stamps and lengths kept\n"
               "  --write-suppressed FILE.pcap    the packets suppressed, in the same format\n"
               "  --json                          one JSON object on stdout\n"
               "  --backend cpu|gpu|auto          gpu: CUDA exact replay (the structures --list-filters\n"
               "                                  marks 'GPU replay'); auto: gpu when it can (default cpu)\n"
               "  --plot FILE.png                 suppressions, false suppressions (with --truth) and the\n"
               "                                  filter's fill over packet time, in at most 200 bins;\n"
               "                                  the series is written beside it as FILE.csv and drawn\n"
               "                                  with python3-matplotlib (CPU backend)\n"
               "  --shard I/N                     replay only shard I of N (0 <= I < N) of the keys: a key's\n"
               "                                  shard is (XXH3-64(key bytes, seed 0x616765626c6f6f6d,\n"
               "                                  \"agebloom\") * N) >> 64, fixed by the key bytes alone (not\n"
               "                                  the filter's --seed), so N runs over the same traces with\n"
               "                                  the same --key and keying options see every key once;\n"
               "                                  packets with no key belong to shard 0. The report counts\n"
               "                                  the shard's packets only and gives the shard\n"
               "  --split N --split-prefix PREFIX replay nothing: write each packet of the traces to its\n"
               "                                  shard's file, PREFIX0.pcap to PREFIX<N-1>.pcap (all N, empty\n"
               "                                  or not; the trace's link type, nanosecond stamps), in one\n"
               "                                  pass; --shard I/N over PREFIX<I>.pcap then drops nothing.\n"
               "                                  The options that size or decide are taken and ignored, so\n"
               "                                  one command line serves both\n"
               "  --check                         check the options, the outputs and each TRACE's header,\n"
               "                                  plan the filter, and replay nothing\n"
               "                                  (TRACE may be left out): exit 0; 2 with the message for\n"
               "                                  options, outputs or plan; 1 for a TRACE that cannot be\n"
               "                                  opened, as without --check\n"
               "  --no-progress                   no progress line (percent of the file read, packets/s,\n"
               "                                  time left); it is drawn on stderr only when that is a\n"
               "                                  terminal\n"
               "  --help\n"
               "Exit codes: 0 done, 1 a trace could not be read or an output written, 2 bad options\n"
               "(an output file that cannot be created is one, found before the traces are read; traces\n"
               "of different link types are another).\n",
               dedup::FilterOptions::help().c_str());
}

[[noreturn]] void bad(const std::string& msg) {
  std::fprintf(stderr, "agebloom-replay: %s\n", msg.c_str());
  std::fprintf(stderr, "try 'agebloom-replay --help'\n");
  std::exit(2);
}

// An output is checked before the trace is read, not found unwritable after
// the whole replay: the file must be writable, or its folder must take a new
// one. (A full disk still shows only when written: exit 1.)
void check_writable(const char* option, const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) bad(std::string(option) + " " + path + ": is a folder");
    // The report goes to standard output and progress to standard error: a
    // capture written onto either (--write /dev/stdout) would be interleaved
    // with text and unreadable. A character device (/dev/null, a terminal)
    // keeps no bytes to corrupt.
    for (const auto& [fd, stream] : {std::pair{STDOUT_FILENO, "standard output, where the report goes"},
                                     std::pair{STDERR_FILENO, "standard error, where progress goes"}}) {
      struct stat out;
      if (!S_ISCHR(st.st_mode) && fstat(fd, &out) == 0 && out.st_dev == st.st_dev && out.st_ino == st.st_ino)
        bad(std::string(option) + " " + path + ": is this run's " + stream + "; name a file of its own");
    }
    if (access(path.c_str(), W_OK) != 0)
      bad(std::string(option) + " " + path + ": cannot write it: " + std::strerror(errno));
    return;
  }
  if (std::string why = agebloom::tools::folder_refuses_files(agebloom::tools::folder_of(path)); !why.empty())
    bad(std::string(option) + " " + path + ": " + why);
}

Options parse(int argc, char** argv) {
  Options o;
  enum {
    kTruth = 1, kJson, kVerdicts, kBackend, kHelp, kWrite, kWriteSuppressed, kNoProgress, kPlot, kShard, kSplit,
    kSplitPrefix, kCheck
  };
  std::vector<option> table = {{"truth", no_argument, nullptr, kTruth},
                               {"json", no_argument, nullptr, kJson},
                               {"verdicts", required_argument, nullptr, kVerdicts},
                               {"write", required_argument, nullptr, kWrite},
                               {"write-suppressed", required_argument, nullptr, kWriteSuppressed},
                               {"backend", required_argument, nullptr, kBackend},
                               {"no-progress", no_argument, nullptr, kNoProgress},
                               {"plot", required_argument, nullptr, kPlot},
                               {"shard", required_argument, nullptr, kShard},
                               {"split", required_argument, nullptr, kSplit},
                               {"split-prefix", required_argument, nullptr, kSplitPrefix},
                               {"check", no_argument, nullptr, kCheck},
                               {"help", no_argument, nullptr, kHelp}};
  dedup::FilterOptions::append_to(table);
  table.push_back({nullptr, 0, nullptr, 0});
  opterr = 0;
  int c, longindex = -1;
  dedup::RepeatCheck repeats(table.data());
  while ((c = getopt_long(argc, argv, "h", table.data(), &longindex)) != -1) {
    std::string error = repeats.check(c, longindex, optarg);
    longindex = -1;
    if (!error.empty()) bad(error);
    if (o.dedup.take(c, optarg, error)) {
      if (!error.empty()) bad(error);
      if (o.dedup.version) {  // at once, as --help: the options after it are not read
        dedup::print_version(stdout, "agebloom-replay");
        std::exit(0);
      }
    } else {
      const std::string arg = optarg ? optarg : "";
      switch (c) {
        case kTruth: o.truth = true; break;
        case kJson: o.json = true; break;
        case kNoProgress: o.progress = false; break;
        case kPlot:
          if (arg.size() < 5 || arg.compare(arg.size() - 4, 4, ".png") != 0)
            bad("--plot needs a file name ending in .png, not '" + arg + "'");
          o.plot = arg;
          o.plot_csv = tools::plot_csv_path(arg);
          break;
        case kShard:
          if (std::string e = tools::parse_shard(arg, o.shard_index, o.shard_count); !e.empty()) bad(e);
          break;
        case kSplit: {
          uint64_t n = 0;
          if (!dedup::parse_u64(arg, n) || n == 0 || n > kMaxPieces)
            bad("--split needs a number of shards from 1 to " + std::to_string(kMaxPieces) + ", not '" + arg + "'");
          o.split_count = static_cast<uint32_t>(n);
          break;
        }
        case kSplitPrefix:
          if (arg.empty()) bad("--split-prefix needs a path prefix");
          o.split_prefix = arg;
          break;
        case kCheck: o.check = true; break;
        case kVerdicts:
          if (arg.empty()) bad("--verdicts needs a file name");
          o.verdicts = arg;
          break;
        case kWrite:
        case kWriteSuppressed:
          if (arg.empty()) bad(std::string(c == kWrite ? "--write" : "--write-suppressed") + " needs a file name");
          (c == kWrite ? o.write_passed : o.write_suppressed) = arg;
          break;
        case kBackend:
          if (arg == "cpu") o.backend = Backend::cpu;
          else if (arg == "gpu") o.backend = Backend::gpu;
          else if (arg == "auto") o.backend = Backend::automatic;
          else bad("--backend must be cpu, gpu or auto, not '" + arg + "'");
          break;
        case kHelp:
        case 'h': usage(stdout); std::exit(0);
        default:
          // An unknown short option (-x) is in optopt: argv[optind - 1] may
          // still be a non-option getopt has yet to permute (the TRACE).
          if (optopt > ' ' && optopt < 127) bad(std::string("unknown option '-") + static_cast<char>(optopt) + "'");
          bad(std::string("unknown or incomplete option '") + argv[optind - 1] + "'");
      }
    }
  }
  if (o.dedup.list_filters) {
    if (o.json) std::printf("%s\n", tools::json_text(tools::filter_list_json(), 2).c_str());
    else dedup::print_filter_list(stdout);
    std::exit(0);
  }
  if (std::string e = o.dedup.finish(); !e.empty()) bad(e);
  if (o.split_count) {
    if (o.split_prefix.empty()) bad("--split needs --split-prefix, where the pieces go");
    for (auto [given, name] : {std::pair{o.truth, "--truth"}, std::pair{!o.verdicts.empty(), "--verdicts"},
                               std::pair{!o.write_passed.empty(), "--write"},
                               std::pair{!o.write_suppressed.empty(), "--write-suppressed"},
                               std::pair{!o.plot.empty(), "--plot"}, std::pair{o.shard_count != 0, "--shard"}})
      if (given) bad(std::string("--split writes pieces and replays nothing: ") + name + " does not apply");
  } else if (!o.split_prefix.empty()) {
    bad("--split-prefix goes with --split N");
  }
  if (optind == argc && !o.check) bad("no TRACE given");
  for (int i = optind; i < argc; ++i) {
    o.traces.emplace_back(argv[i]);
    o.trace += (o.trace.empty() ? "" : ", ") + o.traces.back();
  }
  // Standard input is read once: a second '-' would find it at its end.
  if (std::count(o.traces.begin(), o.traces.end(), "-") > 1) bad("standard input ('-') can be only one TRACE");
  const std::pair<const char*, const std::string*> outputs[] = {
      {"--verdicts", &o.verdicts}, {"--write", &o.write_passed}, {"--write-suppressed", &o.write_suppressed},
      {"--plot", &o.plot}, {"--plot (its CSV)", &o.plot_csv}};
  for (size_t i = 0; i < std::size(outputs); ++i) {
    if (outputs[i].second->empty()) continue;
    for (const std::string& t : o.traces)  // a trace of "-" is standard input; an output "-" is a file
      if (t != "-" && trace::same_file(*outputs[i].second, t))
        bad(std::string(outputs[i].first) + " " + *outputs[i].second + " would overwrite the TRACE '" + t + "'");
    for (size_t k = 0; k < i; ++k)
      if (trace::same_file(*outputs[k].second, *outputs[i].second))
        bad(std::string(outputs[k].first) + " and " + outputs[i].first + " name the same file");
  }
  // --write and --write-suppressed read the trace a second time, steered by
  // the verdicts: a pipe or standard input would be found empty only after
  // the whole replay.
  if (!o.write_passed.empty() || !o.write_suppressed.empty())
    for (const std::string& t : o.traces) {
      struct stat st;
      if (t == "-" || (stat(t.c_str(), &st) == 0 && !S_ISREG(st.st_mode)))
        bad(std::string(o.write_passed.empty() ? "--write-suppressed" : "--write") +
            " reads the TRACE twice: '" + t + "' is " + (t == "-" ? "standard input" : "not a regular file") +
            "; save it to a file first (or use --verdicts, which needs one pass)");
    }
  for (const auto& [option, path] : outputs)
    if (!path->empty()) check_writable(option, *path);
  for (uint32_t i = 0; i < o.split_count; ++i) {
    for (const std::string& t : o.traces)
      if (t != "-" && trace::same_file(o.piece(i), t))
        bad("--split-prefix: the piece " + o.piece(i) + " would overwrite the TRACE");
    for (uint32_t k = 0; k < i; ++k)  // links can make two pieces one file
      if (trace::same_file(o.piece(k), o.piece(i)))
        bad("--split-prefix: the pieces " + o.piece(k) + " and " + o.piece(i) + " are one file");
  }
  if (o.split_count) check_writable("--split-prefix", o.piece(0));
  if (!o.plot.empty() && o.backend == Backend::gpu)
    bad("--backend gpu: --plot samples the filter's fill as the packets are read, on the CPU only");
  if (!o.dedup.seed_set) o.dedup.seed = std::random_device{}() | (uint64_t{std::random_device{}()} << 32);
  return o;
}

// Exact ground truth: the last insertion of every key, in insertions (count
// windows) or nanoseconds (time windows). A key is counted as a first
// occurrence once, however its first sighting was judged; under
// insert-on-miss a key whose sightings were all suppressed was never
// inserted, and its later sightings are counted apart (uninserted).
struct Truth {
  static constexpr uint64_t kNever = ~uint64_t{0};
  std::unordered_map<std::string, uint64_t> last;  // key -> its last insertion, or kNever
  uint64_t insertions = 0;
  uint64_t duplicates = 0, live_misses = 0;
  uint64_t firsts = 0, first_positives = 0;
  uint64_t expired = 0, expired_positives = 0;
  uint64_t uninserted = 0, uninserted_positives = 0;
  // How long the filter may remember a key, in the window's units: the
  // window plus its slack bound (DedupFilter::slack), as the guarantee line
  // says; kNever for a structure that keeps no window. An expired key
  // answered positive within it is the slack's doing; past it, the filter
  // promised to have forgotten it, so it is a false positive like any other.
  uint64_t bound = kNever;
  uint64_t slack_positives = 0, stale_positives = 0;  // expired positives within / past the bound
  uint64_t oldest_remembered = 0;  // the age of the oldest expired key answered positive

  // What a sighting of a key is: a suppression is right only for `live`.
  enum class Sighting { first, uninserted, live, slack, stale };

  Sighting record(std::string k, uint64_t now, const Window& w, bool verdict, bool inserted) {
    auto [it, first] = last.try_emplace(std::move(k), kNever);
    const uint64_t at = w.is_time() ? now : insertions;
    Sighting seen;
    if (first) {
      ++firsts;
      first_positives += verdict;
      seen = Sighting::first;
    } else if (it->second == kNever) {
      ++uninserted;
      uninserted_positives += verdict;
      seen = Sighting::uninserted;
    } else if (at - it->second <= w.span) {
      ++duplicates;
      live_misses += !verdict;
      seen = Sighting::live;
    } else {
      const uint64_t age = at - it->second;
      ++expired;
      expired_positives += verdict;
      seen = age <= bound ? Sighting::slack : Sighting::stale;
      if (verdict) {
        (seen == Sighting::slack ? slack_positives : stale_positives) += 1;
        if (age > oldest_remembered) oldest_remembered = age;
      }
    }
    if (inserted) {
      it->second = at;
      ++insertions;
    }
    return seen;
  }
};

// --decide penalties: what the decisions expected to cost and, with --truth,
// what they cost, beside the plain filter's yes/no on the same queries.
struct PenaltyTally {
  double expected = 0;             // Σ expected penalty of the answers given
  double realised = 0;             // Σ penalty of the wrong answers (--truth)
  double realised_standard = 0;    // the same for the filter's yes/no
  uint64_t standard_suppressed = 0;
  uint64_t fn_from_param = 0;      // clicks whose $FN came from --penalty-param

  void add(const dedup::PenaltyVerdict& v, inference::Penalties pen, bool truth, bool live) {
    expected += v.expected_penalty;
    standard_suppressed += v.standard;
    if (!truth) return;
    if (v.duplicate != live) realised += live ? pen.fn : pen.fp;
    if (v.standard != live) realised_standard += live ? pen.fn : pen.fp;
  }
};

double ratio(uint64_t a, uint64_t b) { return b ? static_cast<double>(a) / b : 0.0; }

// The window as --window or --ttl takes it, and as the other tools print it.
std::string window_text(const Window& w) {
  return w.is_time() ? dedup::format_duration(w.span) : std::to_string(w.span) + " insertions";
}

// A span in the window's units, for people: insertions, or a rounded time.
std::string span_text(const Window& w, uint64_t v) {
  return w.is_time() ? dedup::format_duration(v, true) : std::to_string(v) + " insertions";
}

// What the filter promises, as agebloom-plan says it; penalty decisions may
// pass a repeat the filter knows, which the plain promise does not cover.
std::string guarantee_text(const Options& o, const dedup::DedupFilter& filter) {
  std::string g = filter.guarantee(o.dedup.policy);
  if (o.dedup.decide == dedup::Decide::penalties)
    g += "; --decide penalties passes a repeat when that is expected to cost less";
  return g;
}

// What the run found, whichever backend decided.
struct Run {
  uint64_t packets = 0, keyed = 0, suppressed = 0, time_regressions = 0;
  uint64_t outside_shard = 0;  // --shard: packets read that are other shards' (in no other count)
  uint64_t bpf_unmatched = 0;  // --bpf did not match: passed untouched, neither keyed nor unparsed
  uint64_t bad_timestamps = 0;  // records the reader skipped: a timestamp field out of range
  uint64_t snapped = 0;         // records a snap length cut short (caplen < wirelen)
  uint32_t snapped_caplen = 0;  // the longest such record's captured bytes (the snap length, at most)
  std::array<uint64_t, pk::kReasonCount> reasons{};
  std::vector<uint8_t> verdict_bits;
  Truth truth;
  PenaltyTally penalty;
  bool gpu = false;
  gpu::ReplayStats gpu_stats;
  std::string gpu_why_not;  // --backend auto that stayed on the CPU
  double seconds = 0;
  std::string read_error;  // the trace ended in an error: the report covers the packets before it
  std::unique_ptr<tools::PlotSeries> series;  // --plot
  std::string plot_error;  // the CSV or the PNG could not be written
};

// The filter in a 64-byte aligned heap arena: the GPU backend takes this
// arena as the filter's image.
struct OwnedFilter {
  dedup::DedupFilter filter;
  size_t bytes;
  std::unique_ptr<unsigned char, decltype(&std::free)> memory{nullptr, &std::free};

  explicit OwnedFilter(dedup::DedupFilter f) : filter(std::move(f)), bytes(filter.bytes_needed()) {
    memory.reset(static_cast<unsigned char*>(std::aligned_alloc(kCacheLine, align_up(bytes, kCacheLine))));
    // This machine's limit, not a bad option: exit 1 (the same options run
    // where the memory is), with what would need less.
    if (!memory) {
      std::fprintf(stderr, "agebloom-replay: filter: cannot allocate %zu bytes (%.1f GiB) on this machine; a shorter "
                   "window, a smaller --capacity or a higher --fpr needs less (agebloom-plan sizes them)\n",
                   bytes, static_cast<double>(bytes) / (1u << 30));
      std::exit(1);
    }
    Arena arena(memory.get(), bytes);
    if (std::string err = filter.create(arena); !err.empty()) bad("filter: " + err);
  }
};

// What the GPU backend cannot replay on any machine (penalties, a
// structure it has no kernel for): "" or why.
std::string gpu_refusal(const Options& o, const dedup::DedupFilter& f) {
  if (o.dedup.decide == dedup::Decide::penalties) return "--decide penalties runs on the CPU only";
  return gpu::unsupported_reason(f.config());
}

// Whether the GPU replays this run: --backend gpu insists (exit 2 saying why
// not), auto falls back to the CPU and says why in the report.
bool choose_gpu(const Options& o, const dedup::DedupFilter& f, std::string& why_not) {
  if (o.backend == Backend::cpu) return false;
  std::string why;
  if (o.dedup.decide == dedup::Decide::penalties) why = gpu_refusal(o, f);
  else if (!o.plot.empty()) why = "--plot runs on the CPU only";  // (with --backend gpu, refused by parse())
  else if (gpu::gpu_available(why)) why = gpu_refusal(o, f);
  if (why.empty()) return true;
  if (o.backend == Backend::gpu) bad("--backend gpu: " + why);
  why_not = why;
  return false;
}

// Keyed packets queued for the GPU in chunks (bounded memory), each replayed
// from the filter state the previous chunk left in the arena.
struct GpuQueue {
  static constexpr size_t kChunk = size_t{1} << 22;
  std::vector<KeyHash> hash;
  std::vector<uint64_t> packet, time;  // packet index and clock of each keyed packet
  std::vector<std::string> key;        // --truth only

  // Replays the queue and hands each verdict to apply(packet, dup, key, time).
  template <class Apply>
  std::string flush(const Options& o, OwnedFilter& owned, Run& run, Apply&& apply) {
    if (hash.empty()) return {};
    std::vector<uint8_t> bits((hash.size() + 7) / 8, 0);
    gpu::ReplayOptions opt;
    opt.times = time.data();
    if (o.dedup.policy == dedup::Policy::insert_on_miss) opt.policy = gpu::ReplayPolicy::insert_on_miss;
    gpu::ReplayStats chunk;
    const gpu::GpuStatus gs = gpu::replay(owned.filter.config(), hash.data(), hash.size(), opt, bits.data(),
                                          owned.memory.get(), owned.bytes, &chunk);
    if (!gs) return gs.message();
    run.gpu_stats.chunks += chunk.chunks;
    run.gpu_stats.batches += chunk.batches;
    run.gpu_stats.device_seconds += chunk.device_seconds;
    for (size_t i = 0; i < hash.size(); ++i)
      apply(packet[i], (bits[i / 8] >> (i % 8)) & 1, o.truth ? std::move(key[i]) : std::string(), time[i]);
    hash.clear();
    packet.clear();
    time.clear();
    key.clear();
    return {};
  }
};

// What the replay makes of a packet before any filter sees it: whether
// --bpf selects it, its key or why it has none, and whether it is this
// run's shard.
struct Keying {
  const Options& o;
  const pk::BpfFilter& bpf;
  const pk::KeyOptions options;  // click, packet and VLAN options (pointing into o)
  bool selected = false;
  pk::Result result;
  pk::Key key;

  Keying(const Options& opts, const pk::BpfFilter& filter) : o(opts), bpf(filter), options(opts.dedup.key_options()) {}

  void take(const trace::Packet& pkt) {
    selected = bpf.matches(pkt.data, pkt.caplen, pkt.wirelen);
    result = selected ? pk::extract_key(pkt.linktype, pkt.data, pkt.caplen, o.dedup.mode, options, key, pkt.wirelen) : pk::Result{};
  }
  bool keyed() const noexcept { return selected && result.ok(); }
  // The packet's shard among `count`: its key's, or 0 for a packet with no key.
  uint32_t shard(uint32_t count) const noexcept {
    return keyed() ? tools::shard_of(key.bytes, key.length, count) : 0;
  }
  bool in_shard() const noexcept { return o.shard_count == 0 || shard(o.shard_count) == o.shard_index; }
};

// Reads the whole trace: every keyed packet decided on the CPU, or on the
// GPU when `run.gpu`. Returns 0, or 1 with a message on stderr.
int replay(const Options& o, OwnedFilter& owned, tools::MergedTraces& reader, const pk::BpfFilter& bpf,
           tools::Progress& progress, Run& run) {
  // Big (it holds a key), so made once and refilled per packet.
  auto keying = std::make_unique<Keying>(o, bpf);
  const pk::ClickOptions& click = keying->options.click;
  const pk::Key& key = keying->key;
  const Hasher hasher(o.dedup.seed);
  // The CPU hashes every key, for a GPU replay too.
  if (const char* slow = hasher.slow_body_note()) std::fprintf(stderr, "agebloom-replay: warning: %s\n", slow);
  const Window window = o.dedup.spec.window;
  const bool always = o.dedup.policy == dedup::Policy::insert_always;

  const bool penalties = o.dedup.decide == dedup::Decide::penalties;

  // --plot: the bin of the packet being decided (the CPU decides each packet
  // as it is read; --plot never runs on the GPU).
  tools::PlotSeries::Bin* bin = nullptr;
  auto fill = [&owned] { return owned.filter.fill_ratio(); };

  // What a verdict changes, wherever it was computed (`scored`: a penalty-aware one).
  auto apply = [&](uint64_t packet, bool dup, std::string key_bytes, uint64_t at,
                   const dedup::PenaltyVerdict* scored = nullptr, inference::Penalties pen = {}) {
    run.suppressed += dup;
    Truth::Sighting seen = Truth::Sighting::live;
    if (o.truth) seen = run.truth.record(std::move(key_bytes), at, window, dup, always || !dup);
    if (scored) run.penalty.add(*scored, pen, o.truth, seen == Truth::Sighting::live);
    if (bin != nullptr && dup) {
      ++bin->suppressed;
      if (o.truth && seen == Truth::Sighting::slack) ++bin->slack;
      else if (o.truth && seen != Truth::Sighting::live) ++bin->false_positives;
    }
    if (dup && o.keep_verdicts()) run.verdict_bits[packet / 8] |= static_cast<uint8_t>(1u << (packet % 8));
  };

  GpuQueue queue;
  std::string gpu_error;
  trace::Packet pkt;
  uint64_t now = 0;
  const auto start = std::chrono::steady_clock::now();
  trace::PcapReader::Status st;
  while ((st = reader.next(pkt)) == trace::PcapReader::Status::ok) {
    keying->take(pkt);
    // Another shard's packet is not this run's at all: no count, no verdict bit.
    if (!keying->in_shard()) {
      ++run.outside_shard;
      progress.tick(run.packets + run.outside_shard);
      continue;
    }
    if (o.keep_verdicts() && run.packets % 8 == 0) run.verdict_bits.push_back(0);
    if (run.series) bin = &run.series->enter(pkt.timestamp_ns, fill);
    const bool selected = keying->selected;
    if (pkt.caplen < pkt.wirelen) {
      ++run.snapped;
      if (pkt.caplen > run.snapped_caplen) run.snapped_caplen = pkt.caplen;
    }
    run.bpf_unmatched += !selected;
    if (selected) ++run.reasons[static_cast<size_t>(keying->result.reason)];
    if (keying->keyed()) {
      ++run.keyed;
      // Captures can step back in time (merged files); replay holds the clock
      // at the latest stamp rather than failing, and counts each step back.
      if (pkt.timestamp_ns < now) ++run.time_regressions;
      else now = pkt.timestamp_ns;
      const KeyHash h = hasher(key.bytes, key.length);
      std::string key_bytes = o.truth ? std::string(reinterpret_cast<const char*>(key.bytes), key.length) : std::string();
      if (run.gpu) {
        queue.hash.push_back(h);
        queue.packet.push_back(run.packets);
        queue.time.push_back(now);
        if (o.truth) queue.key.push_back(std::move(key_bytes));
        if (queue.hash.size() == GpuQueue::kChunk && !(gpu_error = queue.flush(o, owned, run, apply)).empty()) break;
      } else if (penalties) {
        inference::Penalties pen = o.dedup.penalties;
        if (!o.dedup.penalty_param.empty() &&
            pk::click_param_number(pkt.linktype, pkt.data, pkt.caplen, click, o.dedup.penalty_param.c_str(), pen.fn))
          ++run.penalty.fn_from_param;
        const dedup::PenaltyVerdict v = owned.filter.decide_with_penalties(h, o.dedup.policy, o.dedup.prior, pen);
        apply(run.packets, v.duplicate, std::move(key_bytes), now, &v, pen);
      } else {
        (void)owned.filter.advance(now);  // cannot fail: now never decreases
        apply(run.packets, owned.filter.is_duplicate(h, o.dedup.policy), std::move(key_bytes), now);
      }
    }
    ++run.packets;
    progress.tick(run.packets + run.outside_shard);
  }
  if (run.gpu && gpu_error.empty()) gpu_error = queue.flush(o, owned, run, apply);
  if (run.series) run.series->finish(fill());
  progress.finish(run.packets + run.outside_shard);
  run.bad_timestamps = reader.bad_timestamps();
  if (run.bad_timestamps)
    std::fprintf(stderr, "agebloom-replay: warning: %s: %llu records skipped, their timestamps out of range%s\n",
                 o.trace.c_str(), static_cast<unsigned long long>(run.bad_timestamps),
                 o.write_passed.empty() && o.write_suppressed.empty()
                     ? ""
                     : " (in neither --write nor --write-suppressed: they have no time to be written with)");
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!gpu_error.empty()) {
    std::fprintf(stderr, "agebloom-replay: GPU replay failed: %s\n", gpu_error.c_str());
    return 1;
  }
  if (st == trace::PcapReader::Status::error) {
    // Not fatal to what was read: the caller reports those packets (and
    // writes their verdicts), then the error, and exits 1.
    run.read_error = reader.error();
    return 1;
  }
  return 0;
}

// Opens every trace into one merged stream, `offsets` (when given) following
// each file for the progress line. Returns "" or why a trace cannot be read
// (exit 1); traces of different link types are bad options (exit 2): their
// frames cannot be keyed or written as one capture.
std::string open_traces(const Options& o, tools::MergedTraces& input, std::vector<tools::TraceOffset>* offsets) {
  for (const std::string& path : o.traces) {
    if (offsets) offsets->emplace_back(path);  // before the open: it finds the descriptor the open takes
    auto opened = trace::PcapReader::open(path);
    if (!opened.ok()) return opened.error;
    if (offsets) offsets->back().locate();
    if (input.size() && opened.reader.linktype() != input.linktype()) {
      auto name = [](uint32_t dlt) {
        const char* n = pcap_datalink_val_to_name(static_cast<int>(dlt));
        return std::to_string(dlt) + (n ? std::string(" (") + n + ")" : std::string());
      };
      bad("traces of different link types cannot be replayed as one stream: " + input.path(0) + " has link type " +
          name(input.linktype()) + ", " + path + " has " + name(opened.reader.linktype()) +
          "; replay them separately");
    }
    input.add(path, std::move(opened.reader));
  }
  return "";
}

// What a key of `mode` needs captured of a record a snap length cut short.
const char* snapped_key_needs(pk::KeyMode mode) {
  switch (mode) {
    case pk::KeyMode::src_ip:
    case pk::KeyMode::dst_ip: return "an address key: the IP header";
    case pk::KeyMode::flow: return "a flow key: the IP and the TCP or UDP header";
    case pk::KeyMode::click: return "the TCP header and the HTTP request line, the Host line too with --click-host";
    case pk::KeyMode::packet: return "a packet key: the whole packet";
  }
  return "";
}

// A pcap record's seconds are 32 bits: a pcapng record after 2106-02-07
// (2^32 s) is written with its seconds modulo 2^32. Counted while writing and
// said after, so a capture's times are never changed silently.
struct PastPcapTime {
  uint64_t records = 0;
  void note(const trace::Packet& p) { records += p.timestamp_ns / 1'000'000'000u > 0xffffffffu; }
  void say(const char* outputs) const {
    if (records)
      std::fprintf(stderr, "agebloom-replay: warning: %llu record%s dated after 2106-02-07 written to %s with %s "
                   "seconds modulo 2^32 (a pcap record's seconds are 32 bits)\n",
                   static_cast<unsigned long long>(records), records == 1 ? "" : "s", outputs,
                   records == 1 ? "its" : "their");
  }
};

// What tells a trace's contents apart between the two reads --write makes
// (the replay, then the copy into the outputs): a capture rewritten or cut in
// between would have its packets written under another packet's verdict.
struct FileId {
  dev_t dev = 0;
  ino_t ino = 0;
  off_t size = 0;
  int64_t mtime_ns = 0;
  bool operator==(const FileId&) const = default;
};
FileId file_id(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};
  return {st.st_dev, st.st_ino, st.st_size, int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec};
}
// The first trace whose identity differs from `ids` (one per o.traces), or "".
std::string changed_trace(const Options& o, const std::vector<FileId>& ids) {
  for (size_t i = 0; i < o.traces.size() && i < ids.size(); ++i)
    if (!(file_id(o.traces[i]) == ids[i])) return o.traces[i];
  return "";
}

// What a replay and a split both read: the traces as one stream, the files
// the progress line follows, and --bpf compiled for their link type.
struct Input {
  std::vector<tools::TraceOffset> offsets;
  tools::MergedTraces traces;
  pk::BpfFilter bpf;
  std::vector<FileId> ids;  // each trace as the replay opened it (for --write's second read)
};

// Opens the traces into `in`; false, with the message on stderr, when one
// cannot be read (exit 1).
bool open_input(const Options& o, Input& in) {
  if (std::string e = open_traces(o, in.traces, &in.offsets); !e.empty()) {
    std::fprintf(stderr, "agebloom-replay: %s\n", e.c_str());
    return false;
  }
  for (const std::string& path : o.traces) in.ids.push_back(file_id(path));
  if (!o.dedup.bpf.empty())
    if (std::string e = in.bpf.compile(o.dedup.bpf, in.traces.linktype()); !e.empty()) bad(e);
  if (const std::string note = in.bpf.note(); !note.empty()) std::fprintf(stderr, "agebloom-replay: note: %s\n", note.c_str());
  return true;
}

// Writes the verdict bits; every write, the flush and the close are checked
// (a full disk is an error, not a short file).
bool write_verdicts(const std::string& path, const std::vector<uint8_t>& bits) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) {
    std::fprintf(stderr, "agebloom-replay: cannot open %s: %s\n", path.c_str(), std::strerror(errno));
    return false;
  }
  const bool wrote = std::fwrite(bits.data(), 1, bits.size(), f) == bits.size();
  const bool flushed = std::fflush(f) == 0;
  const int err = errno;
  const bool closed = std::fclose(f) == 0;
  if (wrote && flushed && closed) return true;
  std::fprintf(stderr, "agebloom-replay: cannot write %s: %s\n", path.c_str(), std::strerror(err ? err : errno));
  return false;
}

// --write / --write-suppressed: reads the traces again and sends each of the
// `packets` the replay decided to the file its verdict bit picks. Returns
// false with a message on stderr.
bool write_pcaps(const Options& o, const pk::BpfFilter& bpf, const std::vector<FileId>& ids, const Run& run) {
  // A trace that changed since the replay read it gets no outputs: its
  // packets would be written under other packets' verdicts.
  if (std::string t = changed_trace(o, ids); !t.empty()) {
    std::fprintf(stderr, "agebloom-replay: %s changed while it was replayed (size, time or file): nothing written to "
                 "--write/--write-suppressed; replay it again once it is complete\n", t.c_str());
    return false;
  }
  tools::MergedTraces input;
  if (std::string e = open_traces(o, input, nullptr); !e.empty()) {
    std::fprintf(stderr, "agebloom-replay: %s\n", e.c_str());
    return false;
  }
  trace::PcapWriter passed, suppressed;
  for (auto [writer, path] : {std::pair{&passed, &o.write_passed}, std::pair{&suppressed, &o.write_suppressed}}) {
    if (path->empty()) continue;
    if (std::string e = writer->open(*path, input.linktype()); !e.empty()) {
      std::fprintf(stderr, "agebloom-replay: %s\n", e.c_str());
      return false;
    }
  }
  trace::Packet pkt;
  auto keying = std::make_unique<Keying>(o, bpf);
  PastPcapTime past;
  uint64_t i = 0;
  for (; i < run.packets && input.next(pkt) == trace::PcapReader::Status::ok;) {
    if (o.shard_count) {
      keying->take(pkt);
      if (!keying->in_shard()) continue;  // not one of the packets replayed
    }
    const bool dup = (run.verdict_bits[i / 8] >> (i % 8)) & 1;
    (dup ? suppressed : passed).write(pkt);
    past.note(pkt);
    ++i;
  }
  past.say("--write/--write-suppressed");
  bool ok = true;
  // The copy must meet every packet the replay judged, from the same files.
  if (i < run.packets) {
    std::fprintf(stderr, "agebloom-replay: the traces changed while they were replayed: the second read, for "
                 "--write/--write-suppressed, found %llu of the %llu packets replayed%s%s; the outputs are incomplete\n",
                 static_cast<unsigned long long>(i), static_cast<unsigned long long>(run.packets),
                 input.error().empty() ? "" : ": ", input.error().c_str());
    ok = false;
  } else if (std::string t = changed_trace(o, ids); !t.empty()) {
    std::fprintf(stderr, "agebloom-replay: %s changed while --write/--write-suppressed copied it (size, time or "
                 "file): the outputs may hold other packets than the ones judged\n", t.c_str());
    ok = false;
  }
  for (trace::PcapWriter* w : {&passed, &suppressed}) {
    if (std::string e = w->close(); !e.empty()) {
      std::fprintf(stderr, "agebloom-replay: %s\n", e.c_str());
      ok = false;
    }
  }
  return ok;
}

nlohmann::json report(const Options& o, const OwnedFilter& owned, const Run& run) {
  const dedup::DedupFilter& filter = owned.filter;
  nlohmann::json j;
  j["trace"] = o.trace;
  j["traces"] = o.traces;
  if (o.shard_count)
    j["shard"] = {{"index", o.shard_index},
                  {"count", o.shard_count},
                  {"hash", "(XXH3-64(key bytes, seed 0x616765626c6f6f6d) * count) >> 64"},
                  {"packets_outside", run.outside_shard}};
  j["packets"] = run.packets;
  j["snapped"] = run.snapped;  // records shorter than on the wire (the capture's snap length)
  j["keyed"] = run.keyed;
  j["unparsed"] = run.packets - run.keyed - run.bpf_unmatched;
  if (!o.dedup.bpf.empty()) j["bpf"] = {{"expression", o.dedup.bpf}, {"unmatched", run.bpf_unmatched}};
  j["suppressed"] = run.suppressed;
  j["passed"] = run.packets - run.suppressed;
  j["backend"] = run.gpu ? "gpu" : "cpu";
  if (run.gpu) {
    j["gpu"] = {{"device", gpu::gpu_description()},
                {"device_seconds", run.gpu_stats.device_seconds},
                {"batches", run.gpu_stats.batches}};
  } else if (o.backend == Backend::automatic) {
    j["gpu_not_used"] = run.gpu_why_not;
  }
  j["seconds"] = run.seconds;
  j["keys_per_second"] = run.seconds > 0 ? run.keyed / run.seconds : 0.0;
  j["packets_per_second"] = run.seconds > 0 ? run.packets / run.seconds : 0.0;
  j["key"] = dedup::key_mode_name(o.dedup.mode);
  j["policy"] = dedup::policy_name(o.dedup.policy);
  // Hexadecimal, as --seed takes it and the text report prints it.
  char seed[24];
  std::snprintf(seed, sizeof seed, "%llx", static_cast<unsigned long long>(o.dedup.seed));
  j["seed"] = seed;
  j["time_regressions"] = run.time_regressions;
  j["bad_timestamps"] = run.bad_timestamps;
  j["guarantee"] = guarantee_text(o, filter);
  j["filter"] = {{"name", filter.name()},
                 {"parameters", filter.parameters()},
                 {"bytes", owned.bytes},
                 {"window", o.dedup.spec.window.span},
                 {"window_kind", o.dedup.spec.window.is_time() ? "time_ns" : "count"},
                 {"slack", filter.slack()},
                 {"model_fpr", filter.model_fpr()},
                 {"bits_per_item", filter.bits_per_item()}};
  for (const auto& [name, value] : filter.stats()) j["filter"]["stats"][name] = value;
  nlohmann::json rj = nlohmann::json::object();
  for (size_t i = 0; i < run.reasons.size(); ++i)
    if (run.reasons[i] && i != 0) rj[pk::reason_name(static_cast<pk::Reason>(i))] = run.reasons[i];
  j["unparsed_reasons"] = rj;
  if (o.truth) {
    const Truth& t = run.truth;
    j["truth_duplicates"] = t.duplicates;
    j["live_fnr"] = ratio(t.live_misses, t.duplicates);
    j["fpr"] = ratio(t.first_positives, t.firsts);
    j["expired_positive_rate"] = ratio(t.expired_positives, t.expired);
    j["first_occurrences"] = t.firsts;
    j["expired_occurrences"] = t.expired;
    j["uninserted_occurrences"] = t.uninserted;
    j["uninserted_positive_rate"] = ratio(t.uninserted_positives, t.uninserted);
    j["distinct_keys"] = t.last.size();
    // The counts behind the rates: a rate of 1e-5 says little without how
    // many packets it was (#13).
    j["live_misses"] = t.live_misses;
    j["first_positives"] = t.first_positives;
    j["uninserted_positives"] = t.uninserted_positives;
    j["expired_positives"] = t.expired_positives;  // slack_suppressed + stale_positives
    j["slack_suppressed"] = t.slack_positives;
    j["stale_positives"] = t.stale_positives;
    j["oldest_remembered"] = t.oldest_remembered;
    j["false_positives"] = t.first_positives + t.uninserted_positives + t.stale_positives;
  }
  if (std::string note = dedup::DedupFilter::auto_note(o.dedup.spec, filter); !note.empty()) j["auto_note"] = note;
  if (run.series) {
    j["plot"] = {{"png", o.plot},
                 {"csv", o.plot_csv},
                 {"bins", run.series->bins()},
                 {"bin_seconds", run.series->width_seconds()}};
    if (!run.plot_error.empty()) j["plot"]["error"] = run.plot_error;
  }
  if (o.dedup.decide == dedup::Decide::penalties) {
    const PenaltyTally& p = run.penalty;
    nlohmann::json pj = {{"decide", "penalties"},
                         {"penalty_fp", o.dedup.penalties.fp},
                         {"penalty_fn", o.dedup.penalties.fn},
                         {"prior", o.dedup.prior},
                         {"expected_penalty", p.expected},
                         {"standard_suppressed", p.standard_suppressed}};
    if (!o.dedup.penalty_param.empty()) {
      pj["penalty_param"] = o.dedup.penalty_param;
      pj["fn_from_param"] = p.fn_from_param;
    }
    if (o.truth) {
      pj["realised_penalty"] = p.realised;
      pj["realised_penalty_standard"] = p.realised_standard;
      pj["penalty_ratio_standard_to_inferential"] = p.realised > 0 ? p.realised_standard / p.realised : 0.0;
    }
    j["penalties"] = pj;
  }
  return j;
}

// The plot's title: enough to tell plots apart and to redo the run.
std::string plot_title(const Options& o, const dedup::DedupFilter& filter) {
  char seed[24];
  std::snprintf(seed, sizeof seed, "%llx", static_cast<unsigned long long>(o.dedup.seed));
  std::string names;
  for (const std::string& t : o.traces) names += (names.empty() ? "" : ", ") + t.substr(t.rfind('/') + 1);
  return names + ": --key " + dedup::key_mode_name(o.dedup.mode) + ", " +
         filter.name() + ", window " + window_text(o.dedup.spec.window) +
         ", " + dedup::policy_name(o.dedup.policy) + ", seed " + seed;
}

void print_text(const Options& o, const OwnedFilter& owned, const Run& run, const nlohmann::json& j) {
  const dedup::DedupFilter& filter = owned.filter;
  std::printf("%s: %llu packets, %llu keyed by %s, %llu suppressed, %llu passed (%llu unparsed)\n",
              o.trace.c_str(), static_cast<unsigned long long>(run.packets),
              static_cast<unsigned long long>(run.keyed), dedup::key_mode_name(o.dedup.mode),
              static_cast<unsigned long long>(run.suppressed),
              static_cast<unsigned long long>(run.packets - run.suppressed),
              static_cast<unsigned long long>(run.packets - run.keyed - run.bpf_unmatched));
  if (o.shard_count)
    std::printf("  shard %u of %u (0 to %u): the traces' other %llu packets are other shards' keys\n", o.shard_index,
                o.shard_count, o.shard_count - 1, static_cast<unsigned long long>(run.outside_shard));
  if (!o.dedup.bpf.empty())
    std::printf("  --bpf %s: %llu packets did not match and passed untouched\n", pk::BpfFilter::shown(o.dedup.bpf).c_str(),
                static_cast<unsigned long long>(run.bpf_unmatched));
  // Unparsed packets by reason: a capture whose link layer or mode keys
  // nothing must say why, not just "unparsed".
  std::string why;
  for (size_t i = 1; i < run.reasons.size(); ++i)
    if (run.reasons[i])
      why += (why.empty() ? "" : ", ") + std::string(pk::reason_name(static_cast<pk::Reason>(i))) + " " +
             std::to_string(run.reasons[i]);
  if (!why.empty()) std::printf("  unparsed by reason: %s\n", why.c_str());
  const std::string window = window_text(o.dedup.spec.window);
  std::printf("  filter %s (%s), %zu bytes, window %s, model FPR %.4g, policy %s, seed %llx (--seed %llx repeats "
              "this run)\n",
              filter.name().c_str(), filter.parameters().c_str(), owned.bytes, window.c_str(), filter.model_fpr(),
              dedup::policy_name(o.dedup.policy), static_cast<unsigned long long>(o.dedup.seed),
              static_cast<unsigned long long>(o.dedup.seed));
  std::printf("  replayed in %.4g s on the %s: %.0f packets/s, %.0f ns per packet", run.seconds, run.gpu ? "GPU" : "CPU",
              j["packets_per_second"].get<double>(), run.packets ? run.seconds * 1e9 / run.packets : 0.0);
  if (run.gpu) std::printf(" (GPU device time %.4g s)", run.gpu_stats.device_seconds);
  std::printf("\n");
  if (run.time_regressions)
    std::printf("  %llu packets stepped back in time: the clock was held at the latest timestamp\n",
                static_cast<unsigned long long>(run.time_regressions));
  std::printf("  guarantee: %s\n", j["guarantee"].get<std::string>().c_str());
  if (j.contains("auto_note")) std::printf("  note: %s\n", j["auto_note"].get<std::string>().c_str());
  // A flood past the rate the filter was sized for, said in the report itself
  // (the JSON has the counts in filter.stats).
  if (const uint64_t early = filter.early_rotations())
    std::printf("  FLOOD: %llu epochs ended early, each at the %llu insertions it was sized for (--on-flood keep-fpr): "
                "the FPR stayed at the model and the window shrank, so repeats older than it passed%s\n",
                static_cast<unsigned long long>(early),
                static_cast<unsigned long long>(filter.design_insertions_per_epoch()),
                o.truth ? " (the live FNR below)" : "; --truth counts them");
  if (const uint64_t over = filter.overloaded_epochs())
    std::printf("  FLOOD: %llu epochs took more than the %llu insertions they were sized for (--on-flood "
                "keep-window): every key of the window was kept, the FPR ran above the model in them\n",
                static_cast<unsigned long long>(over),
                static_cast<unsigned long long>(filter.design_insertions_per_epoch()));
  if (const uint64_t sat = filter.saturations())
    std::printf("  WARNING: the filter's memory budget was exhausted %llu times (shifts skipped): every key of the "
                "window was kept, its FPR ran above the model meanwhile; raise --mem\n",
                static_cast<unsigned long long>(sat));
  if (const auto sticky = filter.sticky(); sticky.saturated || sticky.ring_overflows) {
    // The counting filter's promise of nothing past the window, broken where
    // its guarantee says: counters that will never be decremented.
    std::string what;
    if (sticky.saturated)
      what = std::to_string(sticky.saturated) + " insertions left a counter saturated (a key repeated past its " +
             std::to_string(CountingConfig::kCellBits) + "-bit range)";
    if (sticky.ring_overflows)
      what += std::string(what.empty() ? "" : " and ") + std::to_string(sticky.ring_overflows) +
              " found the hash ring full (more insertions per window than its " +
              std::to_string(sticky.ring_slots) + " slots: raise --capacity)";
    std::printf("  WARNING: %s: their counters are never decremented, so keys may be remembered past the window "
                "(false positives, never false negatives)\n", what.c_str());
  }
  if (o.truth) {
    // Counts with their rates: what was wrongly suppressed, what the slack
    // suppressed, and the live repeats passed, which only a structure with
    // false negatives by design may have.
    const Truth& t = run.truth;
    auto u = [](uint64_t v) { return static_cast<unsigned long long>(v); };
    const char* passing = o.dedup.decide == dedup::Decide::penalties ? ", penalty decisions may pass them"
                          : info(filter.structure()).false_negatives ? ", false negatives by design"
                          : filter.early_rotations()                 ? ", passed by the epochs the flood ended early"
                                                                      : "; must be 0";
    std::printf("  truth: %llu packets repeat a key within the window: %llu suppressed, %llu passed (live FNR %.4g%s)\n",
                u(t.duplicates), u(t.duplicates - t.live_misses), u(t.live_misses), j["live_fnr"].get<double>(),
                passing);
    const Window& w = o.dedup.spec.window;
    const bool bounded = t.bound != Truth::kNever;
    const std::string bound = bounded ? span_text(w, t.bound) : std::string();
    std::printf("  truth: %llu packets wrongly suppressed (false positives): %llu of %llu first sightings (FPR %.4g)",
                u(j["false_positives"].get<uint64_t>()), u(t.first_positives), u(t.firsts), j["fpr"].get<double>());
    if (t.uninserted)
      std::printf(", %llu of %llu sightings of keys never inserted (rate %.4g)", u(t.uninserted_positives),
                  u(t.uninserted), j["uninserted_positive_rate"].get<double>());
    if (t.stale_positives)
      std::printf(", %llu expired keys older than the guarantee's %s", u(t.stale_positives), bound.c_str());
    if (bounded)
      std::printf("\n  truth: %llu packets suppressed because of the slack (expired keys remembered, as promised, "
                  "for up to %s)", u(t.slack_positives), bound.c_str());
    else
      std::printf("\n  truth: %llu packets suppressed after the window (%s keeps no window)", u(t.slack_positives),
                  filter.name().c_str());
    std::printf("; expired positive rate %.4g (%llu of %llu expired sightings)", j["expired_positive_rate"].get<double>(),
                u(t.expired_positives), u(t.expired));
    if (t.expired_positives)
      std::printf(", the oldest remembered %s after its last insertion", span_text(w, t.oldest_remembered).c_str());
    std::printf("\n");
  }
  if (run.series)
    std::printf("  plot: %s%s, %zu bins of %.4g s of packet time, drawn from %s\n", o.plot.c_str(),
                run.plot_error.empty() ? "" : " (not drawn)", run.series->bins(), run.series->width_seconds(),
                o.plot_csv.c_str());
  if (o.dedup.decide == dedup::Decide::penalties) {
    const PenaltyTally& p = run.penalty;
    std::printf("  penalties ($FP %g, $FN %g%s%s, prior %.4g): expected %.6g; the filter's yes/no would have "
                "suppressed %llu\n",
                o.dedup.penalties.fp, o.dedup.penalties.fn, o.dedup.penalty_param.empty() ? "" : " or --penalty-param ",
                o.dedup.penalty_param.c_str(), o.dedup.prior, p.expected,
                static_cast<unsigned long long>(p.standard_suppressed));
    if (o.truth) {
      // The ratio only where it is one: no penalty realised leaves nothing to divide by.
      char ratio[48] = "no ratio: no penalty realised by penalties";
      if (p.realised > 0) std::snprintf(ratio, sizeof ratio, "ratio %.3f", p.realised_standard / p.realised);
      std::printf("  realised penalty: %.6g by penalties, %.6g by the filter's yes/no (%s)\n", p.realised,
                  p.realised_standard, ratio);
    }
  }
}

// --split N: one pass over the traces, each packet written to its shard's
// piece, so that N replays (--shard I/N over piece I of every trace) each
// read only their own keys. Returns the exit code.
int split(const Options& o) {
  Input in;
  if (!open_input(o, in)) return 1;
  tools::MergedTraces& input = in.traces;
  // With stdio's few KiB per write call, the split spent more time in write
  // calls than in all the rest; 128 KiB a piece (64 MiB for the most pieces)
  // saves most of them.
  // Declared before the writers, which flush into them until they close.
  constexpr size_t kPieceBuffer = size_t{128} << 10;
  std::vector<std::unique_ptr<char[]>> buffers(o.split_count);
  std::vector<trace::PcapWriter> pieces(o.split_count);
  std::vector<uint64_t> counts(o.split_count, 0);
  for (uint32_t i = 0; i < o.split_count; ++i) {
    buffers[i] = std::make_unique_for_overwrite<char[]>(kPieceBuffer);
    if (std::string e = pieces[i].open(o.piece(i), input.linktype(), buffers[i].get(), kPieceBuffer); !e.empty()) {
      std::fprintf(stderr, "agebloom-replay: --split: %s\n", e.c_str());
      return 1;
    }
  }
  tools::Progress progress(o.progress && isatty(STDERR_FILENO), in.offsets);
  auto keying = std::make_unique<Keying>(o, in.bpf);
  const auto start = std::chrono::steady_clock::now();
  trace::Packet pkt;
  uint64_t packets = 0, time_regressions = 0, latest = 0;
  PastPcapTime past;
  trace::PcapReader::Status st;
  while ((st = input.next(pkt)) == trace::PcapReader::Status::ok) {
    keying->take(pkt);
    // The stream's own steps back, as one replay counts them (keyed packets
    // only: the clock is a keyed packet's); the shards' replays see only
    // theirs (agebloom-cluster reports both).
    if (keying->keyed()) {
      if (pkt.timestamp_ns < latest) ++time_regressions;
      else latest = pkt.timestamp_ns;
    }
    const uint32_t s = keying->shard(o.split_count);
    pieces[s].write(pkt);
    past.note(pkt);
    ++counts[s];
    progress.tick(++packets);
  }
  progress.finish(packets);
  past.say("the --split pieces");
  int rc = 0;
  for (trace::PcapWriter& w : pieces)
    if (std::string e = w.close(); !e.empty()) {
      std::fprintf(stderr, "agebloom-replay: --split: %s\n", e.c_str());
      rc = 1;
    }
  if (st == trace::PcapReader::Status::error) {
    std::fprintf(stderr, "agebloom-replay: --split: read error after %llu packets: %s\n",
                 static_cast<unsigned long long>(packets), input.error().c_str());
    rc = 1;
  }
  if (input.bad_timestamps())
    std::fprintf(stderr, "agebloom-replay: warning: %s: %llu records skipped, their timestamps out of range (in no "
                 "piece)\n", o.trace.c_str(), static_cast<unsigned long long>(input.bad_timestamps()));
  if (rc != 0) return rc;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const char* dlt_name = pcap_datalink_val_to_name(static_cast<int>(input.linktype()));
  if (o.json) {
    nlohmann::json j;
    j["traces"] = o.traces;
    j["split"] = o.split_count;
    j["key"] = dedup::key_mode_name(o.dedup.mode);
    j["linktype"] = input.linktype();
    j["linktype_name"] = dlt_name ? dlt_name : "";
    j["packets"] = packets;
    j["bad_timestamps"] = input.bad_timestamps();
    j["time_regressions"] = time_regressions;
    j["seconds"] = seconds;
    j["packets_per_second"] = seconds > 0 ? packets / seconds : 0.0;
    j["pieces"] = nlohmann::json::array();
    for (uint32_t i = 0; i < o.split_count; ++i)
      j["pieces"].push_back({{"shard", i}, {"file", o.piece(i)}, {"packets", counts[i]}});
    std::printf("%s\n", tools::json_text(j).c_str());
  } else {
    std::printf("%s: %llu packets split by %s key into %u pieces in %.4g s (%.0f packets/s): %s0.pcap to %s%u.pcap\n",
                o.trace.c_str(), static_cast<unsigned long long>(packets), dedup::key_mode_name(o.dedup.mode),
                o.split_count, seconds, seconds > 0 ? packets / seconds : 0.0, o.split_prefix.c_str(),
                o.split_prefix.c_str(), o.split_count - 1);
    std::string line;
    for (uint32_t i = 0; i < o.split_count; ++i)
      line += (i ? ", " : "") + std::to_string(i) + ": " + std::to_string(counts[i]);
    std::printf("  packets per shard: %s\n", line.c_str());
  }
  if (std::fflush(stdout) != 0) {
    std::fprintf(stderr, "agebloom-replay: cannot write the report: %s\n", std::strerror(errno));
    clearerr(stdout);  // said: not again at exit
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  dedup::check_stdout_at_exit("agebloom-replay");
  const Options o = parse(argc, argv);
  if (o.split_count && !o.check) return split(o);

  auto planned = dedup::DedupFilter::plan(o.dedup.spec);
  if (auto* err = std::get_if<std::string>(&planned)) bad("filter: " + *err);
  if (o.check) {  // the plan is checked; the filter is not made (it may be large)
    if (o.dedup.decide == dedup::Decide::penalties)
      if (std::string err = std::get<dedup::DedupFilter>(planned).enable_posteriors(); !err.empty()) bad(err);
    // --backend gpu with what the GPU cannot replay is a bad option wherever
    // it runs; whether a device is there is the replaying machine's to say
    // (a cluster's workers, not this one).
    if (o.backend == Backend::gpu)
      if (std::string r = gpu_refusal(o, std::get<dedup::DedupFilter>(planned)); !r.empty()) bad("--backend gpu: " + r);
    // The traces given are opened (headers, link types, --bpf for them), not replayed.
    Input in;
    if (!o.traces.empty() && !open_input(o, in)) return 1;
    return 0;
  }
  OwnedFilter owned(std::move(std::get<dedup::DedupFilter>(planned)));
  if (o.dedup.decide == dedup::Decide::penalties)
    if (std::string err = owned.filter.enable_posteriors(); !err.empty()) bad(err);

  Run run;
  run.gpu = choose_gpu(o, owned.filter, run.gpu_why_not);
  if (!o.plot.empty()) run.series = std::make_unique<tools::PlotSeries>();
  if (!info(owned.filter.structure()).false_negatives) {
    const uint64_t span = o.dedup.spec.window.span, slack = owned.filter.slack();
    run.truth.bound = span + slack < span ? Truth::kNever : span + slack;
  }

  Input in;
  if (!open_input(o, in)) return 1;
  tools::Progress progress(o.progress && isatty(STDERR_FILENO), in.offsets);
  int rc = replay(o, owned, in.traces, in.bpf, progress, run);
  const uint64_t unparsed = run.packets - run.keyed - run.bpf_unmatched;
  // Click keys only requests, so most packets of any capture have none:
  // there the cut records alone are worth a line. These go to standard error
  // under --json too (its object on standard output carries the figures,
  // unparsed_reasons and snapped): a run that keyed little says so either way.
  if (o.dedup.mode == pk::KeyMode::click && run.snapped)
    std::fprintf(stderr, "agebloom-replay: note: %llu packets were cut short by the capture's snap length (at most "
                 "%u bytes kept); a click key needs its request line captured (%s)\n",
                 static_cast<unsigned long long>(run.snapped), run.snapped_caplen,
                 snapped_key_needs(pk::KeyMode::click));
  // Most packets unkeyed: say so (click keys only requests, so not there).
  if (o.dedup.mode != pk::KeyMode::click && unparsed * 2 > run.packets - run.bpf_unmatched &&
      run.packets > run.bpf_unmatched)
  {
    std::string why = "is the key mode or the capture's link layer the one intended?";
    if (run.snapped)
      why = std::to_string(run.snapped) + " packets were cut short by the capture's snap length (at most " +
            std::to_string(run.snapped_caplen) + " bytes kept), and a key's bytes must be captured (" +
            snapped_key_needs(o.dedup.mode) + "); " + why;
    std::fprintf(stderr, "agebloom-replay: warning: %llu of %llu packets have no %s key (reasons in the report): %s\n",
                 static_cast<unsigned long long>(unparsed),
                 static_cast<unsigned long long>(run.packets - run.bpf_unmatched), dedup::key_mode_name(o.dedup.mode),
                 why.c_str());
  }
  // Click: not one key in the whole run (no HTTP request on --click-ports,
  // none with --click-param) is a run that measured nothing: said, as above.
  if (o.dedup.mode == pk::KeyMode::click && run.keyed == 0 && run.packets > run.bpf_unmatched)
    std::fprintf(stderr, "agebloom-replay: warning: none of %llu packets has a click key (reasons in the report): "
                 "a click is an HTTP request on --click-ports%s\n",
                 static_cast<unsigned long long>(run.packets - run.bpf_unmatched),
                 o.dedup.click_param.empty() ? "" : " carrying --click-param's parameter");
  if (rc != 0 && run.read_error.empty()) return rc;  // the GPU failed: nothing trustworthy to report
  if (!o.verdicts.empty() && !write_verdicts(o.verdicts, run.verdict_bits)) return 1;
  if ((!o.write_passed.empty() || !o.write_suppressed.empty()) && !write_pcaps(o, in.bpf, in.ids, run)) return 1;
  if (run.series) {
    // The CSV first: without matplotlib the series is still there to draw.
    run.plot_error = run.series->write_csv(o.plot_csv, o.truth);
    if (run.plot_error.empty()) run.plot_error = tools::draw_plot("replay.py", o.plot_csv, o.plot, {plot_title(o, owned.filter)});
  }

  nlohmann::json j = report(o, owned, run);
  if (!run.read_error.empty()) {
    j["complete"] = false;
    j["read_error"] = run.read_error;
  }
  if (o.json) std::printf("%s\n", tools::json_text(j).c_str());
  else print_text(o, owned, run, j);
  if (std::fflush(stdout) != 0) {
    std::fprintf(stderr, "agebloom-replay: cannot write the report: %s\n", std::strerror(errno));
    clearerr(stdout);  // said: not again at exit
    return 1;
  }
  if (!run.plot_error.empty()) {
    std::fprintf(stderr, "agebloom-replay: --plot %s not drawn: %s\n", o.plot.c_str(), run.plot_error.c_str());
    if (rc == 0) rc = 1;
  }
  if (!run.read_error.empty()) {
    std::fprintf(stderr, "agebloom-replay: %s: read error after %llu packets (the report covers those): %s\n",
                 o.trace.c_str(), static_cast<unsigned long long>(run.packets), run.read_error.c_str());
    return 1;
  }
  return rc;
}
