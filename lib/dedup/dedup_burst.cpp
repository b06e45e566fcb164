// DedupFilter::decide_burst: the burst form of advance + is_duplicate.
#include "agebloom/dedup/dedup_filter.hpp"

namespace agebloom::dedup {

void DedupFilter::decide_burst(const KeyHash* h, const uint64_t* now, size_t n, Policy policy, bool* dup,
                               void* const* at) noexcept {
  // One clock for the burst (now == nullptr): no epoch ends by time inside
  // it, so the flood is watched once, from the count it starts at.
  const uint64_t fill_before = flood_.design && now == nullptr ? epoch_fill() : 0;
  // One visit per burst instead of one per key; inside, the concrete filter's
  // calls inline. Prefetching the lines of key i + D while probing key i is
  // what the filters' own bulk forms do; it changes no state, so the verdicts
  // are those of the scalar calls in order (keys repeated inside a burst
  // included).
  std::visit(
      [&](auto& f) {
        // The two per-run choices (time window or not, policy) are taken once
        // per burst. Without per-packet times, insert-always is exactly the
        // filter's bulk test_and_insert (which a filter may specialise, as the
        // one-line guarded epoch does); the other three are the plain sequence
        // prefetch ahead, advance, probe.
        auto run = [&](auto decide, bool timed) {
          constexpr size_t D = std::decay_t<decltype(f)>::kPrefetchDistance;  // 0: no requests (bulk_ops.hpp)
          for (size_t i = 0; i < n && i < D; ++i) f.prefetch(h[i]);
          for (size_t i = 0; i < n; ++i) {
            if (D > 0 && i + D < n) f.prefetch(h[i + D]);
            if (timed) (void)f.advance(now[i]);  // callers pass non-decreasing times
            // Each packet's own time may end an epoch: the flood is watched
            // per packet here, so each insertion counts in its own epoch.
            const uint64_t fill_before = timed && flood_.design ? epoch_fill_of(f) : 0;
            dup[i] = decide(h[i]);
            if (timed && flood_.design)
              watch_flood_of(f, policy == Policy::insert_always || !dup[i] ? 1 : 0, fill_before);
          }
        };
        auto insert_always = [&](KeyHash k) { return f.test_and_insert(k); };
        auto insert_on_miss = [&](KeyHash k) {
          if (f.contains(k)) return true;
          f.insert(k);
          return false;
        };
        using Filter = std::decay_t<decltype(f)>;
        if (policy == Policy::insert_always) {
          if (now) return run(insert_always, true);
          if constexpr (LocatesLines<Filter>) {
            if (at != nullptr) {
              // The lines prefetch_burst located, typed again a chunk at a time.
              constexpr size_t kChunk = 64;
              typename Filter::Line* line[kChunk];
              for (size_t base = 0; base < n; base += kChunk) {
                const size_t m = n - base < kChunk ? n - base : kChunk;
                // Requested again: the line may have left L1 since prefetch_burst
                // (one burst ago), and the second request measured ~0.5 cycles
                // per packet cheaper than none (docs/PERFORMANCE.md).
                for (size_t i = 0; i < m; ++i) {
                  line[i] = static_cast<typename Filter::Line*>(at[base + i]);
                  bits::prefetch_write(line[i]);
                }
                f.test_and_insert_bulk_at(h + base, line, m, dup + base);
              }
              return;
            }
          }
          f.test_and_insert_bulk(h, n, dup);  // the filter's own bulk form
        } else {
          if (now) run(insert_on_miss, true);
          else run(insert_on_miss, false);
        }
      },
      filter_);
  if (flood_.design && now == nullptr) {
    uint64_t inserted = n;
    if (policy == Policy::insert_on_miss)
      for (size_t i = 0; i < n; ++i) inserted -= dup[i];
    watch_flood(inserted, fill_before);
  }
}

}  // namespace agebloom::dedup
