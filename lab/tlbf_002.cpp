// 002-table2: Rodrigues, Shtul, Baquero, Almeida, "Time-limited Bloom
// Filter", §7.2, Table 2: bits per element of the time window, min and max,
// per error rate, on a steady stream of distinct keys; then the same filter
// under a rate step (the reason it exists: memory follows the rate).
//
// The paper's figures for the stream were lost in conversion (its span,
// rate and capacities are blank in our copy). It ran filters of "different
// initial capacities and k and l combinations" at each error rate; so here:
// T = 1 s on a simulated clock, 10,000 distinct keys per second (--quick:
// 2,000), at each error rate every (k, l) of the reference implementation's
// row with an initial capacity of 1/2, 1 and 2 times the rate (under-, well-
// and over-dimensioned), 10 spans each; bits per element = bits in use /
// keys inserted within the last T, sampled at every insertion after the
// first 5 spans; min and max over all of them. The step: 2 spans at the planned rate, 2 at 10x,
// 3 back at the planned rate, recording the largest bits in use per phase
// and the memory at the end.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <iterator>
#include <string>
#include <utility>

#include "agebloom/agebloom.hpp"
#include "experiment.hpp"
#include "measure.hpp"
#include "report.hpp"
#include "owned.hpp"

namespace agebloom::lab {

namespace {

constexpr uint64_t kSecond = 1'000'000'000;

struct PaperRow {
  double fpr, min_bits, max_bits;
};
constexpr PaperRow kPaper[] = {{0.1, 10, 13}, {0.01, 19, 24}, {0.001, 26, 35}, {0.0001, 32, 45}, {0.00001, 41, 56}};
// The reference implementation's (k, l) per error rate 10^-e, levels 0..5
// (ALGORITHMS.md; the filters the paper's "different k and l combinations" come from).
constexpr std::pair<uint32_t, uint32_t> kReferenceRows[5][6] = {
    {{4, 3}, {5, 7}, {6, 14}, {7, 28}, {8, 56}, {0, 0}},
    {{7, 5}, {8, 8}, {9, 14}, {10, 25}, {11, 46}, {12, 88}},
    {{10, 7}, {11, 9}, {12, 14}, {13, 23}, {14, 40}, {15, 74}},
    {{14, 11}, {15, 15}, {16, 22}, {17, 36}, {18, 63}, {19, 117}},
    {{17, 13}, {18, 16}, {19, 22}, {20, 33}, {21, 54}, {22, 95}}};

using Tlbf = Owned<TimeLimitedFilter>;



}  // namespace

int table2_002(const LabOptions& o) {
  // Key id's hash under --seed (workload_hasher; 0x71bf at seed 1).
  const Hasher hash = workload_hasher(0x71bf, o);
  auto key = [&hash](uint64_t id) { return hash(&id, sizeof id); };
  const uint64_t rate = o.quick ? 2'000 : 10'000;  // keys per second
  Report r(o.out, "002-table2");
  if (!r.ok()) return 1;
  r.csv("phase,fpr_target,k,l,capacity,seconds,bits_per_window_element,slices,bits_in_use\n");
  // The FPR: each filter's measured over min(10^6, 100 / target) fresh keys,
  // so about 100 false positives at the target (10 at 1e-5); the pooled rate
  // (all filters' false positives over all their probes) is the estimate to
  // read, the worst filter's shows the spread, which sampling alone widens.
  r.md("| error rate | (k, l) filters | bits/element min | max | paper min | paper max | FPR pooled | worst filter's | live FNR |\n"
       "|---:|---|---:|---:|---:|---:|---:|---:|---:|\n");
  std::printf("002-table2: T = 1 s, %llu distinct keys per second; per error rate, the reference (k, l) row with "
              "capacities of 1/2, 1 and 2 times the rate\n", static_cast<unsigned long long>(rate));
  bool ok = true;
  for (size_t e = 0; e < std::size(kPaper); ++e) {
    const PaperRow& p = kPaper[e];
    double lo = 1e300, hi = 0, worst_fp = 0;
    uint64_t misses = 0, live_checked = 0, fp_all = 0, probes_all = 0;
    std::string shapes;
    for (auto [k, l] : kReferenceRows[e]) {
      if (k == 0) continue;
      char shape[32];
      std::snprintf(shape, sizeof shape, "%s(%u,%u)", shapes.empty() ? "" : " ", k, l);
      shapes += shape;
      for (double factor : {0.5, 1.0, 2.0}) {
        const uint64_t capacity = static_cast<uint64_t>(factor * static_cast<double>(rate));
        auto c = TimeLimitedConfig::with_shape(Window::time(kSecond), k, l, capacity);
        if (!c) {
          std::fprintf(stderr, "002-table2: (%u, %u): %s\n", k, l, c.what());
          return 1;
        }
        Tlbf f(*c);
        if (!f.ok) return 1;
        const uint64_t step = kSecond / rate;
        uint64_t now = kSecond;
        std::deque<std::pair<uint64_t, uint64_t>> live;  // (id, time) of the last second
        const uint64_t base = (uint64_t{e} << 48) | (uint64_t{k} << 40) | (uint64_t{l} << 28) |
                              (static_cast<uint64_t>(factor * 2) << 24);
        for (uint64_t i = 0; i < 10 * rate; ++i) {
          now += step;
          (void)f.f.advance(now);
          f.f.insert(key(base + i));
          live.emplace_back(base + i, now);
          while (now - live.front().second >= kSecond) live.pop_front();
          if (i >= 5 * rate) {  // settled: over-dimensioned filters need a few shifts (§7.2)
            const double bpe = static_cast<double>(f.f.bits_in_use()) / static_cast<double>(live.size());
            lo = std::min(lo, bpe);
            hi = std::max(hi, bpe);
          }
          if (i % (rate / 10) == 0)
            r.csv("steady,%g,%u,%u,%llu,%.3f,%.3f,%u,%llu\n", p.fpr, k, l, static_cast<unsigned long long>(capacity),
                  static_cast<double>(now) / kSecond,
                  static_cast<double>(f.f.bits_in_use()) / static_cast<double>(live.size()), f.f.slices(),
                  static_cast<unsigned long long>(f.f.bits_in_use()));
        }
        for (const auto& [id, t] : live) misses += !f.f.contains(key(id));
        live_checked += live.size();
        const uint64_t probes = static_cast<uint64_t>(std::min(1e6, 100 / p.fpr));
        uint64_t fp = 0;
        for (uint64_t i = 0; i < probes; ++i) fp += f.f.contains(key((uint64_t{1} << 62) + i));
        worst_fp = std::max(worst_fp, static_cast<double>(fp) / static_cast<double>(probes));
        fp_all += fp;
        probes_all += probes;
      }
    }
    const double fnr = static_cast<double>(misses) / static_cast<double>(live_checked);
    const double pooled = static_cast<double>(fp_all) / static_cast<double>(probes_all);
    r.md("| %g | %s | %.1f | %.1f | %.0f | %.0f | %.3g | %.3g | %.4f |\n", p.fpr, shapes.c_str(), lo, hi, p.min_bits,
         p.max_bits, pooled, worst_fp, fnr);
    std::printf("error rate %-7g bits per window element %.1f..%.1f (paper %.0f..%.0f), FPR %.3g pooled (worst "
                "filter %.3g), live FNR %.4f\n",
                p.fpr, lo, hi, p.min_bits, p.max_bits, pooled, worst_fp, fnr);
    if (misses) {
      std::fprintf(stderr, "002-table2: FAILED: %llu live keys missed at %g\n", static_cast<unsigned long long>(misses),
                   p.fpr);
      ok = false;
    }
    // The rows are designed to hold the target; the pooled rate counts >= 180
    // false positives at the target, so 25% over it is > 3 standard errors
    // (unscattered probes measured 1.86x at 1e-5 in --quick's 768-bit slices).
    if (pooled > 1.25 * p.fpr) {
      std::fprintf(stderr, "002-table2: FAILED: at %g the pooled FPR is %.3g, over 1.25x the target\n", p.fpr, pooled);
      ok = false;
    }
    // The paper's stream (rate, capacities) is blank in our copy, so the
    // region, not the digits, is what can be checked: the ranges overlap and
    // each end is within 30% of the paper's. (Our minima sit 2-3 bits above
    // the paper's at every error rate, the maxima within 10%: docs/RESULTS.md.)
    if (lo > p.max_bits || hi < p.min_bits || std::fabs(lo - p.min_bits) > 0.3 * p.min_bits ||
        std::fabs(hi - p.max_bits) > 0.3 * p.max_bits) {
      std::fprintf(stderr, "002-table2: FAILED: at %g, %.1f..%.1f bits per element is not within 30%% of the paper's "
                           "%.0f..%.0f\n", p.fpr, lo, hi, p.min_bits, p.max_bits);
      ok = false;
    }
  }

  // The rate step, at 1%.
  auto c = TimeLimitedConfig::for_fpr(Window::time(kSecond), 0.01, {.capacity = rate});
  if (!c) return 1;
  Tlbf f(*c);
  if (!f.ok) return 1;
  struct Phase {
    const char* name;
    uint64_t per_second, seconds;
  };
  const Phase phases[] = {{"planned", rate, 2}, {"x10", 10 * rate, 2}, {"back", rate, 3}};
  uint64_t now = kSecond, id = 0;
  r.md("\nRate step at 1%% (planned %llu keys/s):\n\n| phase | keys/s | largest bits in use | largest slices | bits at the end "
       "| bits per window element at the end |\n|---|---:|---:|---:|---:|---:|\n",
       static_cast<unsigned long long>(rate));
  uint64_t planned_bits = 0;
  for (const Phase& ph : phases) {
    uint64_t max_bits = 0;
    uint32_t max_slices = 0;
    const uint64_t step = kSecond / ph.per_second;
    for (uint64_t i = 0; i < ph.per_second * ph.seconds; ++i, ++id) {
      now += step;
      (void)f.f.advance(now);
      f.f.insert(key(id));
      max_bits = std::max<uint64_t>(max_bits, f.f.bits_in_use());
      max_slices = std::max(max_slices, f.f.slices());
      if (i % (ph.per_second / 20) == 0)
        r.csv("step-%s,0.01,%u,%u,%llu,%.3f,%.3f,%u,%llu\n", ph.name, c->k, c->l, static_cast<unsigned long long>(rate),
              static_cast<double>(now) / kSecond,
              static_cast<double>(f.f.bits_in_use()) / static_cast<double>(ph.per_second), f.f.slices(),
              static_cast<unsigned long long>(f.f.bits_in_use()));
    }
    if (std::string(ph.name) == "planned") planned_bits = f.f.bits_in_use();
    r.md("| %s | %llu | %llu | %u | %llu | %.1f |\n", ph.name, static_cast<unsigned long long>(ph.per_second),
         static_cast<unsigned long long>(max_bits), max_slices, static_cast<unsigned long long>(f.f.bits_in_use()),
         static_cast<double>(f.f.bits_in_use()) / static_cast<double>(ph.per_second));
    std::printf("rate step, %-7s %7llu keys/s: largest %llu bits in use, %u slices; %llu at the end\n", ph.name,
                static_cast<unsigned long long>(ph.per_second), static_cast<unsigned long long>(max_bits), max_slices,
                static_cast<unsigned long long>(f.f.bits_in_use()));
  }
  // §3 (ALGORITHMS.md, "settled behaviour"): memory falls back within about one span after the rate drops.
  if (f.f.bits_in_use() > 2 * planned_bits) {
    std::fprintf(stderr, "002-table2: FAILED: memory did not return after the step (%llu bits, %llu before it)\n",
                 static_cast<unsigned long long>(f.f.bits_in_use()), static_cast<unsigned long long>(planned_bits));
    ok = false;
  }
  if (!r.publish(o, "002_table2.py")) return 1;
  return ok ? 0 : 1;
}

}  // namespace agebloom::lab
