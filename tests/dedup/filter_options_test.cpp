// The filter options dedup_fwd and agebloom-replay share: what each accepts,
// and the message for what it refuses.
#include "agebloom/dedup/filter_options.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "agebloom/agebloom.h"

namespace ab = agebloom;
namespace dd = agebloom::dedup;

TEST(SpecOptions, WholeUnsignedNumbersOnly) {
  uint64_t v = 0;
  EXPECT_TRUE(dd::parse_u64("42", v));
  EXPECT_EQ(v, 42u);
  EXPECT_TRUE(dd::parse_u64("ff", v, 16));
  EXPECT_EQ(v, 255u);
  for (const char* bad : {"", "-1", "+1", " 1", "1 ", "1x", "99999999999999999999999"})
    EXPECT_FALSE(dd::parse_u64(bad, v)) << "'" << bad << "'";
}

TEST(SpecOptions, WindowTtlCapacityFprSeed) {
  ab::Window w = ab::Window::count(1);
  EXPECT_EQ(dd::parse_window_option("1000", w), "");
  EXPECT_FALSE(w.is_time());
  EXPECT_EQ(w.span, 1000u);
  EXPECT_EQ(dd::parse_ttl_option("500ms", w), "");
  EXPECT_TRUE(w.is_time());
  EXPECT_EQ(w.span, 500'000'000u);
  uint64_t capacity = 0, seed = 0;
  EXPECT_EQ(dd::parse_capacity_option("5000", capacity), "");
  EXPECT_EQ(capacity, 5000u);
  double fpr = 0;
  EXPECT_EQ(dd::parse_fpr_option("0.01", fpr), "");
  EXPECT_DOUBLE_EQ(fpr, 0.01);
  EXPECT_EQ(dd::parse_seed_option("1f", seed), "");
  EXPECT_EQ(seed, 0x1fu);

  // Refusals name the option and echo the value.
  EXPECT_EQ(dd::parse_window_option("0", w), "--window needs a positive count, not '0'");
  EXPECT_NE(dd::parse_window_option("ten", w).find("'ten'"), std::string::npos);
  EXPECT_NE(dd::parse_ttl_option("0s", w).find("--ttl"), std::string::npos);
  EXPECT_NE(dd::parse_ttl_option("5parsecs", w).find("'5parsecs'"), std::string::npos);
  EXPECT_NE(dd::parse_capacity_option("0", capacity).find("--capacity"), std::string::npos);
  for (const char* bad : {"", "0", "1", "1.5", "-0.1", "0.01x", "nan"})
    EXPECT_NE(dd::parse_fpr_option(bad, fpr).find("--fpr"), std::string::npos) << "'" << bad << "'";
  EXPECT_NE(dd::parse_seed_option("xyz", seed).find("--seed"), std::string::npos);

  // A value too large is said as such, not as malformed; a zero duration
  // as zero; blanks and hexadecimal floats are no decimal number.
  EXPECT_EQ(dd::parse_window_option("99999999999999999999", w),
            "--window 99999999999999999999 is past 2^64 - 1, the largest count there is");
  EXPECT_EQ(dd::parse_capacity_option("18446744073709551616", capacity),
            "--capacity 18446744073709551616 is past 2^64 - 1, the largest count there is");
  EXPECT_EQ(dd::parse_capacity_option("18446744073709551615", capacity), "");
  EXPECT_EQ(dd::parse_window_option("1e99", w), "--window needs a positive count, not '1e99'");
  EXPECT_EQ(dd::parse_seed_option("ffffffffffffffffff", seed),
            "--seed ffffffffffffffffff is past 2^64 - 1: at most 16 hexadecimal digits");
  EXPECT_EQ(dd::parse_seed_option("ffffffffffffffff", seed), "");
  EXPECT_EQ(seed, ~uint64_t{0});
  for (const char* zero : {"0s", "0ms", "0.0h"})
    EXPECT_EQ(dd::parse_ttl_option(zero, w), std::string("--ttl must be longer than 0, not '") + zero + "'");
  EXPECT_NE(dd::parse_ttl_option("0", w).find("needs a duration like"), std::string::npos);
  for (const char* odd : {"0x1p-3", " 0.01", "0.01 ", "0X.1"})
    EXPECT_NE(dd::parse_fpr_option(odd, fpr).find("--fpr must lie"), std::string::npos) << "'" << odd << "'";
}

namespace {

// Offers each (code, value) to a fresh FilterOptions, then finish(): the
// first refusal's message, or "".
std::string take_all(dd::FilterOptions& o, std::initializer_list<std::pair<int, const char*>> args) {
  for (const auto& [code, value] : args) {
    std::string error;
    EXPECT_TRUE(o.take(code, value, error));
    if (!error.empty()) return error;
  }
  return o.finish();
}

}  // namespace

// --mem in MiB, fractions allowed; alone it sizes by memory (fpr 0: the
// lowest FPR that fits), beside --fpr it is a limit, and for the
// rate-adaptive filter it is the budget beside the default FPR.
TEST(SpecOptions, MemIsALimitOrTheInput) {
  using O = dd::FilterOptions;
  dd::FilterOptions alone;
  EXPECT_EQ(take_all(alone, {{O::kMem, "0.5"}, {O::kWindow, "100000"}}), "");
  EXPECT_EQ(alone.spec.mem_bytes, 512u * 1024);
  EXPECT_EQ(alone.spec.fpr, 0.0);
  dd::FilterOptions limit;
  EXPECT_EQ(take_all(limit, {{O::kMem, "3"}, {O::kFpr, "0.001"}}), "");
  EXPECT_EQ(limit.spec.mem_bytes, 3u << 20);
  EXPECT_EQ(limit.spec.fpr, 0.001);
  dd::FilterOptions budget;  // --ttl without --capacity: auto plans tlbf
  EXPECT_EQ(take_all(budget, {{O::kMem, "8"}, {O::kTtl, "10s"}}), "");
  EXPECT_EQ(budget.spec.fpr, 0.01);
  dd::FilterOptions packet;  // the packet mode's own default yields to --mem
  EXPECT_EQ(take_all(packet, {{O::kMem, "8"}, {O::kKey, "packet"}}), "");
  EXPECT_EQ(packet.spec.fpr, 0.0);
  for (const char* bad : {"0", "-1", "x", "1e300", "nan", ""}) {
    dd::FilterOptions o;
    EXPECT_NE(take_all(o, {{O::kMem, bad}}).find("--mem"), std::string::npos) << bad;
  }
  // What the tools build from --mem alone fits it.
  auto d = dd::DedupFilter::plan(alone.spec);
  ASSERT_TRUE(std::holds_alternative<dd::DedupFilter>(d)) << std::get<std::string>(d);
  EXPECT_LE(std::get<dd::DedupFilter>(d).bytes_needed(), alone.spec.mem_bytes);
}

// The planner's limits are shared options: every tool takes them, so a plan
// agebloom-plan prints is rebuilt from the same options.
TEST(SpecOptions, PlannerLimitsAreSharedOptions) {
  using O = dd::FilterOptions;
  dd::FilterOptions o;
  EXPECT_EQ(take_all(o, {{O::kMaxNpws, "0.2"}, {O::kMaxBitsPerItem, "40"}, {O::kMaxAccesses, "12"},
                         {O::kBlockBits, "128"}, {O::kFilter, "guarded-epoch-blocked"}}),
            "");
  EXPECT_EQ(o.spec.max_npws, 0.2);
  EXPECT_EQ(o.spec.max_bits_per_item, 40.0);
  EXPECT_EQ(o.spec.max_accesses, 12.0);
  EXPECT_EQ(o.spec.block_bits, 128u);
  const auto planned = dd::plan_spec(o.spec);
  ASSERT_TRUE(std::holds_alternative<ab::model::Plan>(planned)) << std::get<ab::model::PlanError>(planned).message;
  const auto& p = std::get<ab::model::Plan>(planned);
  EXPECT_EQ(p.block_bits, 128u);
  EXPECT_LE(p.peak_npws, 0.2);
  // The same options through DedupFilter::plan build exactly this plan.
  auto d = dd::DedupFilter::plan(o.spec);
  ASSERT_TRUE(std::holds_alternative<dd::DedupFilter>(d));
  EXPECT_TRUE(std::get<dd::DedupFilter>(d).config().config == p.config.config);
  for (auto [code, bad] : std::initializer_list<std::pair<int, const char*>>{
           {O::kMaxNpws, "0"}, {O::kMaxBitsPerItem, "-3"}, {O::kMaxAccesses, "x"}, {O::kBlockBits, "100"},
           {O::kBlockBits, "1024"}}) {
    dd::FilterOptions bad_o;
    EXPECT_FALSE(take_all(bad_o, {{code, bad}}).empty()) << bad;
  }
}

// Durations print in the largest unit that keeps them whole, and read back.
TEST(SpecOptions, DurationsPrintAndReadBack) {
  EXPECT_EQ(dd::format_duration(10'000'000'000), "10s");
  EXPECT_EQ(dd::format_duration(50'000'000), "50ms");
  EXPECT_EQ(dd::format_duration(120'000'000'000), "120s");  // never "2m": a million?
  EXPECT_EQ(dd::format_duration(11'250'000'000, true), "11.25s");
  EXPECT_EQ(dd::format_duration(1'428'571'429, true), "1.429s");
  for (uint64_t ns : {1ull, 999ull, 1'500'000ull, 11'250'000'000ull, 3'600'000'000'001ull}) {
    uint64_t back = 0;
    ASSERT_TRUE(dd::parse_duration_ns(dd::format_duration(ns), back)) << ns;
    EXPECT_EQ(back, ns);
  }
}

// --packet-bytes runs from an IPv4 header to the longest IP packet a packet
// key holds whole behind two VLAN tags (kMaxPacketKeyIpBytes), and says so.
TEST(SpecOptions, PacketBytesUpToWhatAKeyHolds) {
  using O = dd::FilterOptions;
  const std::string most = std::to_string(agebloom::packet::kMaxPacketKeyIpBytes);
  dd::FilterOptions ok;
  EXPECT_EQ(take_all(ok, {{O::kKey, "packet"}, {O::kPacketBytes, most.c_str()}}), "");
  EXPECT_EQ(ok.packet.max_bytes, agebloom::packet::kMaxPacketKeyIpBytes);
  const std::string over = std::to_string(agebloom::packet::kMaxPacketKeyIpBytes + 1);
  for (const char* bad : {"19", over.c_str(), "x", ""}) {
    dd::FilterOptions o;
    EXPECT_NE(take_all(o, {{O::kKey, "packet"}, {O::kPacketBytes, bad}}).find("from 20 (an IPv4 header) to " + most),
              std::string::npos) << bad;
  }
}

// A second --bpf is refused, naming both and the one expression to give,
// where it silently replaced the first.
TEST(SpecOptions, OneBpfExpression) {
  using O = dd::FilterOptions;
  dd::FilterOptions one;
  EXPECT_EQ(take_all(one, {{O::kBpf, "tcp"}}), "");
  EXPECT_EQ(one.bpf, "tcp");
  dd::FilterOptions two;
  EXPECT_EQ(take_all(two, {{O::kBpf, "tcp"}, {O::kBpf, "udp"}}),
            "--bpf given twice ('tcp', then 'udp'): give one expression, e.g. '(tcp) and (udp)'");
  dd::FilterOptions empty;
  EXPECT_NE(take_all(empty, {{O::kBpf, ""}}).find("--bpf needs a filter expression"), std::string::npos);
}

// An option given twice with two values is refused, naming both, where the
// last one won without a word; a value or a flag given twice alike passes,
// and two names of one option (agebloom-plan's --structure) count as one.
TEST(SpecOptions, RepeatedOptionsNamedWithBothValues) {
  using O = dd::FilterOptions;
  std::vector<option> table = {{"structure", required_argument, nullptr, O::kFilter}};
  O::append_to(table);
  table.push_back({nullptr, 0, nullptr, 0});
  const auto index = [&](const char* name) {
    for (size_t i = 0; table[i].name != nullptr; ++i)
      if (std::strcmp(table[i].name, name) == 0) return static_cast<int>(i);
    ADD_FAILURE() << name;
    return -1;
  };
  dd::RepeatCheck r(table.data());
  EXPECT_EQ(r.check(O::kWindow, index("window"), "10"), "");
  EXPECT_EQ(r.check(O::kWindow, index("window"), "10"), "");  // the same value again
  EXPECT_EQ(r.check(O::kWindow, index("window"), "20"), "--window given twice ('10', then '20'): give it once");
  EXPECT_EQ(r.check(O::kClickHost, index("click-host"), nullptr), "");
  EXPECT_EQ(r.check(O::kClickHost, index("click-host"), nullptr), "");  // a flag: no value to disagree
  EXPECT_EQ(r.check(O::kFilter, index("structure"), "apbf"), "");
  EXPECT_EQ(r.check(O::kFilter, index("filter"), "tlbf"), "--structure 'apbf' and --filter 'tlbf' set the same thing: give one");
  EXPECT_EQ(r.check(O::kBpf, index("bpf"), "tcp"), "");
  EXPECT_EQ(r.check(O::kBpf, index("bpf"), "udp"), "--bpf given twice ('tcp', then 'udp'): give one expression, e.g. '(tcp) and (udp)'");
  EXPECT_EQ(r.check('h', -1, nullptr), "");  // a short option: not in the table
}

// --version is the library's version, after the tool's name.
TEST(SpecOptions, VersionLine) {
  char buf[128] = {};
  std::FILE* f = fmemopen(buf, sizeof buf - 1, "w");
  ASSERT_NE(f, nullptr);
  dd::print_version(f, "agebloom-replay");
  dd::print_version(f, "dedup_fwd", "(DPDK x)");
  std::fclose(f);
  EXPECT_EQ(std::string(buf), std::string("agebloom-replay ") + agebloom_version() + "\ndedup_fwd " + agebloom_version() +
                                  " (DPDK x)\n");
  dd::FilterOptions o;
  std::string error;
  EXPECT_TRUE(o.take(dd::FilterOptions::kVersion, nullptr, error));
  EXPECT_TRUE(o.version);
  EXPECT_TRUE(dd::FilterOptions::changes_plan(dd::FilterOptions::kVersion));  // agebloom-plan: no "ignored" note
}

// A well-formed --ttl too long for a window (1.8e19 ns) says so, where it
// was told to look like "500ms"; malformed ones keep that message.
TEST(SpecOptions, TtlPastWhatAWindowHolds) {
  ab::Window w = ab::Window::count(1);
  EXPECT_EQ(dd::parse_ttl_option("100000000000s", w),
            "--ttl 100000000000s is longer than a window can be (at most 1.8e19 ns, about 570 years)");
  for (const char* bad : {"", "5parsecs", "-5s", "1e5s", "0.0000000001ns"})  // "0s": "must be longer than 0"
    EXPECT_NE(dd::parse_ttl_option(bad, w).find("needs a duration like"), std::string::npos) << bad;
  EXPECT_EQ(dd::parse_ttl_option("584y", w).find("longer"), std::string::npos);  // no such unit: malformed
  EXPECT_EQ(dd::parse_ttl_option("10m", w), "");
  EXPECT_EQ(w.span, 600'000'000'000u);
}
