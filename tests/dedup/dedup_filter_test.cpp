// The dedup decision shared by agebloom-replay and dedup_fwd: every filter
// name plans, creates and keeps the window; "auto" follows the planner; bad
// specs are messages, not crashes; durations parse strictly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "agebloom/dedup/dedup_filter.hpp"
#include "agebloom/dedup/filter_options.hpp"
#include "agebloom/model/planner.hpp"

namespace ab = agebloom;
namespace dd = agebloom::dedup;

namespace {
dd::DedupFilter make(const dd::FilterSpec& spec, std::vector<unsigned char>& memory) {
  auto planned = dd::DedupFilter::plan(spec);
  if (auto* err = std::get_if<std::string>(&planned)) ADD_FAILURE() << dd::spec_name(spec) << ": " << *err;
  auto d = std::get<dd::DedupFilter>(planned);
  memory.assign(d.bytes_needed(), 0);
  ab::Arena arena(memory.data(), memory.size());
  EXPECT_EQ(d.create(arena), "");
  return d;
}
ab::KeyHash key(uint64_t i) { return ab::Hasher(5)(&i, sizeof i); }
}  // namespace

TEST(DedupFilter, EveryNameKeepsTheWindowUnderBothPolicies) {
  std::vector<std::string> names = {"auto"};
  for (const ab::StructureInfo& s : ab::kStructures) names.push_back(s.name);
  for (const std::string& name : names)
    for (auto policy : {dd::Policy::insert_always, dd::Policy::insert_on_miss}) {
      dd::FilterSpec spec;
      ASSERT_EQ(dd::parse_filter_option(name, spec), "");
      spec.window = ab::Window::count(5000);
      spec.fpr = 0.01;
      std::vector<unsigned char> mem;
      dd::DedupFilter d = make(spec, mem);
      EXPECT_LE(d.model_fpr(), 0.0101) << name;
      uint64_t missed = 0;
      // Each key twice, 100 packets apart: the repeat is inside the window of
      // the first sighting's insertion. (Under insert-on-miss a first sighting
      // that was a false positive was never inserted, so its repeat may pass.)
      std::vector<char> inserted(50000);
      for (uint64_t i = 0; i < 50000; ++i) {
        inserted[i] = !d.is_duplicate(key(i), policy) || policy == dd::Policy::insert_always;
        if (i >= 100) missed += inserted[i - 100] && !d.is_duplicate(key(i - 100), policy);
      }
      EXPECT_EQ(missed, 0u) << name << " " << dd::policy_name(policy);
    }
}

TEST(DedupFilter, AutoIsThePlannersChoice) {
  dd::FilterSpec spec;
  spec.window = ab::Window::count(1'000'000);
  spec.fpr = 0.01;
  auto d = std::get<dd::DedupFilter>(dd::DedupFilter::plan(spec));
  ab::model::PlanRequest req;
  req.window = ab::Window::count(1'000'000);
  req.fpr = 0.01;
  req.auto_candidates = true;  // the dataplane's rule: the layouts measured fastest per packet
  auto p = std::get<ab::model::Plan>(ab::model::plan(req));
  EXPECT_EQ(d.structure(), p.structure);
  EXPECT_TRUE(d.config().config == p.config.config);  // planned is built, bit for bit
  EXPECT_TRUE(ab::info(d.structure()).auto_candidate);
  EXPECT_TRUE(ab::info(d.structure()).one_line);
}

// The registry's size rule: one row, interleaved-swept in place of
// interleaved past 4 MiB (the plain layout's rotation stall), and
// ab::auto_over finds it only past that size and only for that row.
TEST(DedupFilter, TheRegistrysSizeRuleIsTheSweptRow) {
  const ab::StructureInfo& swept = ab::info(ab::Structure::interleaved_swept);
  EXPECT_EQ(swept.auto_over_bytes, uint64_t{4} << 20);
  EXPECT_EQ(swept.auto_in_place_of, ab::Structure::interleaved);
  ASSERT_NE(swept.auto_over_why, nullptr);
  for (const ab::StructureInfo& row : ab::kStructures) {
    if (row.id != ab::Structure::interleaved_swept) {
      EXPECT_EQ(row.auto_over_bytes, 0u) << row.name;
    }
    if (row.auto_over_bytes == 0) continue;
    // What it replaces is what auto plans, and it keeps the same windows in one line.
    EXPECT_TRUE(ab::info(row.auto_in_place_of).auto_candidate) << row.name;
    EXPECT_EQ(row.windows, ab::info(row.auto_in_place_of).windows) << row.name;
    EXPECT_EQ(row.one_line, ab::info(row.auto_in_place_of).one_line) << row.name;
  }
  EXPECT_EQ(ab::auto_over(ab::Structure::interleaved, swept.auto_over_bytes), nullptr);
  EXPECT_EQ(ab::auto_over(ab::Structure::interleaved, swept.auto_over_bytes + 1), &swept);
  EXPECT_EQ(ab::auto_over(ab::Structure::interleaved_128, uint64_t{1} << 40), nullptr);
  EXPECT_EQ(ab::auto_over(ab::Structure::guarded_epoch, uint64_t{1} << 40), nullptr);
}

// Past the registry's auto_over_bytes auto's one-line plan stalls the worker
// at every rotation: auto takes interleaved-swept instead, says why, and
// keeps interleaved where the swept plan would not fit --mem (or the filter
// is small, as at W = 1M above).
TEST(DedupFilter, AutoSweepsLargeOneLineFilters) {
  const uint64_t over = ab::info(ab::Structure::interleaved_swept).auto_over_bytes;
  dd::FilterSpec spec;
  spec.window = ab::Window::count(64'000'000);
  spec.fpr = 0.01;
  auto d = std::get<dd::DedupFilter>(dd::DedupFilter::plan(spec));
  EXPECT_EQ(d.structure(), ab::Structure::interleaved_swept);
  EXPECT_GT(d.bytes_needed(), over);
  const std::string note = dd::DedupFilter::auto_note(spec, d);
  EXPECT_NE(note.find("interleaved (207.54 MiB"), std::string::npos) << note;
  EXPECT_NE(note.find("auto avoids it above 4.00 MiB"), std::string::npos) << note;
  EXPECT_NE(note.find("keeps keys up to W/6 past the window against W/7"), std::string::npos) << note;
  EXPECT_NE(note.find("--filter interleaved for the fewer bytes"), std::string::npos) << note;
  EXPECT_NE(note.find("most compact for this window and FPR is guarded-epoch"), std::string::npos) << note;
  // Just under the swept plan's bytes: the plain layout still fits, and is taken.
  spec.mem_bytes = d.bytes_needed() - 1;
  auto plain = std::get<dd::DedupFilter>(dd::DedupFilter::plan(spec));
  EXPECT_EQ(plain.structure(), ab::Structure::interleaved);
  EXPECT_LT(plain.bytes_needed(), d.bytes_needed());
  // Either side of the threshold (27.2 bits per item: 4 MiB near W = 1.23M):
  // swept exactly where the plain layout's arena is over it.
  spec.mem_bytes = 0;
  for (const uint64_t w : {1'200'000ull, 1'250'000ull}) {
    spec.window = ab::Window::count(w);
    auto at = std::get<dd::DedupFilter>(dd::DedupFilter::plan(spec));
    dd::FilterSpec named = spec;
    named.structure = ab::Structure::interleaved;
    const auto one = std::get<dd::DedupFilter>(dd::DedupFilter::plan(named));
    EXPECT_EQ(at.structure() == ab::Structure::interleaved_swept, one.bytes_needed() > over) << w;
    EXPECT_EQ(at.structure() == ab::Structure::interleaved_swept, w == 1'250'000ull) << w;
  }
  // Sized by memory (--fpr 0 --mem): the lowest FPR in it, so the plain line.
  spec.window = ab::Window::count(64'000'000);
  spec.fpr = 0.0;
  spec.mem_bytes = uint64_t{300} << 20;
  auto by_memory = std::get<dd::DedupFilter>(dd::DedupFilter::plan(spec));
  EXPECT_EQ(by_memory.structure(), ab::Structure::interleaved);
}

TEST(DedupFilter, TimeWindowsWithoutACapacityAndHonourTheTtl) {
  dd::FilterSpec spec;
  spec.window = ab::Window::time(1'000'000'000);  // 1 s in ns
  // No capacity: the rate is unknown, so "auto" plans the rate-adaptive
  // time-limited filter, and a named structure that needs a rate assumes
  // the documented default.
  auto unknown = dd::DedupFilter::plan(spec);
  ASSERT_TRUE(std::holds_alternative<dd::DedupFilter>(unknown)) << std::get<std::string>(unknown);
  EXPECT_EQ(std::get<dd::DedupFilter>(unknown).structure(), ab::Structure::tlbf);
  spec.structure = ab::Structure::guarded_epoch_blocked;
  auto named = dd::DedupFilter::plan(spec);
  ASSERT_TRUE(std::holds_alternative<dd::DedupFilter>(named));
  EXPECT_EQ(std::get<ab::GuardedEpochConfig>(std::get<dd::DedupFilter>(named).config().config).capacity,
            dd::kDefaultTtlCapacity);
  spec.capacity = 10000;
  std::vector<unsigned char> mem;
  dd::DedupFilter d = make(spec, mem);
  ASSERT_TRUE(d.advance(5'000'000'000));
  EXPECT_FALSE(d.is_duplicate(key(1), dd::Policy::insert_always));
  ASSERT_TRUE(d.advance(5'900'000'000));
  EXPECT_TRUE(d.is_duplicate(key(1), dd::Policy::insert_on_miss));  // 0.9 s later: inside the TTL
  ASSERT_TRUE(d.advance(9'000'000'000));
  EXPECT_FALSE(d.contains(key(1)));  // 3.1 s after the last insertion: expired
  EXPECT_EQ(d.advance(8'000'000'000).code(), ab::Errc::time_went_backwards);
}

TEST(DedupFilter, BadSpecsAreMessages) {
  dd::FilterSpec spec;
  spec.window = ab::Window::count(1000);
  EXPECT_NE(dd::parse_filter_option("cuckoo", spec).find("choose from"), std::string::npos);
  spec.structure.reset();
  spec.fpr = 1.5;
  EXPECT_TRUE(std::holds_alternative<std::string>(dd::DedupFilter::plan(spec)));
  spec.fpr = 0.01;
  spec.window = ab::Window::count(0);
  EXPECT_TRUE(std::holds_alternative<std::string>(dd::DedupFilter::plan(spec)));
}

TEST(DedupFilter, DurationsParseStrictly) {
  uint64_t ns = 0;
  EXPECT_TRUE(dd::parse_duration_ns("500ms", ns));
  EXPECT_EQ(ns, 500'000'000u);
  EXPECT_TRUE(dd::parse_duration_ns("1.5s", ns));
  EXPECT_EQ(ns, 1'500'000'000u);
  EXPECT_TRUE(dd::parse_duration_ns("10m", ns));
  EXPECT_EQ(ns, 600'000'000'000u);
  EXPECT_TRUE(dd::parse_duration_ns("2h", ns));
  EXPECT_TRUE(dd::parse_duration_ns("250us", ns));
  EXPECT_EQ(ns, 250'000u);
  EXPECT_TRUE(dd::parse_duration_ns("7ns", ns));
  EXPECT_EQ(ns, 7u);
  for (const char* bad : {"", "s", "10", "-5s", "0s", "1.2.3s", "5 s", "5sec", "1e3s", "99999999999h", "0.1ns"})
    EXPECT_FALSE(dd::parse_duration_ns(bad, ns)) << bad;
  dd::Policy p;
  EXPECT_TRUE(dd::parse_policy("insert-on-miss", p));
  EXPECT_EQ(p, dd::Policy::insert_on_miss);
  EXPECT_FALSE(dd::parse_policy("always", p));
}

// Flood policies (hardening): a time window planned for 1,000 insertions
// per T is hit by 100 times that many distinct keys. keep-window keeps every
// key of the window (live FNR 0) and reports the overloaded epochs, its FPR
// far above the model; keep-fpr ends epochs at their design load, so the FPR
// stays at the model, and reports the early rotations.
TEST(DedupFilter, FloodPoliciesKeepTheirPromise) {
  const uint64_t T = 1'000'000, design = 1000, per_tick = 100;  // ticks; insertions per tick in the flood
  for (const char* name : {"guarded-epoch", "interleaved"}) {
    for (dd::FloodPolicy policy : {dd::FloodPolicy::keep_window, dd::FloodPolicy::keep_fpr}) {
      const bool keep_fpr = policy == dd::FloodPolicy::keep_fpr;
      SCOPED_TRACE(std::string(name) + (keep_fpr ? " keep-fpr" : " keep-window"));
      dd::FilterSpec spec;
      ASSERT_EQ(dd::parse_filter_option(name, spec), "");
      spec.window = ab::Window::time(T);
      spec.capacity = design;
      spec.fpr = 0.01;
      spec.on_flood = policy;
      std::vector<unsigned char> memory;
      dd::DedupFilter f = make(spec, memory);
      // 100x the design rate: design·100 distinct keys per T, over 3 T.
      const uint64_t step = T / (design * per_tick);
      uint64_t now = T, id = 0;
      std::vector<std::pair<uint64_t, uint64_t>> recent;  // (id, time) of the last T
      for (; now < 4 * T; now += step, ++id) {
        ASSERT_TRUE(f.advance(now));
        (void)f.is_duplicate(key(id), dd::Policy::insert_always);
        if (now >= 3 * T) recent.emplace_back(id, now);
      }
      uint64_t fp = 0;
      const uint64_t probes = 20'000;
      for (uint64_t i = 0; i < probes; ++i) fp += f.contains(key((uint64_t{1} << 60) + i));
      const double fpr = static_cast<double>(fp) / probes;
      uint64_t missed = 0;
      for (const auto& [k, t] : recent) missed += !f.contains(key(k));
      std::printf("%s %s: FPR %.4f (model %.4f), live keys of the last T missed %llu of %zu, overloaded epochs %llu, "
                  "early rotations %llu\n",
                  name, keep_fpr ? "keep-fpr" : "keep-window", fpr, f.model_fpr(),
                  static_cast<unsigned long long>(missed), recent.size(),
                  static_cast<unsigned long long>(f.overloaded_epochs()),
                  static_cast<unsigned long long>(f.early_rotations()));
      if (keep_fpr) {
        EXPECT_LE(fpr, 1.5 * f.model_fpr()) << "keep-fpr holds the FPR";
        EXPECT_GT(f.early_rotations(), 0u);
        EXPECT_EQ(f.overloaded_epochs(), 0u);
      } else {
        EXPECT_EQ(missed, 0u) << "keep-window keeps every key of the window";
        EXPECT_GT(f.overloaded_epochs(), 0u);
        EXPECT_EQ(f.early_rotations(), 0u);
        EXPECT_GT(fpr, 10 * f.model_fpr()) << "and the flood shows in the FPR";
      }
    }
  }
  // A structure that cannot end an epoch early says so.
  dd::FilterSpec spec;
  ASSERT_EQ(dd::parse_filter_option("apbf", spec), "");
  spec.window = ab::Window::time(T);
  spec.capacity = design;
  spec.on_flood = dd::FloodPolicy::keep_fpr;
  auto planned = dd::DedupFilter::plan(spec);
  ASSERT_TRUE(std::holds_alternative<std::string>(planned));
  const std::string refusal = std::get<std::string>(planned);
  EXPECT_NE(refusal.find("cannot end an epoch early"), std::string::npos);
  // It names exactly the structures that do keep the policy: every row is
  // tried, and is planned if and only if the refusal names it.
  const size_t use = refusal.find("; use ");
  ASSERT_NE(use, std::string::npos) << refusal;
  std::vector<std::string> named;
  std::string rest = refusal.substr(use + 6);
  for (const char* cut : {" (or ", ", which"}) {
    const size_t at = rest.find(cut);
    ASSERT_NE(at, std::string::npos) << refusal;
    std::string list = rest.substr(0, at);
    rest = rest.substr(at + std::strlen(cut));
    for (size_t from = 0; from <= list.size();) {
      size_t to = std::min(list.find(", ", from), list.find(" or ", from));
      named.push_back(list.substr(from, to == std::string::npos ? std::string::npos : to - from));
      if (to == std::string::npos) break;
      from = to + (list.compare(to, 2, ", ") == 0 ? 2 : 4);
    }
  }
  size_t kept = 0;
  for (const ab::StructureInfo& row : ab::kStructures) {
    if (!(row.windows & ab::kTimeWindows)) continue;
    spec.structure = row.id;
    const auto one = dd::DedupFilter::plan(spec);
    const bool is_named = std::find(named.begin(), named.end(), row.name) != named.end();
    EXPECT_EQ(std::holds_alternative<dd::DedupFilter>(one), is_named)
        << row.name << ": " << (one.index() == 1 ? std::get<std::string>(one) : "planned") << "\n" << refusal;
    kept += is_named;
  }
  EXPECT_EQ(kept, named.size()) << refusal;
}

// The flood counters do not depend on how the verdicts were asked for: one
// key at a time, bursts with one clock each (dedup_fwd on the TSC: several
// early rotations can fall inside one burst), or bursts with a clock per
// packet (agebloom-replay, dedup_fwd on Rx timestamps).
TEST(DedupFilter, FloodCountersAreThoseOfOneKeyAtATime) {
  const uint64_t T = 1'000'000, design = 64;
  for (const char* name : {"guarded-epoch", "interleaved", "ring"}) {
    for (dd::FloodPolicy flood : {dd::FloodPolicy::keep_window, dd::FloodPolicy::keep_fpr}) {
      // The ring ends epochs at capacity by design: keep-fpr only (the options refuse keep-window).
      if (std::string(name) == "ring" && flood == dd::FloodPolicy::keep_window) continue;
      for (dd::Policy policy : {dd::Policy::insert_always, dd::Policy::insert_on_miss}) {
        SCOPED_TRACE(std::string(name) + (flood == dd::FloodPolicy::keep_fpr ? " keep-fpr " : " keep-window ") +
                     dd::policy_name(policy));
        dd::FilterSpec spec;
        ASSERT_EQ(dd::parse_filter_option(name, spec), "");
        spec.window = ab::Window::time(T);
        spec.capacity = design;
        spec.fpr = 0.01;
        spec.on_flood = flood;
        std::vector<unsigned char> m1, m2, m3;
        dd::DedupFilter one = make(spec, m1), burst = make(spec, m2), stamped = make(spec, m3);
        // Bursts of 32 keys (a third of them repeats), 20x the design rate
        // in floods of 30 bursts, with quiet bursts of 2 keys between.
        uint64_t now = T, id = 0;
        for (int b = 0; b < 400; ++b) {
          const size_t n = (b / 30) % 2 ? 2 : 32;
          ab::KeyHash h[32];
          uint64_t at[32];
          for (size_t i = 0; i < n; ++i) {
            h[i] = key(i % 3 == 2 ? id - 1 : id++);
            at[i] = now + i * (T / (20 * design));
          }
          bool d1[32], d2[32], d3[32];
          ASSERT_TRUE(one.advance(now));
          for (size_t i = 0; i < n; ++i) d1[i] = one.is_duplicate(h[i], policy);
          ASSERT_TRUE(burst.advance(now));
          burst.decide_burst(h, nullptr, n, policy, d2);
          stamped.decide_burst(h, at, n, policy, d3);
          // One clock per burst for `one` and `burst`: the same verdicts.
          for (size_t i = 0; i < n; ++i) ASSERT_EQ(d1[i], d2[i]) << "burst " << b << " key " << i;
          (void)d3;
          now += n * (T / (20 * design));
        }
        EXPECT_EQ(burst.early_rotations(), one.early_rotations());
        EXPECT_EQ(burst.overloaded_epochs(), one.overloaded_epochs());
        if (flood == dd::FloodPolicy::keep_fpr) {
          EXPECT_GT(one.early_rotations(), 50u);  // several in each flood burst: 21 insertions per epoch
          EXPECT_GT(stamped.early_rotations(), 50u);
        } else {
          EXPECT_GT(one.overloaded_epochs(), 0u);
          EXPECT_GT(stamped.overloaded_epochs(), 0u);
        }
      }
    }
  }
}

// The guarantee the tools print at start is the filter's: every key within
// the window is found, and none is found past window + slack (count windows,
// at an FPR low enough that a stray hit would be a defect). The slack is
// measured, not only stated.
TEST(DedupFilter, GuaranteeAndSlackHoldForEveryWindowedStructure) {
  for (const ab::StructureInfo& s : ab::kStructures) {
    if (!(s.windows & ab::kCountWindows)) continue;
    SCOPED_TRACE(s.name);
    dd::FilterSpec spec;
    ASSERT_EQ(dd::parse_filter_option(s.name, spec), "");
    spec.window = ab::Window::count(2000);
    spec.fpr = 1e-6;
    std::vector<unsigned char> mem;
    dd::DedupFilter d = make(spec, mem);
    const std::string g = d.guarantee(dd::Policy::insert_always);
    if (s.false_negatives) {
      EXPECT_NE(g.find("no window guarantee"), std::string::npos) << g;
      continue;
    }
    const uint64_t slack = d.slack();
    EXPECT_NE(g.find("within 2000 insertions"), std::string::npos) << g;
    if (slack) {
      EXPECT_NE(g.find("up to " + std::to_string(2000 + slack) + " insertions"), std::string::npos) << g;
    }
    // Probe keys at every phase of the epochs/generations: each is found
    // through the window and gone once window + slack insertions followed.
    uint64_t next = 1'000'000, late = 0, lost = 0;
    for (uint64_t probe = 0; probe < 40; ++probe) {
      const uint64_t k = probe;
      d.is_duplicate(key(k), dd::Policy::insert_always);
      for (uint64_t i = 0; i < 2000 + slack + 37; ++i) {
        if (i == 1998) lost += !d.contains(key(k));  // 1999 insertions after it: still inside
        d.is_duplicate(key(next++), dd::Policy::insert_always);
        if (i == 2000 + slack - 1) late += d.contains(key(k));  // window + slack insertions after it
      }
    }
    EXPECT_EQ(lost, 0u);
    EXPECT_EQ(late, 0u) << "a key outlived window + slack (" << slack << ")";
  }
  // A time window speaks seconds.
  dd::FilterSpec t;
  t.structure = ab::Structure::guarded_epoch;
  t.window = ab::Window::time(10'000'000'000);
  t.capacity = 100'000;
  t.fpr = 0.01;
  auto d = std::get<dd::DedupFilter>(dd::DedupFilter::plan(t));
  const std::string g = d.guarantee(dd::Policy::insert_on_miss);
  EXPECT_NE(g.find("within 10s of the last copy passed"), std::string::npos) << g;
  EXPECT_NE(g.find("remembered for up to " + dd::format_duration(10'000'000'000 + d.slack(), true)), std::string::npos)
      << g;
  const uint64_t r = std::get<ab::GuardedEpochConfig>(d.config().config).r;
  // One epoch of ⌈span/r⌉ past r of them, and their rounding past the span.
  EXPECT_EQ(d.slack(), (r + 1) * ((10'000'000'000 + r - 1) / r) - 10'000'000'000);
}

// The burst in flight (dedup_fwd): the lines prefetch_burst located, handed
// back to decide_burst, give the verdicts and state of decide_burst alone, for
// every structure and both policies, over bursts that cross the bulk forms'
// chunks of 64 and epochs that rotate mid-burst. Filters that do not locate
// by line leave the array as it was.
TEST(DedupFilter, LocatedLinesGiveTheVerdictsOfTheBurstAlone) {
  static_assert(dd::LocatesLines<ab::InterleavedEpochFilter<uint64_t>>);
  static_assert(!dd::LocatesLines<ab::TwoLineEpochFilter>);
  int marker = 0;
  size_t located_names = 0;
  for (const ab::StructureInfo& s : ab::kStructures)
    for (auto policy : {dd::Policy::insert_always, dd::Policy::insert_on_miss}) {
      dd::FilterSpec spec;
      ASSERT_EQ(dd::parse_filter_option(s.name, spec), "");
      spec.window = ab::Window::count(3000);
      spec.fpr = 0.01;
      std::vector<unsigned char> mem_plain, mem_located;
      dd::DedupFilter plain = make(spec, mem_plain);
      dd::DedupFilter located = make(spec, mem_located);
      const size_t sizes[] = {32, 70, 1, 64, 5, 129};
      uint64_t next = 0, differ = 0, dups = 0, bursts = 0;
      bool wrote = false;
      while (next < 20000) {
        const size_t n = sizes[bursts++ % std::size(sizes)];
        std::vector<ab::KeyHash> h(n);
        for (size_t i = 0; i < n; ++i, ++next)  // fresh keys, repeats from 7 back and from this burst
          h[i] = key(next % 3 == 0 && next >= 7 ? next - 7 : next % 11 == 0 && i > 0 ? next - 1 : next);
        std::vector<void*> at(n, &marker);
        bool dup_plain[129], dup_located[129];
        plain.decide_burst(h.data(), nullptr, n, policy, dup_plain);
        located.prefetch_burst(h.data(), n, at.data());
        for (void* p : at) wrote |= p != &marker;
        located.decide_burst(h.data(), nullptr, n, policy, dup_located, at.data());
        for (size_t i = 0; i < n; ++i) {
          differ += dup_plain[i] != dup_located[i];
          dups += dup_plain[i];
        }
      }
      EXPECT_EQ(differ, 0u) << s.name << " " << dd::policy_name(policy);
      EXPECT_GT(dups, 5000u) << s.name;  // the repeats were found: the stream tests both verdicts
      for (uint64_t i = next - 2000; i < next; ++i)
        EXPECT_EQ(plain.contains(key(i)), located.contains(key(i))) << s.name;
      const bool locates = located.visit([](auto& f) { return dd::LocatesLines<std::decay_t<decltype(f)>>; });
      EXPECT_EQ(wrote, locates) << s.name;
      located_names += locates && policy == dd::Policy::insert_always;
    }
  EXPECT_GE(located_names, 2u);  // interleaved and interleaved-128 at least
}
