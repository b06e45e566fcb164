// 001-table2, 001-figure6, 001-figure4: Shtul, Baquero, Almeida,
// "Age-Partitioned Bloom Filters", §5.5 (Table 2), §5.6.1 (Figure 6) and §5.2
// (Figure 4, the transition zone).
//
//   001-table2   the 25 (k, l) rows: the paper's FP, our model's (the recurrence F of §5.3,
//                lib/model) and the FP measured on fresh keys, averaged over a whole
//                generation cycle at steady state (w = 20,000; --quick 1,000; slices
//                sized as the paper's parameterisation: g = ⌈w/l⌉, m = ⌈k·g/ln 2⌉);
//   001-figure6  FP as 10^4 distinct keys are inserted into an empty filter of w = 10^3, for
//                the lowest (k, l) of each precision 10^-1..10^-5 (the figure's five lines);
//   001-figure4  the chance that a key is still reported against its age in insertions: 1 up
//                to w (no false negatives), then the decay through the slack of k
//                generations, for the lowest (k, l) at 10^-2 and 10^-4.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "agebloom/agebloom.hpp"
#include "agebloom/model/models.hpp"
#include "experiment.hpp"
#include "measure.hpp"
#include "report.hpp"
#include "owned.hpp"

namespace agebloom::lab {

namespace {

// The paper's Table 2 "actual fp" column, in the order of model::apbf_table2_configs().
constexpr double kPaperFp[25] = {0.100586, 0.101603, 0.098623, 0.099033, 0.100234, 0.011232, 0.010244,
                                 0.010212, 0.010076, 0.009948, 0.001211, 0.000918, 0.000981, 0.000928,
                                 0.000988, 0.000099, 0.000100, 0.000097, 0.000099, 0.000099, 0.000011,
                                 0.000009, 0.000010, 0.000010, 0.000010};

using Apbf = Owned<ApbfFilter>;

// Key id's hash under --seed (workload_hasher; 0xa9bf at seed 1).
struct Keys {
  Hasher hash;
  explicit Keys(const LabOptions& o) : hash(workload_hasher(0xa9bf, o)) {}
  KeyHash operator()(uint64_t id) const { return hash(&id, sizeof id); }
};

// Fresh-key FP right now: `probes` keys never inserted (ids with the top bit set).
double probe_fp(const ApbfFilter& f, const Keys& key, uint64_t probes, uint64_t& next_fresh) {
  uint64_t hits = 0;
  for (uint64_t i = 0; i < probes; ++i) hits += f.contains(key((uint64_t{1} << 63) | next_fresh++));
  return static_cast<double>(hits) / static_cast<double>(probes);
}

}  // namespace

int table2_001(const LabOptions& o) {
  const Keys key(o);
  // Table 2 holds for any w: the full run at 20,000, --quick at the paper's
  // Figure 6 size, slices of 576 to 2,064 bits, where unscattered probes put
  // (21, 54) at 5.6x its model (ALGORITHMS.md, "Why the scatter"), so the
  // regression check covers small ranges too.
  const uint64_t w = o.quick ? 1000 : 20'000;
  Report r(o.out, "001-table2");
  if (!r.ok()) return 1;
  r.csv("k,l,paper_fp,model_fp,measured_fp,probes,measured_over_model\n");
  r.md("| k | l | paper FP | model FP | measured FP | measured / model |\n|---:|---:|---:|---:|---:|---:|\n");
  std::printf("001-table2: w = %llu, FP measured over a generation cycle at steady state\n",
              static_cast<unsigned long long>(w));
  const auto configs = model::apbf_table2_configs();
  bool ok = true;
  double lo_ratio = 1e300, hi_ratio = 0;
  for (size_t i = 0; i < configs.size(); ++i) {
    const auto [k, l] = configs[i];
    auto c = ApbfConfig::with_shape(Window::count(w), k, l);
    if (!c) return 1;
    Apbf f(*c);
    if (!f.ok) return 1;
    const double model_fp = model::apbf_table2_row(k, l).actual_fp;
    // Enough probes for ~400 (quick: ~200) false positives at the model's rate.
    const uint64_t probes = static_cast<uint64_t>((o.quick ? 200 : 400) / model_fp);
    uint64_t id = 0, fresh = 0;
    for (; id < 3 * (w + c->generation * k); ++id) f.f.insert(key(id));  // steady state
    // Average over one generation cycle: probe at 10 phases of it.
    double sum = 0;
    for (int phase = 0; phase < 10; ++phase) {
      for (uint64_t j = 0; j < c->generation / 10 + 1; ++j) f.f.insert(key(id++));
      sum += probe_fp(f.f, key, probes / 10 + 1, fresh);
    }
    const double measured = sum / 10;
    const double ratio = measured / model_fp;
    lo_ratio = std::min(lo_ratio, ratio);
    hi_ratio = std::max(hi_ratio, ratio);
    r.csv("%u,%u,%.6g,%.6g,%.6g,%llu,%.3f\n", k, l, kPaperFp[i], model_fp, measured,
          static_cast<unsigned long long>(probes), ratio);
    r.md("| %u | %u | %.6f | %.6f | %.6f | %.2f |\n", k, l, kPaperFp[i], model_fp, measured, ratio);
    // The model is the peak-phase-free average the paper tabulates; the
    // measurement averages phases, so they agree within sampling noise and
    // the generation's saw-tooth (Figure 6).
    if (!(ratio > 0.6 && ratio < 1.4)) {
      std::fprintf(stderr, "001-table2: FAILED: (k=%u, l=%u) measured FP %.3g is not within 40%% of the model's %.3g\n",
                   k, l, measured, model_fp);
      ok = false;
    }
    // (13, 23): the paper printed FP(13, 22) in that row (docs/PAPERS.md); every other row must agree.
    const bool misprint = k == 13 && l == 23;
    if (!misprint && std::fabs(model_fp - kPaperFp[i]) > 0.02 * kPaperFp[i] + 1e-6) {
      std::fprintf(stderr, "001-table2: FAILED: (k=%u, l=%u) model FP %.6f differs from the paper's %.6f\n", k, l,
                   model_fp, kPaperFp[i]);
      ok = false;
    }
  }
  std::printf("measured / model over the %zu rows: %.2f..%.2f\n", configs.size(), lo_ratio, hi_ratio);
  if (!r.publish(o, "001_table2.py")) return 1;
  return ok ? 0 : 1;
}

int figure6_001(const LabOptions& o) {
  const Keys key(o);
  const uint64_t w = 1000, inserts = 10'000, step = o.quick ? 500 : 100;
  const std::pair<uint32_t, uint32_t> lowest[] = {{4, 3}, {7, 5}, {10, 7}, {14, 11}, {17, 13}};
  Report r(o.out, "001-figure6");
  if (!r.ok()) return 1;
  r.csv("k,l,target_fp,insertions,measured_fp,probes\n");
  r.md("| k | l | target FP | mean FP after 2w insertions | max | min |\n|---:|---:|---:|---:|---:|---:|\n");
  std::printf("001-figure6: w = %llu, %llu distinct insertions, FP sampled every %llu\n",
              static_cast<unsigned long long>(w), static_cast<unsigned long long>(inserts),
              static_cast<unsigned long long>(step));
  bool ok = true;
  int e = 1;
  for (auto [k, l] : lowest) {
    const double target = std::pow(10.0, -e);
    auto c = ApbfConfig::with_shape(Window::count(w), k, l);
    if (!c) return 1;
    Apbf f(*c);
    if (!f.ok) return 1;
    const uint64_t probes = static_cast<uint64_t>((o.quick ? 20 : 100) / target);
    uint64_t fresh = 0;
    std::vector<double> settled;
    for (uint64_t id = 0; id < inserts;) {
      for (uint64_t j = 0; j < step; ++j) f.f.insert(key(id++));
      const double fp = probe_fp(f.f, key, probes, fresh);
      r.csv("%u,%u,%g,%llu,%.6g,%llu\n", k, l, target, static_cast<unsigned long long>(id), fp,
            static_cast<unsigned long long>(probes));
      if (id > 2 * w) settled.push_back(fp);
    }
    double mean = 0;
    for (double v : settled) mean += v;
    mean /= static_cast<double>(settled.size());
    const auto [mn, mx] = std::minmax_element(settled.begin(), settled.end());
    r.md("| %u | %u | %g | %.3g | %.3g | %.3g |\n", k, l, target, mean, *mx, *mn);
    std::printf("(k=%u, l=%u) target %g: settled FP mean %.3g (min %.3g, max %.3g)\n", k, l, target, mean, *mn, *mx);
    // The figure's claim: once full, the FP stabilises around the configured
    // rate. The lowest (k, l) of a precision sits above it by design ((10, 7)'s
    // model is 1.21x its target; measured up to 1.38x with --quick's samples);
    // 1.5x is the bound checked, which the unscattered probes' 1.65x at 1e-5
    // (1.9 kbit slices for k = 17) failed.
    if (!(mean < 1.5 * target && mean > 0.4 * target)) {
      std::fprintf(stderr, "001-figure6: FAILED: (k=%u, l=%u) settles at %.3g, not around %g\n", k, l, mean, target);
      ok = false;
    }
    ++e;
  }
  if (!r.publish(o, "001_figure6.py")) return 1;
  return ok ? 0 : 1;
}

int figure4_001(const LabOptions& o) {
  const Keys key(o);
  const uint64_t w = 1000;
  const std::pair<uint32_t, uint32_t> shapes[] = {{7, 5}, {14, 11}};
  const uint64_t rounds = o.quick ? 200 : 2000;  // independent filters per shape
  Report r(o.out, "001-figure4");
  if (!r.ok()) return 1;
  r.csv("k,l,age,reported\n");
  r.md("| k | l | generation g | reported at age w − 1 (the oldest in the window) | at w + g | at w + k·g/2 | at w + k·g | beyond w + (k+1)·g |\n"
       "|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  bool ok = true;
  for (auto [k, l] : shapes) {
    auto c = ApbfConfig::with_shape(Window::count(w), k, l);
    if (!c) return 1;
    const uint64_t g = c->generation, span = w + (k + 2) * g;
    std::vector<uint64_t> reported(span, 0);
    for (uint64_t round = 0; round < rounds; ++round) {
      Apbf f(*c);
      if (!f.ok) return 1;
      // A filter at steady state, at a random phase of its generation, then
      // the last `span` insertions asked for, by age.
      const uint64_t base = (round + 1) << 32;
      const uint64_t n = 3 * span + (round * 7919) % g;
      for (uint64_t i = 0; i < n; ++i) f.f.insert(key(base + i));
      for (uint64_t age = 0; age < span; ++age) reported[age] += f.f.contains(key(base + n - 1 - age));
    }
    auto at = [&](uint64_t age) { return static_cast<double>(reported[std::min(age, span - 1)]) / rounds; };
    for (uint64_t age = 0; age < span; ++age) r.csv("%u,%u,%llu,%.5f\n", k, l, static_cast<unsigned long long>(age), at(age));
    r.md("| %u | %u | %llu | %.3f | %.3f | %.3f | %.3f | %.3f |\n", k, l, static_cast<unsigned long long>(g), at(w - 1),
         at(w + g), at(w + k * g / 2), at(w + k * g), at(span - 1));
    std::printf("(k=%u, l=%u) g=%llu: reported at age w-1 %.3f, w+g %.3f, w+kg/2 %.3f, w+kg %.3f, w+(k+1)g %.4f\n", k, l,
                static_cast<unsigned long long>(g), at(w - 1), at(w + g), at(w + k * g / 2), at(w + k * g), at(span - 1));
    for (uint64_t age = 0; age < w; ++age)
      if (reported[age] != rounds) {
        std::fprintf(stderr, "001-figure4: FAILED: (k=%u, l=%u) a key of age %llu was missed\n", k, l,
                     static_cast<unsigned long long>(age));
        ok = false;
        break;
      }
  }
  if (!r.publish(o, "001_figure4.py")) return 1;
  return ok ? 0 : 1;
}

}  // namespace agebloom::lab
