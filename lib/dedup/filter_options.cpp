// The options every dedup tool shares (filter_options.hpp).
#include "agebloom/dedup/filter_options.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "agebloom/agebloom.h"

#include "agebloom/dedup/dedup_filter.hpp"
#include "agebloom/dedup/key_mode.hpp"
#include "agebloom/registry/structure.hpp"

namespace agebloom::dedup {

bool parse_u64(const std::string& s, uint64_t& out, int base) noexcept {
  if (s.empty() || s[0] == '-' || s[0] == '+' || s[0] == ' ') return false;
  char* end = nullptr;
  errno = 0;
  out = std::strtoull(s.c_str(), &end, base);
  return errno == 0 && end != nullptr && *end == '\0';
}

bool past_u64(const std::string& s, int base) noexcept {
  if (s.empty()) return false;
  for (char c : s) {
    const int digit = c >= '0' && c <= '9'   ? c - '0'
                      : c >= 'a' && c <= 'z' ? c - 'a' + 10
                      : c >= 'A' && c <= 'Z' ? c - 'A' + 10
                                             : 99;
    if (digit >= base) return false;
  }
  errno = 0;
  (void)std::strtoull(s.c_str(), nullptr, base);
  return errno == ERANGE;
}

std::string count_refused(const char* option, const std::string& arg) {
  if (past_u64(arg, 10)) return std::string(option) + " " + arg + " is past 2^64 - 1, the largest count there is";
  return std::string(option) + " needs a positive count, not '" + arg + "'";
}

std::string parse_window_option(const std::string& arg, Window& window) {
  uint64_t w;
  if (!parse_u64(arg, w) || w == 0) return count_refused("--window", arg);
  window = Window::count(w);
  return {};
}

bool parse_number(const std::string& arg, double& out);  // below

std::string parse_ttl_option(const std::string& arg, Window& window) {
  uint64_t ns;
  if (!parse_duration_ns(arg, ns) || ns == 0) {
    // A well-formed duration (a number and a unit parse_duration_ns knows)
    // past what a window holds (1.8e19 ns, under 2^64) is said as such, not
    // as a malformed one.
    const size_t unit_at = arg.find_first_not_of("0123456789.");
    double value = 0;
    const bool well_formed = unit_at != std::string::npos && unit_at > 0 &&
                             parse_number(arg.substr(0, unit_at), value) &&
                             parse_duration_ns(std::string("1").append(arg, unit_at, std::string::npos), ns);
    if (well_formed && value >= 1)
      return "--ttl " + arg + " is longer than a window can be (at most 1.8e19 ns, about 570 years)";
    // A well-formed zero ("0s", "0.0ms") is a window that holds nothing.
    if (well_formed && value == 0) return "--ttl must be longer than 0, not '" + arg + "'";
    return "--ttl needs a duration like 500ms, 60s or 10m, not '" + arg + "'";
  }
  window = Window::time(ns);
  return {};
}

std::string parse_capacity_option(const std::string& arg, uint64_t& capacity) {
  if (!parse_u64(arg, capacity) || capacity == 0) return count_refused("--capacity", arg);
  return {};
}

// A number that is the whole string, in decimal ("0.01", "1e-6"; strtod
// would also take blanks before it and hexadecimal "0x1p-3"); the option's
// own range is checked by its caller.
bool parse_number(const std::string& arg, double& out) {
  // Refused before strtod, 0 as strtod leaves a refusal: callers read `out`.
  if (arg.find_first_of("xX \t\n\v\f\r") != std::string::npos) {
    out = 0.0;
    return false;
  }
  char* end = nullptr;
  out = std::strtod(arg.c_str(), &end);
  return !arg.empty() && end != nullptr && *end == '\0';
}

std::string parse_fpr_option(const std::string& arg, double& fpr) {
  if (!parse_number(arg, fpr) || !(fpr > 0 && fpr < 1))
    return "--fpr must lie strictly between 0 and 1, not '" + arg + "'";
  return {};
}

// "80,8080" or "any" (at most ClickOptions::kMaxPorts ports, each 1..65535).
std::string parse_click_ports(const std::string& arg, packet::ClickOptions& click) {
  if (arg == "any") {
    click.any_port = true;
    return {};
  }
  click.any_port = false;
  click.port_count = 0;
  size_t pos = 0;
  while (pos <= arg.size()) {
    const size_t comma = arg.find(',', pos);
    const std::string item = arg.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    uint64_t p;
    if (!parse_u64(item, p) || p == 0 || p > 65535)
      return "--click-ports needs ports 1-65535 separated by commas, or 'any', not '" + arg + "'";
    if (click.port_count == packet::ClickOptions::kMaxPorts)
      return "--click-ports takes at most " + std::to_string(packet::ClickOptions::kMaxPorts) + " ports";
    click.ports[click.port_count++] = static_cast<uint16_t>(p);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return {};
}

std::string parse_seed_option(const std::string& arg, uint64_t& seed) {
  if (past_u64(arg, 16)) return "--seed " + arg + " is past 2^64 - 1: at most 16 hexadecimal digits";
  if (!parse_u64(arg, seed, 16)) return "--seed needs a hexadecimal number, not '" + arg + "'";
  return {};
}

std::string filter_names() {
  std::string names = "auto";
  for (const StructureInfo& s : kStructures) names += std::string(", ") + s.name;
  return names;
}

std::string parse_filter_option(const std::string& arg, FilterSpec& spec) {
  if (arg == "auto") {
    spec.structure.reset();
    return {};
  }
  const StructureInfo* s = find_structure(arg.data(), arg.size());
  if (s == nullptr) return "--filter: unknown filter '" + arg + "' (choose from: " + filter_names() + ")";
  spec.structure = s->id;
  return {};
}

void print_filter_list(std::FILE* out) {
  for (const StructureInfo& s : kStructures) {
    // auto's size rule (the registry's auto_over_bytes): its choice past a size.
    char over[96] = "";
    if (s.auto_over_bytes)
      std::snprintf(over, sizeof over, "; --filter auto's choice over %llu MiB",
                    static_cast<unsigned long long>(s.auto_over_bytes >> 20));
    const char* chosen = s.auto_candidate ? "; --filter auto's choice" : over;
    std::fprintf(out, "%-22s %-10s %-36s %s%s%s%s [%s]\n", s.name, windows_label(s), s.cost, s.summary,
                 s.gpu ? "; GPU replay" : "", chosen, s.false_negatives ? "; false negatives by design" : "", s.paper);
  }
}

void print_version(std::FILE* out, const char* tool, const std::string& extra) {
  std::fprintf(out, "%s %s%s%s\n", tool, agebloom_version(), extra.empty() ? "" : " ", extra.c_str());
}

std::string RepeatCheck::check(int code, int longindex, const char* optarg) {
  if (longindex < 0 || table_[longindex].has_arg != required_argument || optarg == nullptr) return {};
  const char* name = table_[longindex].name;
  for (const Given& g : given_) {
    if (g.code != code || g.value == optarg) continue;
    // Two filter expressions may have meant both: say how to write that.
    const std::string fix = std::strcmp(name, "bpf") == 0
                                ? "give one expression, e.g. '(" + g.value + ") and (" + optarg + ")'"
                                : "give it once";
    if (std::strcmp(g.name, name) == 0)
      return std::string("--") + name + " given twice ('" + g.value + "', then '" + optarg + "'): " + fix;
    return std::string("--") + g.name + " '" + g.value + "' and --" + name + " '" + optarg +
           "' set the same thing: give one";
  }
  given_.push_back({code, name, optarg});
  return {};
}

bool FilterOptions::changes_plan(int opt) noexcept {
  return opt == kFilter || opt == kWindow || opt == kTtl || opt == kCapacity || opt == kFpr || opt == kListFilters ||
         opt == kVersion ||
         opt == kMem || opt == kMaxNpws || opt == kMaxBitsPerItem || opt == kMaxAccesses || opt == kBlockBits ||
         opt == kKey || opt == kOnFlood;
}

void FilterOptions::append_to(std::vector<option>& table) {
  static const option shared[] = {
      {"key", required_argument, nullptr, kKey},
      {"filter", required_argument, nullptr, kFilter},
      {"window", required_argument, nullptr, kWindow},
      {"ttl", required_argument, nullptr, kTtl},
      {"capacity", required_argument, nullptr, kCapacity},
      {"fpr", required_argument, nullptr, kFpr},
      {"policy", required_argument, nullptr, kPolicy},
      {"seed", required_argument, nullptr, kSeed},
      {"click-param", required_argument, nullptr, kClickParam},
      {"click-host", no_argument, nullptr, kClickHost},
      {"click-ports", required_argument, nullptr, kClickPorts},
      {"list-filters", no_argument, nullptr, kListFilters},
      {"version", no_argument, nullptr, kVersion},
      {"mem", required_argument, nullptr, kMem},
      {"on-flood", required_argument, nullptr, kOnFlood},
      {"decide", required_argument, nullptr, kDecide},
      {"penalty-fp", required_argument, nullptr, kPenaltyFp},
      {"penalty-fn", required_argument, nullptr, kPenaltyFn},
      {"prior", required_argument, nullptr, kPrior},
      {"penalty-param", required_argument, nullptr, kPenaltyParam},
      {"vlan-in-key", no_argument, nullptr, kVlanInKey},
      {"ignore-vlan", no_argument, nullptr, kIgnoreVlan},
      {"ignore-l2", no_argument, nullptr, kIgnoreL2},
      {"packet-bytes", required_argument, nullptr, kPacketBytes},
      {"bpf", required_argument, nullptr, kBpf},
      {"max-npws", required_argument, nullptr, kMaxNpws},
      {"max-bits-per-item", required_argument, nullptr, kMaxBitsPerItem},
      {"max-accesses", required_argument, nullptr, kMaxAccesses},
      {"block-bits", required_argument, nullptr, kBlockBits},
  };
  table.insert(table.end(), std::begin(shared), std::end(shared));
}

std::string FilterOptions::help(bool sizing_only) {
  const std::string sizing = std::string(
         "  --filter NAME                   auto (default: the fewest bits per item among the\n"
         "                                  layouts fastest per packet, any structure when none\n"
         "                                  of them can) or a structure:\n"
         "                                  ") + filter_names().substr(6) + "\n"
         "  --list-filters                  the structures, with paper, windows and cost, and exit\n"
         "  --version                       the version, and exit\n"
         "  --window N                      count window: the last N insertions (default 1000000)\n"
         "  --ttl DURATION                  time window, e.g. 500ms, 60s, 10m\n"
         "  --capacity N                    expected insertions per --ttl; without it auto plans tlbf\n"
         "                                  (it adapts to the rate), a named structure assumes 1000000\n"
         "  --fpr P                         target false-positive rate (default 0.01; 1e-6 for\n"
         "                                  --key packet)\n"
         "  --mem MB                        the filter's memory, in MiB (2^20 bytes; 0.5 allowed): with\n"
         "                                  --fpr a limit; alone, the lowest FPR that fits in it;\n"
         "                                  tlbf: its budget (give --fpr)\n"
         "  --max-npws X                    limit on the peak normalised probability-weighted slack\n"
         "  --max-bits-per-item X           limit on memory per window item\n"
         "  --max-accesses N                limit on expected memory accesses per query\n"
         "  --block-bits B                  B of the blocked structures: 64, 128, 256 or 512 (default 512)\n";
  if (sizing_only)
    return sizing +
           "  --key src-ip|dst-ip|flow|click|packet\n"
           "                                  the tools' key mode: packet plans at --fpr 1e-6 unless\n"
           "                                  --fpr is given or --mem alone sizes by memory\n"
           "  --on-flood keep-window|keep-fpr a --ttl window's flood policy: keep-fpr plans the epochs'\n"
           "                                  capacity trigger (epoch_capacity) the tools build\n"
           "  The tools' other options (--policy, --seed, --packet-bytes, --bpf, --click-*, --decide, ...)\n"
           "  are checked and ignored, with a note: they do not change the plan.\n";
  return std::string(
         "  --key src-ip|dst-ip|flow|click|packet\n"
         "                                  what identifies a duplicate (default src-ip);\n"
         "                                  flow = 5-tuple, click = client IP + HTTP request,\n"
         "                                  packet = the whole frame seen twice (SPAN/TAP copies):\n"
         "                                  the IP packet with TTL/hop limit and IPv4 checksum\n"
         "                                  masked, plus MACs and VLAN IDs (default --fpr 1e-6)\n"
         "  --vlan-in-key                   the VLAN IDs join the key: one 5-tuple in two VLANs\n"
         "                                  is two keys (not with --key packet: it has them)\n"
         "  --ignore-vlan                   packet: leave the VLAN IDs out of the key\n"
         "  --ignore-l2                     packet: leave the MACs and VLAN IDs out of the key\n"
         "  --packet-bytes N                packet: hash at most N bytes from the IP header on\n"
         "                                  (default the whole packet; needed for jumbo frames)\n"
         "  --bpf EXPR                      deduplicate only the packets this libpcap filter\n"
         "                                  matches (tcpdump syntax); the rest pass untouched and\n"
         "                                  are counted as bpf_unmatched (past 4096 bytes it is\n"
         "                                  compiled without libpcap's optimizer, which is slow)\n") + sizing +
         "  --policy insert-always|insert-on-miss\n"
         "                                  default: insert-on-miss for click, else insert-always\n"
         "  --seed HEX                      hash secret (default: random)\n"
         "  --click-param NAME              click: key on this query parameter's value only\n"
         "  --click-host                    click: include the Host header in the key\n"
         "  --click-ports P[,P...]|any      click: TCP ports carrying HTTP (default 80,8080)\n"
         "  --on-flood keep-window|keep-fpr when a flood of new keys overloads a --ttl epoch:\n"
         "                                  keep-window (default) keeps every key of the window and\n"
         "                                  lets the FPR rise; keep-fpr ends the epoch early, keeping\n"
         "                                  the FPR and shortening the window (both are counted;\n"
         "                                  ring: keep-fpr, by design)\n"
         "  --decide filter|penalties       filter (default): the structure's yes/no; penalties: suppress\n"
         "                                  iff $FP*(1-P) <= $FN*P, P the posterior that the key was seen\n"
         "                                  within the window (tbf or btbf over --window only)\n"
         "  --penalty-fp X                  cost of suppressing a key not seen in the window (default 1)\n"
         "  --penalty-fn Y                  cost of passing a repeat within the window (default 1)\n"
         "  --prior P                       chance that the next insertion is a given key (default: the\n"
         "                                  p with (1-p)^W = 1/2, a key as likely in the window as not)\n"
         "  --penalty-param NAME            click: a request's $FN is its query parameter NAME (e.g. the\n"
         "                                  bid), --penalty-fn when absent or not a positive number\n";
}

bool FilterOptions::take(int code, const char* optarg, std::string& error) {
  const std::string arg = optarg ? optarg : "";
  switch (code) {
    case kKey:
      if (!parse_key_mode(arg, mode)) error = "--key must be src-ip, dst-ip, flow, click or packet, not '" + arg + "'";
      return true;
    case kFilter: error = parse_filter_option(arg, spec); return true;
    case kWindow:
      error = parse_window_option(arg, spec.window);
      have_window_ = true;
      return true;
    case kTtl:
      error = parse_ttl_option(arg, spec.window);
      have_ttl_ = true;
      return true;
    case kCapacity:
      error = parse_capacity_option(arg, capacity_);
      have_capacity_ = true;
      return true;
    case kFpr:
      error = parse_fpr_option(arg, spec.fpr);
      have_fpr_ = true;
      return true;
    case kVlanInKey: vlan_in_key = true; return true;
    case kBpf:
      // A second --bpf would silently replace the first (and whether two
      // should mean "and" or "or" is the user's to say): one expression.
      if (!bpf.empty())
        error = "--bpf given twice ('" + bpf + "', then '" + arg + "'): give one expression, e.g. '(" + bpf +
                ") and (" + arg + ")'";
      else if (arg.empty()) error = "--bpf needs a filter expression, e.g. 'tcp port 80'";
      bpf = arg;
      return true;
    case kIgnoreVlan:
      packet.ignore_vlan = true;
      have_packet_opt_ = true;
      return true;
    case kIgnoreL2:
      packet.ignore_l2 = true;
      have_packet_opt_ = true;
      return true;
    case kPacketBytes: {
      uint64_t n;
      if (!parse_u64(arg, n) || n < 20 || n > packet::kMaxPacketKeyIpBytes)
        error = "--packet-bytes needs a byte count from 20 (an IPv4 header) to " +
                std::to_string(packet::kMaxPacketKeyIpBytes) + ", not '" + arg + "'";
      else packet.max_bytes = static_cast<uint32_t>(n);
      have_packet_opt_ = true;
      return true;
    }
    case kPolicy:
      if (!parse_policy(arg, policy)) error = "--policy must be insert-always or insert-on-miss, not '" + arg + "'";
      policy_set_ = true;
      return true;
    case kSeed:
      error = parse_seed_option(arg, seed);
      seed_set = true;
      return true;
    case kClickParam:
      if (arg.empty()) error = "--click-param needs a parameter name";
      click_param = arg;
      have_click_opt_ = true;
      return true;
    case kClickPorts:
      error = parse_click_ports(arg, click);
      have_click_opt_ = true;
      return true;
    case kClickHost:
      click_host = true;
      click.include_host = true;
      have_click_opt_ = true;
      return true;
    case kListFilters: list_filters = true; return true;
    case kVersion: version = true; return true;
    case kMem: {
      double mb;
      if (!parse_number(arg, mb) || !(mb * 1048576.0 >= 64.0) || !(mb <= double(uint64_t{1} << 30)))
        error = "--mem needs a number of MiB from 0.0001 to 2^30, not '" + arg + "'";
      else spec.mem_bytes = static_cast<uint64_t>(mb * 1048576.0);
      have_mem_ = true;
      return true;
    }
    case kMaxNpws:
    case kMaxBitsPerItem:
    case kMaxAccesses: {
      const char* name = code == kMaxNpws ? "--max-npws" : code == kMaxBitsPerItem ? "--max-bits-per-item" : "--max-accesses";
      double v;
      if (!parse_number(arg, v) || !(v > 0) || !(v < 1e300)) {
        error = std::string(name) + " needs a number greater than 0, not '" + arg + "'";
        return true;
      }
      (code == kMaxNpws ? spec.max_npws : code == kMaxBitsPerItem ? spec.max_bits_per_item : spec.max_accesses) = v;
      return true;
    }
    case kBlockBits: {
      uint64_t b;
      if (!parse_u64(arg, b) || (b != 64 && b != 128 && b != 256 && b != 512))
        error = "--block-bits must be 64, 128, 256 or 512, not '" + arg + "'";
      else spec.block_bits = static_cast<unsigned>(b);
      return true;
    }
    case kOnFlood:
      if (arg == "keep-window") spec.on_flood = FloodPolicy::keep_window;
      else if (arg == "keep-fpr") spec.on_flood = FloodPolicy::keep_fpr;
      else error = "--on-flood must be keep-window or keep-fpr, not '" + arg + "'";
      have_on_flood_ = true;
      return true;
    case kDecide:
      if (arg == "filter") decide = Decide::filter;
      else if (arg == "penalties") decide = Decide::penalties;
      else error = "--decide must be filter or penalties, not '" + arg + "'";
      return true;
    case kPenaltyFp:
    case kPenaltyFn: {
      const char* name = code == kPenaltyFp ? "--penalty-fp" : "--penalty-fn";
      double v;
      if (!parse_number(arg, v) || !inference::finite_positive(v)) error = std::string(name) + " needs a finite number greater than 0, not '" + arg + "'";
      (code == kPenaltyFp ? penalties.fp : penalties.fn) = v;
      have_penalty_opt_ = true;
      return true;
    }
    case kPrior: {
      if (!parse_number(arg, prior) || !inference::validate_prior(prior))
        error = "--prior must lie strictly between 0 and 1, not '" + arg + "'";
      prior_set_ = have_penalty_opt_ = true;
      return true;
    }
    case kPenaltyParam:
      if (arg.empty()) error = "--penalty-param needs a parameter name";
      penalty_param = arg;
      have_penalty_opt_ = true;
      return true;
    default: return false;
  }
}

std::string FilterOptions::finish() {
  // Each conflict names both options, so the user knows which to drop.
  if (have_window_ && have_ttl_) return "--window and --ttl exclude each other";
  if (have_capacity_ && !have_ttl_) return "--capacity applies to --ttl windows only";
  if (have_click_opt_ && mode != packet::KeyMode::click)
    return "--click-param, --click-host and --click-ports need --key click";
  if (have_on_flood_ && !have_ttl_) return "--on-flood applies to --ttl windows (a count window cannot be flooded)";
  if (have_ttl_ && spec.structure == Structure::ring) {
    // The ring ends an epoch at capacity/N insertions by design (its paper's
    // rotation): keep-fpr is what it does, so that is what it reports.
    if (have_on_flood_ && spec.on_flood == FloodPolicy::keep_window)
      return "--on-flood keep-window: ring ends an epoch at its capacity by design, keeping the FPR, not the "
             "window; give --on-flood keep-fpr, or keep the window with guarded-epoch, interleaved or two-line";
    spec.on_flood = FloodPolicy::keep_fpr;
  }
  if (have_penalty_opt_ && decide != Decide::penalties)
    return "--penalty-fp, --penalty-fn, --prior and --penalty-param need --decide penalties";
  if (!penalty_param.empty() && mode != packet::KeyMode::click) return "--penalty-param needs --key click";
  if (have_packet_opt_ && mode != packet::KeyMode::packet)
    return "--ignore-vlan, --ignore-l2 and --packet-bytes need --key packet";
  if (vlan_in_key && mode == packet::KeyMode::packet)
    return "--vlan-in-key does not apply to --key packet: its key has the VLAN IDs unless --ignore-vlan";
  if (decide == Decide::penalties) {
    if (!spec.structure || (*spec.structure != Structure::btbf && *spec.structure != Structure::tbf))
      return std::string("--decide penalties needs --filter btbf or --filter tbf (a filter that keeps timestamps "
                         "to infer from), not ") + spec_name(spec);
    if (have_ttl_)
      return "--decide penalties needs a count window (--window N): the posteriors count insertions, and a "
             "--ttl window's blocks are ticks";
  }
  if (!have_window_ && !have_ttl_) spec.window = Window::count(1'000'000);
  if (!prior_set_ && !have_ttl_) prior = inference::neutral_prior(spec.window.span);
  spec.capacity = have_ttl_ ? capacity_ : 0;
  if (!policy_set_) policy = default_policy(mode);
  if (!have_fpr_) spec.fpr = default_fpr();
  // --mem alone is the input: the lowest FPR that fits. Not for the
  // rate-adaptive filter (its budget, beside a target FPR).
  if (have_mem_ && !have_fpr_ && !mem_is_budget(spec)) spec.fpr = 0.0;
  return {};
}

packet::KeyOptions FilterOptions::key_options() const {
  packet::KeyOptions k;
  k.click = click;
  if (!click_param.empty()) k.click.param = click_param.c_str();
  k.packet = packet;
  k.vlan_in_key = vlan_in_key;
  return k;
}

}  // namespace agebloom::dedup
