// Exact ground truth for a count window, and the metrics of ALGORITHMS.md
// ("Metrics"): a stream is inserted whole (insert-always), then three query
// sets are asked of the final state:
//   live     keys inserted within the last W insertions: each must answer yes;
//   fresh    keys never inserted: the FPR;
//   expired  keys last inserted in the window before (W to 2W insertions ago)
//            and not since: the stale-positive rate (the Guarded Epoch paper's
//            "expired pos.", Sec. 4).
// Structures come from the registry (FilterConfig), so any registered
// structure can be measured by name.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "agebloom/dedup/dedup_filter.hpp"
#include "experiment.hpp"

namespace agebloom::lab {

struct WindowMetrics {
  uint64_t live = 0, fresh = 0, expired = 0;  // queries asked of each set
  double live_fnr = 0, fpr = 0, expired_positive = 0;
  // Measured NPWS (APBF §5.2): slack keys reported / W, i.e. the expired
  // positive rate times the keys last seen W to 2W insertions ago, over W.
  double npws = 0;
  double bits_per_item = 0, model_fpr = 0;
  double ns_per_insert = 0, ns_per_query = 0;
};

// `queries` of each set (fewer when the stream has fewer such keys).
WindowMetrics measure_count_window(const FilterConfig& config, const std::vector<uint64_t>& stream, uint64_t w,
                                   uint64_t queries, uint64_t seed);

// The same for any subject that takes 64-bit ids (a peer such as DPDK's
// rte_member, which hashes keys itself): insert(id), contains(id).
WindowMetrics measure_count_window(const std::function<void(uint64_t)>& insert,
                                   const std::function<bool(uint64_t)>& contains, const std::vector<uint64_t>& stream,
                                   uint64_t w, uint64_t queries, uint64_t seed);

// The median of `v` (v is reordered).
double median(std::vector<double> v);

}  // namespace agebloom::lab
