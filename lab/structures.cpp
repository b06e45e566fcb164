// structures: every registered structure at FPR 1% on the same streams: the
// three synthetic workloads and two real captures keyed by source IP and by
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
  const std::string capture = find_data("traces/pcapplusplus_example.pcap");
  if (!capture.empty()) {
    for (auto [mode, label] : {std::pair{packet::KeyMode::src_ip, "src-ip"}, std::pair{packet::KeyMode::flow, "5-tuple"}}) {
      std::string error;
      auto keys = capture_stream(capture, mode, error);
      if (!error.empty()) {
        std::fprintf(stderr, "structures: %s\n", error.c_str());
        return 1;
      }
      streams.push_back({std::string("example.pcap ") + label, std::move(keys), 500});
    }
  }
  Report r(o.out, "structures");
  if (!r.ok()) return 1;
  r.csv("stream,structure,window,bits_per_item,model_fpr,fpr,live_fnr,expired_positive,accesses_per_query,peak_npws,"
        "ns_per_insert,ns_per_query\n");
  r.md("FPR 1%%, count windows. Measured on the `%s` stream (W = %llu); all streams in the CSV.\n\n"
       "| structure | bits/item | model FPR | FPR | live FNR | expired pos. | accesses/query | peak NPWS | ns/insert | ns/query |\n"
       "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
       streams[0].name.c_str(), static_cast<unsigned long long>(streams[0].w));
  std::printf("structures: every registered structure at FPR 1%% over %zu streams\n", streams.size());
  bool ok = true;
  for (const StructureInfo& s : kStructures) {
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
      r.csv("%s,%s,%llu,%.2f,%.5f,%.5f,%.5f,%.5f,%.2f,%.4f,%.1f,%.1f\n", st.name.c_str(), s.name,
            static_cast<unsigned long long>(st.w), m.bits_per_item, m.model_fpr, m.fpr, m.live_fnr, m.expired_positive,
            p.accesses_per_query, p.peak_npws, m.ns_per_insert, m.ns_per_query);
      if (&st == &streams[0]) {
        r.md("| %s | %.1f | %.4f | %.4f | %.4f | %.4f | %.1f | %.3f | %.0f | %.0f |\n", s.name, m.bits_per_item,
             m.model_fpr, m.fpr, m.live_fnr, m.expired_positive, p.accesses_per_query, p.peak_npws, m.ns_per_insert,
             m.ns_per_query);
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
  if (!r.close()) return 1;
  std::printf("wrote %s, %s\n", r.csv_path.c_str(), r.md_path.c_str());
  if (!plot(o, "structures.py", r.csv_path, r.png_path)) return 1;
  std::printf("wrote %s\n", r.png_path.c_str());
  return ok ? 0 : 1;
}

}  // namespace agebloom::lab
