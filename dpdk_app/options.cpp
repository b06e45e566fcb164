#include "options.hpp"

#include <getopt.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "agebloom/dedup/key_mode.hpp"
#include "agebloom/dedup/spec_options.hpp"

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
      "  --key src-ip|dst-ip|flow|click  what identifies a duplicate (default src-ip);\n"
      "                                  flow = 5-tuple, click = client IP + HTTP request\n"
      "  --click-param NAME              click: key on this query parameter's value only\n"
      "  --click-host                    click: include the Host header in the key\n"
      "  --click-ports P[,P...]|any      click: TCP ports carrying HTTP (default 80,8080)\n"
      "  --filter NAME                   %s (default auto)\n"
      "  --window N                      count window: the last N insertions (default 1000000)\n"
      "  --ttl DURATION                  time window, e.g. 500ms, 60s, 10m\n"
      "  --capacity N                    expected insertions per --ttl (default 1000000)\n"
      "  --fpr P                         target false-positive rate (default 0.01)\n"
      "  --mem MB                        memory budget for each worker lcore's filter\n"
      "  --policy insert-always|insert-on-miss\n"
      "                                  default: insert-on-miss for click, else insert-always\n"
      "  --action drop|mirror:PORT|count duplicates: free them (default), send them out of\n"
      "                                  PORT, or forward them and only count\n"
      "  --portmask HEX                  ports to use (default: all); paired 0<->1, 2<->3...\n"
      "  --same-port                     send packets back out of the port they came in on\n"
      "                                  (the default when only one port is used)\n"
      "  --stats-interval S              seconds between stats lines, 0 = none (default 10)\n"
      "  --stats-json FILE               write totals, per-lcore figures and the filter at exit\n"
      "  --seed HEX                      hash secret (default: random)\n"
      "  --max-packets N                 stop after receiving N packets\n"
      "  --exit-on-idle MS               stop once no packet arrived for MS milliseconds\n"
      "  --mbufs N                       size of the mbuf pool (default: what the rings and\n"
      "                                  bursts need, at least 8192); raise it for PMDs that\n"
      "                                  hold packets themselves, e.g. net_pcap infinite_rx\n"
      "  --time-source tsc|rx-timestamp  clock of --ttl windows (default tsc); rx-timestamp\n"
      "                                  uses the PMD's timestamp (net_pcap: the capture's)\n"
      "  --help\n"
      "Exit codes: 0 done, 1 run-time failure, 2 bad options or a device that cannot be used,\n"
      "3 done but the input was damaged (input errors, with --exit-on-idle).\n",
      ab::dedup::filter_names());
}

[[noreturn]] void bad(const std::string& msg) {
  std::fprintf(stderr, "dedup_fwd: %s\ntry 'dedup_fwd [EAL options] -- --help'\n", msg.c_str());
  std::exit(2);
}

// A shared option parser's answer (agebloom/dedup/spec_options.hpp): fine, or
// the message to exit with.
void must(const std::string& error) {
  if (!error.empty()) bad(error);
}

using ab::dedup::parse_u64;

void parse_click_ports(const std::string& arg, ab::packet::ClickOptions& click) {
  if (arg == "any") {
    click.any_port = true;
    return;
  }
  click.port_count = 0;
  size_t pos = 0;
  while (pos <= arg.size()) {
    const size_t comma = arg.find(',', pos);
    const std::string item = arg.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    uint64_t p;
    if (!parse_u64(item.c_str(), p) || p == 0 || p > 65535)
      bad("--click-ports needs ports 1-65535 separated by commas, or 'any', not '" + arg + "'");
    if (click.port_count == ab::packet::ClickOptions::kMaxPorts)
      bad("--click-ports takes at most " + std::to_string(ab::packet::ClickOptions::kMaxPorts) + " ports");
    click.ports[click.port_count++] = static_cast<uint16_t>(p);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
}

}  // namespace

void print_usage(FILE* out) { usage(out); }

Options parse_options(int argc, char** argv) {
  Options o;
  uint64_t capacity = 1'000'000;
  bool have_window = false, have_ttl = false, have_capacity = false, policy_set = false;
  bool have_time_source = false, have_click_opt = false;
  enum {
    kKey = 256, kClickParam, kClickHost, kClickPorts, kFilter, kWindow, kTtl, kCapacity, kFpr, kMem,
    kPolicy, kAction, kPortmask, kSamePort, kStatsInterval, kStatsJson, kSeed, kMaxPackets,
    kExitOnIdle, kMbufs, kTimeSource, kHelp
  };
  static const option longopts[] = {
      {"key", required_argument, nullptr, kKey},
      {"click-param", required_argument, nullptr, kClickParam},
      {"click-host", no_argument, nullptr, kClickHost},
      {"click-ports", required_argument, nullptr, kClickPorts},
      {"filter", required_argument, nullptr, kFilter},
      {"window", required_argument, nullptr, kWindow},
      {"ttl", required_argument, nullptr, kTtl},
      {"capacity", required_argument, nullptr, kCapacity},
      {"fpr", required_argument, nullptr, kFpr},
      {"mem", required_argument, nullptr, kMem},
      {"policy", required_argument, nullptr, kPolicy},
      {"action", required_argument, nullptr, kAction},
      {"portmask", required_argument, nullptr, kPortmask},
      {"same-port", no_argument, nullptr, kSamePort},
      {"stats-interval", required_argument, nullptr, kStatsInterval},
      {"stats-json", required_argument, nullptr, kStatsJson},
      {"seed", required_argument, nullptr, kSeed},
      {"max-packets", required_argument, nullptr, kMaxPackets},
      {"exit-on-idle", required_argument, nullptr, kExitOnIdle},
      {"mbufs", required_argument, nullptr, kMbufs},
      {"time-source", required_argument, nullptr, kTimeSource},
      {"help", no_argument, nullptr, kHelp},
      {nullptr, 0, nullptr, 0}};

  // rte_eal_init already ran getopt over the EAL part: start afresh.
  optind = 1;
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, "", longopts, nullptr)) != -1) {
    const std::string arg = optarg ? optarg : "";
    switch (c) {
      case kKey:
        if (!ab::dedup::parse_key_mode(arg, o.mode))
          bad("--key must be src-ip, dst-ip, flow or click, not '" + arg + "'");
        break;
      case kClickParam:
        if (arg.empty()) bad("--click-param needs a parameter name");
        o.click_param = arg;
        have_click_opt = true;
        break;
      case kClickHost: o.click.include_host = true; have_click_opt = true; break;
      case kClickPorts: parse_click_ports(arg, o.click); have_click_opt = true; break;
      case kFilter: o.spec.name = arg; break;
      case kWindow:
        must(ab::dedup::parse_window_option(arg, o.spec.window));
        have_window = true;
        break;
      case kTtl:
        must(ab::dedup::parse_ttl_option(arg, o.spec.window));
        have_ttl = true;
        break;
      case kCapacity:
        must(ab::dedup::parse_capacity_option(arg, capacity));
        have_capacity = true;
        break;
      case kFpr: must(ab::dedup::parse_fpr_option(arg, o.spec.fpr)); break;
      case kMem: {
        uint64_t mb;
        if (!parse_u64(optarg, mb) || mb == 0 || mb > (uint64_t{1} << 30))
          bad("--mem needs a positive number of MB, not '" + arg + "'");
        o.mem_bytes = mb << 20;
        break;
      }
      case kPolicy:
        if (!ab::dedup::parse_policy(arg, o.policy)) bad("--policy must be insert-always or insert-on-miss");
        policy_set = true;
        break;
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
        if (!parse_u64(optarg, s) || s > 86400) bad("--stats-interval needs seconds from 0 to 86400, not '" + arg + "'");
        o.stats_interval_s = static_cast<unsigned>(s);
        break;
      }
      case kStatsJson:
        if (arg.empty()) bad("--stats-json needs a file name");
        o.stats_json = arg;
        break;
      case kSeed:
        must(ab::dedup::parse_seed_option(arg, o.seed));
        o.seed_set = true;
        break;
      case kMaxPackets:
        if (!parse_u64(optarg, o.max_packets) || o.max_packets == 0)
          bad("--max-packets needs a positive count, not '" + arg + "'");
        break;
      case kExitOnIdle:
        if (!parse_u64(optarg, o.exit_on_idle_ms) || o.exit_on_idle_ms == 0 || o.exit_on_idle_ms > 86'400'000)
          bad("--exit-on-idle needs milliseconds from 1 to 86400000, not '" + arg + "'");
        break;
      case kMbufs:
        // rte_mempool counts elements in 32 bits; 2^31 mbufs would be ~4 TiB.
        if (!parse_u64(optarg, o.mbufs) || o.mbufs < 1024 || o.mbufs > (uint64_t{1} << 31))
          bad("--mbufs needs a count from 1024 to 2147483648, not '" + arg + "'");
        break;
      case kTimeSource:
        if (arg == "tsc") o.time_source = TimeSource::tsc;
        else if (arg == "rx-timestamp") o.time_source = TimeSource::rx_timestamp;
        else bad("--time-source must be tsc or rx-timestamp, not '" + arg + "'");
        have_time_source = true;
        break;
      case kHelp: usage(stdout); std::exit(0);
      case ':':
      case '?':
      default:
        bad(std::string("unknown option or missing value: '") + argv[optind - 1] + "'");
    }
  }
  if (optind != argc) bad(std::string("unexpected argument '") + argv[optind] + "'");

  // Conflicts: each names both options so the user knows which to drop.
  if (have_window && have_ttl) bad("--window and --ttl exclude each other");
  if (have_capacity && !have_ttl) bad("--capacity applies to --ttl windows only");
  if (have_time_source && !have_ttl) bad("--time-source applies to --ttl windows only");
  if (have_click_opt && o.mode != ab::packet::KeyMode::click)
    bad("--click-param, --click-host and --click-ports need --key click");
  if (o.action == Action::mirror && o.same_port) {
    // Allowed: forward back out of the Rx port, mirror duplicates elsewhere.
  }
  if (o.action == Action::mirror && o.portmask && (o.mirror_port >= 64 || !(o.portmask >> o.mirror_port & 1)))
    bad("--action mirror:" + std::to_string(o.mirror_port) + " names a port outside --portmask");

  if (!have_window && !have_ttl) o.spec.window = ab::Window::count(1'000'000);
  if (have_ttl) o.spec.capacity = capacity;
  if (!policy_set) o.policy = ab::dedup::default_policy(o.mode);
  return o;
}

}  // namespace dedup_fwd
