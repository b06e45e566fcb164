// The command-line options that choose keys, pick and size the filter and
// set the dedup policy, declared and checked once for every tool that takes
// them (dedup_fwd, agebloom-replay, agebloom-plan), with the same messages:
//
//   --key MODE  --filter NAME  --window N | --ttl D [--capacity N]  --fpr P  --mem MB
//   --max-npws X  --max-bits-per-item X  --max-accesses N  --block-bits B
//   --policy P  --seed HEX  --click-param NAME  --click-host  --list-filters  --version
//   --vlan-in-key  --ignore-vlan  --ignore-l2  --packet-bytes N  --bpf EXPR
//   --decide filter|penalties  --penalty-fp X  --penalty-fn Y  --prior P  --penalty-param NAME
//
// A tool appends these to its own getopt_long table (append_to), offers each
// option code to take(), and calls finish() once after the loop for the
// checks across options and the defaults. Every refusal is a message naming
// the option and echoing the value; the tools exit 2 with it. RepeatCheck
// refuses an option given twice with two values, the tools' own included.
#pragma once

#include <getopt.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "agebloom/core/window.hpp"
#include "agebloom/dedup/dedup_filter.hpp"
#include "agebloom/packet/key_extract.hpp"

// Compiled in libagebloom: exported from the shared library, which hides
// everything else (core/export.h).
#pragma GCC visibility push(default)

namespace agebloom::dedup {

// A whole unsigned number in `base`: no sign, no blanks, no trailing bytes,
// no overflow.
bool parse_u64(const std::string& s, uint64_t& out, int base = 10) noexcept;
// Whether `s` is a whole number in `base` too large for 64 bits: parse_u64
// refuses it as it refuses a malformed one, and a message should say which.
bool past_u64(const std::string& s, int base = 10) noexcept;
// "--OPTION needs a positive count, not 'ARG'", or that ARG is past 2^64 - 1.
std::string count_refused(const char* option, const std::string& arg);

std::string parse_window_option(const std::string& arg, Window& window);    // --window N
std::string parse_ttl_option(const std::string& arg, Window& window);       // --ttl 500ms
std::string parse_capacity_option(const std::string& arg, uint64_t& capacity);  // --capacity N
std::string parse_fpr_option(const std::string& arg, double& fpr);           // --fpr 0.01
std::string parse_seed_option(const std::string& arg, uint64_t& seed);       // --seed HEX
std::string parse_click_ports(const std::string& arg, packet::ClickOptions& click);  // --click-ports
std::string parse_filter_option(const std::string& arg, FilterSpec& spec);   // --filter NAME|auto

// "auto, guarded-epoch, ...": every name --filter takes, from the registry.
std::string filter_names();

// --list-filters: one line per registered structure, beginning with the name
// --filter takes, then the paper, the window kinds, the cost per query and a
// one-line summary.
void print_filter_list(std::FILE* out);

// --version: "TOOL VERSION" (the library's, agebloom_version()) and `extra`
// after it when given (dedup_fwd: the DPDK it was built with).
void print_version(std::FILE* out, const char* tool, const std::string& extra = "");

// "--window 10 ... --window 20": a script that appends options, or a typo,
// and the last would win without a word. Refused instead, naming both values;
// a flag given twice, or a value written twice the same way, passes (the
// text is compared: "10" and "010" are refused, as two spellings).
// Aliases (agebloom-plan's --structure for --filter) share a code and count
// as one option.
class RepeatCheck {
 public:
  // `table`: the getopt_long table the loop parses with (its names for the
  // messages); it must outlive this object.
  explicit RepeatCheck(const option* table) noexcept : table_(table) {}
  // After getopt_long returned `code`, with the `longindex` it set (-1 for a
  // short option, which is not checked) and `optarg`: "" or the refusal.
  std::string check(int code, int longindex, const char* optarg);

 private:
  struct Given {
    int code;
    const char* name;
    std::string value;
  };
  const option* table_;
  std::vector<Given> given_;
};

// The shared options of one command line, as parsed so far (see above).
class FilterOptions {
 public:
  // Option codes: above any a tool uses for its own options.
  enum Code : int {
    kKey = 0x1000, kFilter, kWindow, kTtl, kCapacity, kFpr, kPolicy, kSeed, kClickParam, kClickHost, kListFilters,
    kMem, kClickPorts, kOnFlood, kDecide, kPenaltyFp, kPenaltyFn, kPrior, kPenaltyParam,
    kVlanInKey, kIgnoreVlan, kIgnoreL2, kPacketBytes, kBpf, kMaxNpws, kMaxBitsPerItem, kMaxAccesses, kBlockBits,
    kVersion
  };
  // --fpr's default for --key packet: a unique packet wrongly dropped is data
  // lost, so the filter is sized for one in a million rather than 1%.
  static constexpr double kPacketModeFpr = 1e-6;
  // The target FPR when --fpr is not given: packet's, else FilterSpec's 0.01
  // (what a rate-adaptive budget is sized for beside --mem).
  double default_fpr() const noexcept { return mode == packet::KeyMode::packet ? kPacketModeFpr : FilterSpec{}.fpr; }
  // What the options set, defaults applied by finish().
  packet::KeyMode mode = packet::KeyMode::src_ip;
  FilterSpec spec;                        // --filter, --window/--ttl, --capacity, --fpr, --mem
  Policy policy = Policy::insert_always;  // --policy (finish(): the key mode's default if not given)
  uint64_t seed = 0;                      // --seed
  bool seed_set = false;                  // --seed was given (else the tool draws one)
  std::string click_param;                // --click-param
  bool click_host = false;                // --click-host
  // --click-ports and --click-host as key extraction takes them (`param`
  // left null: point it at click_param where the options live).
  packet::ClickOptions click;
  packet::PacketOptions packet;           // --ignore-vlan, --ignore-l2, --packet-bytes (--key packet)
  bool vlan_in_key = false;               // --vlan-in-key (every key mode but packet)
  // --bpf: a libpcap filter expression; the tool compiles it for its link
  // type (packet::BpfFilter). Empty: every packet is deduplicated.
  std::string bpf;
  bool list_filters = false;              // --list-filters
  bool version = false;                   // --version (the tool prints it and exits 0)
  // --decide penalties: the inferential filter's per-query decision (dedup_filter.hpp).
  Decide decide = Decide::filter;
  inference::Penalties penalties;  // --penalty-fp, --penalty-fn (default 1 and 1)
  double prior = 0.0;              // --prior; finish() sets the neutral prior of the window when not given
  std::string penalty_param;       // click: the query parameter whose value is a click's $FN

  // Appends the shared options (not the terminating zero entry).
  static void append_to(std::vector<option>& table);
  // Whether option `opt` (its getopt value) changes the plan: --filter,
  // --window, --ttl, --capacity, --fpr, --mem, the planner's limits, --key
  // (packet's default FPR), --on-flood (keep-fpr's trigger), and
  // --list-filters and --version (no note that they are ignored). The others
  // shape the key or the run; agebloom-plan takes them, so that a tool's
  // command line can be pasted, and says it ignores them.
  static bool changes_plan(int opt) noexcept;
  // The --help lines of the shared options (the filter names from the
  // registry); with sizing_only, those that change a plan (changes_plan) and
  // a line on the others, for agebloom-plan.
  static std::string help(bool sizing_only = false);

  // True when `code` is a shared option; a bad value sets `error`.
  bool take(int code, const char* arg, std::string& error);
  // Checks across options and fills the defaults: window 1,000,000
  // insertions when neither --window nor --ttl is given, the key mode's
  // policy; --ttl without --capacity leaves the capacity unknown (0: auto
  // plans tlbf); --mem without --fpr sizes by memory (spec.fpr 0: the
  // lowest FPR that fits), except for tlbf, whose budget --mem is. Returns
  // the message for a conflict, or "".
  std::string finish();

  bool time_window() const noexcept { return have_ttl_; }  // --ttl was given

  // Everything extract_key takes besides the mode, click.param pointing into
  // this object's click_param: valid while this object lives, unmoved.
  packet::KeyOptions key_options() const;

 private:
  bool have_window_ = false, have_ttl_ = false, have_capacity_ = false, policy_set_ = false;
  bool have_click_opt_ = false, have_packet_opt_ = false, have_fpr_ = false;
  bool have_penalty_opt_ = false, prior_set_ = false, have_on_flood_ = false, have_mem_ = false;
  uint64_t capacity_ = 0;
};

}  // namespace agebloom::dedup

#pragma GCC visibility pop
