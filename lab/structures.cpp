// structures: every registered structure at FPR 1% on the same streams: the
// three synthetic workloads and real captures keyed by source IP and by
// 5-tuple. One table to choose from: bits per item, model FPR, measured FPR,
// live FNR, expired-key positives, the planner's accesses per query and peak
// NPWS, and time per insertion and per query on this machine.
//
// Each structure is planned by name (lib/model's planner, the same plan the
// tools build), so a newly registered structure appears here by being
// registered.
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

namespace agebloom::lab {

int structures(const LabOptions& o) {
  struct Stream {
    std::string name;
    std::vector<uint64_t> keys;
    uint64_t w;
  };
  std::vector<Stream> streams;
  const uint64_t n = o.quick ? 24'000 : 120'000;
  for (Workload wl : kWorkloads) streams.push_back({workload_name(wl), synthetic_stream(wl, n, o.seed), n / 6});
  // Real captures: the one the repository ships, and (when ../shared/data or
  // $AGEBLOOM_DATA has them) a DDoS capture with thousands of sources and a
  // C&C capture of periodic connections; each keyed by source IP and 5-tuple.
  struct Capture {
    const char* path;
    const char* label;
    uint64_t w;
  };
  const Capture captures[] = {{"traces/pcapplusplus_example.pcap", "example.pcap", 500},
                              {"pcap/ddos/amp.UDP.bacnet.IOT.37810.pcapng", "ddos-bacnet.pcapng", 1000},
                              {"pcap/malware_c2/slips_test-cc-capture-1.pcap", "slips-cc.pcap", 1000}};
  for (const Capture& cap : captures) {
    const std::string path = find_data(cap.path);
    if (path.empty()) {
      std::printf("structures: %s not found (set AGEBLOOM_DATA to the shared data folder), skipped\n", cap.path);
      continue;
    }
    for (auto [mode, label] : {std::pair{packet::KeyMode::src_ip, "src-ip"}, std::pair{packet::KeyMode::flow, "5-tuple"}}) {
      std::string error;
      auto keys = capture_stream(path, mode, error);
      if (!error.empty()) {
        std::fprintf(stderr, "structures: %s\n", error.c_str());
        return 1;
      }
      streams.push_back({std::string(cap.label) + " " + label, std::move(keys), cap.w});
    }
    if (o.quick) break;  // the repository's own capture is enough for the regression check
  }
  Report r(o.out, "structures");
  if (!r.ok()) return 1;
  r.csv("stream,structure,window,bits_per_item,model_fpr,fpr,live_fnr,expired_positive,npws_measured,accesses_per_query,"
        "peak_npws,ns_per_insert,ns_per_query\n");
  r.md("FPR 1%%, count windows. Measured on the `%s` stream (W = %llu); all streams in the CSV.\n\n"
       "| structure | bits/item | model FPR | FPR | live FNR | expired pos. | NPWS measured | accesses/query (model) | "
       "peak NPWS (model) | ns/insert | ns/query |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
       streams[0].name.c_str(), static_cast<unsigned long long>(streams[0].w));
  std::printf("structures: %s at FPR 1%% over %zu streams\n",
              o.only.empty() ? "every registered structure" : "the structures --filter names", streams.size());
  bool ok = true;
  auto wanted = [&](Structure id) {
    if (o.only.empty()) return true;
    for (Structure x : o.only)
      if (x == id) return true;
    return false;
  };
  for (const StructureInfo& s : kStructures) {
    if (!wanted(s.id)) continue;
    for (const Stream& st : streams) {
      model::PlanRequest req;
      req.window = Window::count(st.w);
      req.fpr = 0.01;
      req.structure = s.id;
      auto planned = model::plan(req);
      if (auto* e = std::get_if<model::PlanError>(&planned)) {
        std::fprintf(stderr, "structures: %s: %s\n", s.name, e->message.c_str());
        ok = false;
        continue;
      }
      const model::Plan& p = std::get<model::Plan>(planned);
      const WindowMetrics m = measure_count_window(p.config, st.keys, st.w, st.w, o.seed);
      r.csv("%s,%s,%llu,%.2f,%.5f,%.5f,%.5f,%.5f,%.4f,%.2f,%.4f,%.1f,%.1f\n", st.name.c_str(), s.name,
            static_cast<unsigned long long>(st.w), m.bits_per_item, m.model_fpr, m.fpr, m.live_fnr, m.expired_positive,
            m.npws, p.accesses_per_query, p.peak_npws, m.ns_per_insert, m.ns_per_query);
      if (&st == &streams[0]) {
        r.md("| %s | %.1f | %.4f | %.4f | %.4f | %.4f | %.3f | %.1f | %.3f | %.0f | %.0f |\n", s.name, m.bits_per_item,
             m.model_fpr, m.fpr, m.live_fnr, m.expired_positive, m.npws, p.accesses_per_query, p.peak_npws,
             m.ns_per_insert, m.ns_per_query);
        std::printf("%-22s %6.1f bits/item  FPR %.4f (model %.4f)  live FNR %.4f  expired %.4f  %4.0f ns/query\n",
                    s.name, m.bits_per_item, m.fpr, m.model_fpr, m.live_fnr, m.expired_positive, m.ns_per_query);
      }
      if (!s.false_negatives && m.live_fnr != 0.0) {
        std::fprintf(stderr, "structures: FAILED: %s missed live keys on %s (FNR %.4f)\n", s.name, st.name.c_str(),
                     m.live_fnr);
        ok = false;
      }
    }
  }
  if (!r.publish(o, "structures.py")) return 1;

  // Bits per item against the target FPR, as each structure's planner hook
  // sizes it (W = 10^6): the price of each layout at every precision.
  Report b(o.out, "structures-bits");
  if (!b.ok()) return 1;
  b.csv("structure,target_fpr,bits_per_item,model_fpr,accesses_per_query\n");
  b.md("Bits per item the planner gives each structure at W = 10^6.\n\n| structure |");
  const double targets[] = {1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6};
  for (double t : targets) b.md(" %g |", t);
  b.md("\n|---|");
  for (double t : targets) b.md("---:|"), (void)t;
  b.md("\n");
  for (const StructureInfo& s : kStructures) {
    if (!wanted(s.id)) continue;
    b.md("| %s |", s.name);
    for (double t : targets) {
      model::PlanRequest req;
      req.window = Window::count(1'000'000);
      req.fpr = t;
      req.structure = s.id;
      auto planned = model::plan(req);
      if (auto* p = std::get_if<model::Plan>(&planned)) {
        b.csv("%s,%g,%.3f,%.4g,%.2f\n", s.name, t, p->bits_per_item, p->expected_fpr, p->accesses_per_query);
        b.md(" %.1f |", p->bits_per_item);
      } else {
        b.md(" - |");
      }
    }
    b.md("\n");
  }
  if (!b.publish(o, "structures_bits.py")) return 1;
  return ok ? 0 : 1;
}

}  // namespace agebloom::lab
