#include "options.hpp"

#include <getopt.h>
#include <rte_version.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <vector>

#include "agebloom/dedup/key_mode.hpp"
#include "agebloom/dedup/filter_options.hpp"
#include "agebloom/trace/same_file.hpp"

namespace dedup_fwd {

namespace ab = agebloom;

const char* action_name(Action a) noexcept {
  switch (a) {
    case Action::drop: return "drop";
    case Action::mirror: return "mirror";
    case Action::count: return "count";
  }
  return "?";
}

namespace {

void usage(FILE* out) {
  std::fprintf(out,
      "usage: dedup_fwd [EAL options] -- [options]\n"
      "Forwards unique packets and suppresses recent duplicates of a key.\n"
      "\n"
      "%s"
      "  --action drop|mirror:PORT|count duplicates: free them (default), send them out of\n"
      "                                  PORT, or forward them and only count\n"
      "  --portmask HEX                  ports to use (default: all); paired 0<->1, 2<->3...\n"
      "  --same-port                     send packets back out of the port they came in on\n"
      "                                  (the default when only one port is used)\n"
      "  --stats-interval S              seconds between stats lines, 0 = none (default 10)\n"
      "  --stats-json FILE               write totals, per-lcore figures and the filter at exit\n"
      "  --max-packets N                 stop after receiving N packets\n"
      "  --exit-on-idle MS               stop once no packet arrived for MS milliseconds\n"
      "  --mbufs N                       size of the mbuf pool (default: what the rings and\n"
      "                                  bursts need, at least 8192); raise it for PMDs that\n"
      "                                  hold packets themselves, e.g. net_pcap infinite_rx\n"
      "  --time-source tsc|rx-timestamp  clock of --ttl windows (default tsc); rx-timestamp\n"
      "                                  uses the PMD's timestamp (net_pcap: the capture's)\n"
      "  --snapshot FILE                 keep the window across restarts: restore every lcore's\n"
      "                                  filter from FILE at start, save it there periodically and\n"
      "                                  at exit (written atomically; a refused one starts empty)\n"
      "  --snapshot-interval S           seconds between saves, 0 = at exit only (default 60)\n"
      "  --require-snapshot              a missing or refused snapshot is an error (exit 1)\n"
      "  --help                          this text (also before the \"--\": no DPDK is started)\n"
      "EAL options (before the \"--\"): DPDK 22.11's, e.g. -l 0-3 (lcores), -a PCI (a NIC),\n"
      "  --vdev net_pcap0,rx_pcap=in.pcap,tx_pcap=out.pcap, --no-huge -m 512;\n"
      "  'dedup_fwd --help-eal' lists them all (it starts the EAL's option parser).\n"
      "Exit codes: 0 done, 1 run-time failure, 2 bad options or a device that cannot be used,\n"
      "3 done but the input was damaged (input errors, with --exit-on-idle).\n",
      ab::dedup::FilterOptions::help().c_str());
}

[[noreturn]] void bad(const std::string& msg) {
  std::fprintf(stderr, "dedup_fwd: %s\ntry 'dedup_fwd [EAL options] -- --help'\n", msg.c_str());
  std::exit(2);
}

// An output file is checked when parsed, before any port is touched, not
// found out at exit after the whole run: its folder must exist and take a
// new file, or the file itself must be writable.
void check_writable(const char* option, const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  const bool exists = access(path.c_str(), F_OK) == 0;
  struct stat st;
  if (exists && stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) bad(std::string(option) + " " + path + ": is a folder");
  if (exists ? access(path.c_str(), W_OK) != 0 : access(dir.c_str(), W_OK | X_OK) != 0)
    bad(std::string(option) + " " + path + ": cannot write " + (exists ? path : "into " + dir) + ": " +
        std::strerror(errno));
}

using ab::dedup::parse_u64;

// --snapshot's file, as it will be written: a temporary beside it renamed
// over it. So a symbolic link is followed to the file it names (the rename
// would replace the link itself, and the file behind it would never be
// written), and anything but a regular file is refused: a rename over a
// device (/dev/null, as root) replaced the device, and a FIFO blocked the
// restore's read.
std::string snapshot_path(const std::string& given) {
  std::error_code ec;
  const std::string path =
      std::filesystem::is_symlink(given, ec) ? agebloom::trace::link_target(given).string() : given;
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
    bad("--snapshot " + given + ": not a regular file (a snapshot is written beside it and renamed over it): "
        "give a file's name");
  return path;
}

// The option codes past getopt's characters (FilterOptions' own come after).
enum {
  kAction = 256, kPortmask, kSamePort, kStatsInterval, kStatsJson, kMaxPackets,
  kExitOnIdle, kMbufs, kTimeSource, kSnapshot, kSnapshotInterval, kRequireSnapshot, kHelp
};

// dedup_fwd's own options (after "--"), the shared filter options included;
// the last entry is getopt's terminator.
std::vector<option> app_options() {
  std::vector<option> longopts = {
      {"action", required_argument, nullptr, kAction},
      {"portmask", required_argument, nullptr, kPortmask},
      {"same-port", no_argument, nullptr, kSamePort},
      {"stats-interval", required_argument, nullptr, kStatsInterval},
      {"stats-json", required_argument, nullptr, kStatsJson},
      {"max-packets", required_argument, nullptr, kMaxPackets},
      {"exit-on-idle", required_argument, nullptr, kExitOnIdle},
      {"mbufs", required_argument, nullptr, kMbufs},
      {"time-source", required_argument, nullptr, kTimeSource},
      {"snapshot", required_argument, nullptr, kSnapshot},
      {"snapshot-interval", required_argument, nullptr, kSnapshotInterval},
      {"require-snapshot", no_argument, nullptr, kRequireSnapshot},
      {"help", no_argument, nullptr, kHelp}};
  ab::dedup::FilterOptions::append_to(longopts);
  longopts.push_back({nullptr, 0, nullptr, 0});
  return longopts;
}

}  // namespace

void print_usage(FILE* out) { usage(out); }

void print_version() { ab::dedup::print_version(stdout, "dedup_fwd", std::string("(") + rte_version() + ")"); }

bool is_app_option(const char* arg) {
  if (std::strncmp(arg, "--", 2) != 0) return false;
  const char* name = arg + 2;
  const size_t len = std::strcspn(name, "=");
  for (const option& opt : app_options())
    if (opt.name != nullptr && std::strlen(opt.name) == len && std::strncmp(opt.name, name, len) == 0 &&
        std::strcmp(opt.name, "help") != 0)
      return true;
  return false;
}

Options parse_options(int argc, char** argv) {
  Options o;
  ab::dedup::FilterOptions shared;  // --key, --filter, --window/--ttl, --capacity, --fpr, --policy, --seed, ...
  bool have_time_source = false, have_snapshot_interval = false;
  std::vector<option> longopts = app_options();

  // rte_eal_init already ran getopt over the EAL part: start afresh.
  optind = 1;
  opterr = 0;
  int c, longindex = -1;
  ab::dedup::RepeatCheck repeats(longopts.data());
  while ((c = getopt_long(argc, argv, "h", longopts.data(), &longindex)) != -1) {
    const std::string arg = optarg ? optarg : "";
    std::string error = repeats.check(c, longindex, optarg);
    longindex = -1;
    if (!error.empty()) bad(error);
    if (shared.take(c, optarg, error)) {
      if (!error.empty()) bad(error);
      if (shared.version) {  // at once, as --help: the options after it are not read
        print_version();
        std::exit(0);
      }
      continue;
    }
    switch (c) {
      case kAction:
        if (arg == "drop") {
          o.action = Action::drop;
        } else if (arg == "count") {
          o.action = Action::count;
        } else if (arg.rfind("mirror:", 0) == 0) {
          uint64_t p;
          // A port id indexes per-port arrays and a 64-bit --portmask: below RTE_MAX_ETHPORTS.
          if (!parse_u64(arg.c_str() + 7, p) || p >= RTE_MAX_ETHPORTS)
            bad("--action mirror:PORT needs a port number from 0 to " + std::to_string(RTE_MAX_ETHPORTS - 1) +
                ", not '" + arg + "'");
          o.action = Action::mirror;
          o.mirror_port = static_cast<uint16_t>(p);
        } else {
          bad("--action must be drop, mirror:PORT or count, not '" + arg + "'");
        }
        break;
      case kPortmask:
        if (!parse_u64(optarg, o.portmask, 16) || o.portmask == 0)
          bad("--portmask needs a non-zero hexadecimal mask, not '" + arg + "'");
        break;
      case kSamePort: o.same_port = true; break;
      case kStatsInterval: {
        uint64_t s;
        if (!parse_u64(optarg, s) || s > 86400) bad("--stats-interval needs whole seconds from 0 to 86400, not '" + arg + "'");
        o.stats_interval_s = static_cast<unsigned>(s);
        break;
      }
      case kStatsJson:
        if (arg.empty()) bad("--stats-json needs a file name");
        check_writable("--stats-json", arg);
        o.stats_json = arg;
        break;
      case kSnapshot:
        if (arg.empty()) bad("--snapshot needs a file name");
        o.snapshot = snapshot_path(arg);
        check_writable("--snapshot", o.snapshot);
        break;
      case kSnapshotInterval: {
        uint64_t s;
        if (!parse_u64(optarg, s) || s > 86400) bad("--snapshot-interval needs whole seconds from 0 to 86400, not '" + arg + "'");
        o.snapshot_interval_s = static_cast<unsigned>(s);
        have_snapshot_interval = true;
        break;
      }
      case kRequireSnapshot: o.require_snapshot = true; break;
      case kMaxPackets:
        if (!parse_u64(optarg, o.max_packets) || o.max_packets == 0)
          bad(agebloom::dedup::count_refused("--max-packets", arg));
        break;
      case kExitOnIdle:
        if (!parse_u64(optarg, o.exit_on_idle_ms) || o.exit_on_idle_ms == 0 || o.exit_on_idle_ms > 86'400'000)
          bad("--exit-on-idle needs milliseconds from 1 to 86400000, not '" + arg + "'");
        break;
      case kMbufs:
        // The pool's ring holds a power of two above the count, at most
        // 2^31 - 1 entries (RTE_RING_SZ_MASK): 2^30 mbufs would need 2^31,
        // refused after the EAL had started (exit 1), so the limit is here.
        if (!parse_u64(optarg, o.mbufs) || o.mbufs < 1024 || o.mbufs > (uint64_t{1} << 30) - 1)
          bad("--mbufs needs a count from 1024 to 1073741823 (2^30 - 1), not '" + arg + "'");
        break;
      case kTimeSource:
        if (arg == "tsc") o.time_source = TimeSource::tsc;
        else if (arg == "rx-timestamp") o.time_source = TimeSource::rx_timestamp;
        else bad("--time-source must be tsc or rx-timestamp, not '" + arg + "'");
        have_time_source = true;
        break;
      case kHelp:
      case 'h': usage(stdout); std::exit(0);
      case ':':
      case '?':
      default:
        bad(std::string("unknown option or missing value: '") + argv[optind - 1] + "'");
    }
  }
  if (optind != argc) bad(std::string("unexpected argument '") + argv[optind] + "'");
  if (shared.list_filters) {
    ab::dedup::print_filter_list(stdout);
    std::exit(0);
  }
  if (std::string e = shared.finish(); !e.empty()) bad(e);
  o.mode = shared.mode;
  o.spec = shared.spec;
  o.mem_bytes = shared.spec.mem_bytes;  // per worker lcore's filter
  o.policy = shared.policy;
  o.seed = shared.seed;
  o.seed_set = shared.seed_set;
  o.click_param = shared.click_param;
  o.click = shared.click;  // --click-ports, --click-host
  o.packet = shared.packet;
  o.vlan_in_key = shared.vlan_in_key;
  o.bpf = shared.bpf;
  o.decide = shared.decide;
  o.penalties = shared.penalties;
  o.prior = shared.prior;
  o.penalty_param = shared.penalty_param;

  // Conflicts: each names both options so the user knows which to drop.
  if (have_time_source && !shared.time_window()) bad("--time-source applies to --ttl windows only");
  if ((have_snapshot_interval || o.require_snapshot) && o.snapshot.empty())
    bad("--snapshot-interval and --require-snapshot need --snapshot FILE");
  if (o.action == Action::mirror && o.same_port) {
    // Allowed: forward back out of the Rx port, mirror duplicates elsewhere.
  }
  if (o.action == Action::mirror && o.portmask && (o.mirror_port >= 64 || !(o.portmask >> o.mirror_port & 1)))
    bad("--action mirror:" + std::to_string(o.mirror_port) + " names a port outside --portmask");

  return o;
}

}  // namespace dedup_fwd
