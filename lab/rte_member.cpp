// rte-member: DPDK's rte_member beside ours on the same streams. A DPDK user's
// alternatives for "keep recent keys" (perf/rte_member_peers.hpp):
//   rte_member_ht_cache  RTE_MEMBER_TYPE_HT in cache mode (num_keys = W: 32 bits per item),
//                        which evicts live keys when buckets fill;
//   rte_member_vbf_pair  two vBFs at 0.5% each, one reset every W/2 insertions: remembers
//                        between W/2 and W insertions.
// Ours: the guarded epoch filter, the one-line layout (--filter auto's choice) and the APBF at
// FPR 1%, and the guarded epoch filter given the HT cache's own 32 bits per item.
// Metrics as everywhere in the lab (measure.hpp): live FNR, fresh FPR, expired positives, bits
// per item. W = 20,000 (--quick: 4,000), 6W insertions of each synthetic workload.
#include <cstdio>
#include <string>
#include <variant>
#include <vector>

#include "agebloom/agebloom.hpp"
#include "agebloom/model/planner.hpp"
#include "experiment.hpp"
#include "measure.hpp"
#include "report.hpp"
#include "workload.hpp"

#if AGEBLOOM_LAB_DPDK
#include "rte_member_peers.hpp"

#if AGEBLOOM_LAB_DPDK
#include <rte_random.h>
#endif
#endif

namespace agebloom::lab {

int rte_member(const LabOptions& o) {
#if !AGEBLOOM_LAB_DPDK
  (void)o;
  std::fprintf(stderr, "rte-member: this agebloom-lab was built without libdpdk (install libdpdk-dev, reconfigure)\n");
  return 1;
#else
  if (!perf::init_eal("agebloom-lab")) {
    std::fprintf(stderr, "rte-member: DPDK's EAL did not start here (rte_member needs its heap)\n");
    return 1;
  }
  // 6W insertions and 3/8 of a window more: a phase where neither the vBF pair nor an epoch
  // filter has just rotated (at a multiple of W/2 the pair holds exactly the last W keys).
  const uint64_t w = o.quick ? 4'000 : 20'000, n = 6 * w + 3 * w / 8;
  Report r(o.out, "rte-member");
  if (!r.ok()) return 1;
  r.csv("stream,subject,bits_per_item,fpr,live_fnr,expired_positive,ns_per_insert,ns_per_query\n");
  r.md("W = %llu, %llu insertions per workload; medians over the three workloads.\n\n"
       "| subject | bits/item | FPR | live FNR | expired pos. |\n|---|---:|---:|---:|---:|\n",
       static_cast<unsigned long long>(w), static_cast<unsigned long long>(n));
  struct Line {
    std::string name;
    std::vector<double> bpi, fpr, fnr, exp;
  };
  std::vector<Line> lines;
  auto record = [&](const std::string& stream, const std::string& name, const WindowMetrics& m) {
    r.csv("%s,%s,%.2f,%.5f,%.5f,%.5f,%.1f,%.1f\n", stream.c_str(), name.c_str(), m.bits_per_item, m.fpr, m.live_fnr,
          m.expired_positive, m.ns_per_insert, m.ns_per_query);
    Line* l = nullptr;
    for (auto& x : lines)
      if (x.name == name) l = &x;
    if (!l) l = &lines.emplace_back(Line{name, {}, {}, {}, {}});
    l->bpi.push_back(m.bits_per_item);
    l->fpr.push_back(m.fpr);
    l->fnr.push_back(m.live_fnr);
    l->exp.push_back(m.expired_positive);
  };
  for (Workload wl : kWorkloads) {
    const std::vector<uint64_t> stream = synthetic_stream(wl, n, o.seed);
    const char* sname = workload_name(wl);
    // DPDK's peers hash the 8-byte ids themselves (CRC32-C).
    perf::Chunk one(1);
    one.size = 1;
    {
      // HT cache evicts a random entry of a full bucket by rte_rand(): seeded
      // per table from --seed, so a run repeats its figures exactly.
      rte_srand(o.seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(wl));
      perf::HtCacheSubject ht(w);
      WindowMetrics m = measure_count_window(
          [&](uint64_t id) { one.keys[0] = id; (void)ht.test_and_insert(one, 0); },
          [&](uint64_t id) { one.keys[0] = id; return ht.contains(one, 0); }, stream, w, w, o.seed);
      m.bits_per_item = ht.bits_per_item();
      record(sname, perf::HtCacheSubject::kName, m);
    }
    {
      perf::VbfPairSubject vbf(w);
      WindowMetrics m = measure_count_window(
          [&](uint64_t id) { one.keys[0] = id; vbf.insert(one, 0); },
          [&](uint64_t id) { one.keys[0] = id; return vbf.contains(one, 0); }, stream, w, w, o.seed);
      m.bits_per_item = vbf.bits_per_item();
      record(sname, perf::VbfPairSubject::kName, m);
    }
    for (Structure s : {Structure::guarded_epoch, Structure::interleaved, Structure::apbf}) {
      model::PlanRequest req;
      req.window = Window::count(w);
      req.fpr = 0.01;
      req.structure = s;
      auto planned = model::plan(req);
      if (!std::holds_alternative<model::Plan>(planned)) return 1;
      record(sname, std::string(name(s)) + " (1%)",
             measure_count_window(std::get<model::Plan>(planned).config, stream, w, w, o.seed));
    }
    auto same = GuardedEpochConfig::for_bits_per_item(Window::count(w), 32, 8);
    if (!same) return 1;
    record(sname, "guarded-epoch (32 bits/item)",
           measure_count_window(FilterConfig{Structure::guarded_epoch, AnyConfig(*same)}, stream, w, w, o.seed));
  }
  bool ok = true;
  for (const Line& l : lines) {
    r.md("| %s | %.1f | %.5f | %.4f | %.4f |\n", l.name.c_str(), median(l.bpi), median(l.fpr), median(l.fnr),
         median(l.exp));
    std::printf("%-30s %5.1f bits/item  FPR %.5f  live FNR %.4f  expired %.4f\n", l.name.c_str(), median(l.bpi),
                median(l.fpr), median(l.fnr), median(l.exp));
    if (l.name.rfind("rte_member", 0) != 0)
      for (double v : l.fnr)
        if (v != 0.0) {
          std::fprintf(stderr, "rte-member: FAILED: %s missed live keys\n", l.name.c_str());
          ok = false;
        }
  }
  perf::cleanup_eal();
  if (!r.publish(o, "rte_member.py")) return 1;
  return ok ? 0 : 1;
#endif
}

}  // namespace agebloom::lab
