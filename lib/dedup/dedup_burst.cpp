// DedupFilter::decide_burst: the burst form of advance + is_duplicate.
#include "agebloom/dedup/dedup_filter.hpp"

namespace agebloom::dedup {

void DedupFilter::decide_burst(const KeyHash* h, const uint64_t* now, size_t n, Policy policy,
                               bool* dup) noexcept {
  // One visit per burst instead of one per key; inside, the concrete filter's
  // calls inline. Prefetching the lines of key i + D while probing key i is
  // what the filters' own bulk forms do; it changes no state, so the verdicts
  // are those of the scalar calls in order (keys repeated inside a burst
  // included).
  std::visit(
      [&](auto& f) {
        constexpr size_t D = std::decay_t<decltype(f)>::kPrefetchDistance;
        for (size_t i = 0; i < n && i < D; ++i) f.prefetch(h[i]);
        for (size_t i = 0; i < n; ++i) {
          if (i + D < n) f.prefetch(h[i + D]);
          if (now) (void)f.advance(now[i]);  // callers pass non-decreasing times
          if (policy == Policy::insert_always) {
            dup[i] = f.test_and_insert(h[i]);
          } else {
            dup[i] = f.contains(h[i]);
            if (!dup[i]) f.insert(h[i]);
          }
        }
      },
      filter_);
}

}  // namespace agebloom::dedup
