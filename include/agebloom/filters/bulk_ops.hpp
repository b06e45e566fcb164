// The bulk forms every filter offers, written once: walk the burst, prefetch
// the lines key i + kPrefetchDistance will touch, probe key i. Verdicts equal
// the scalar calls made in order, since prefetching changes no state.
//
// CRTP: a Filter provides contains(), insert(), test_and_insert() and
// prefetch(KeyHash), and may provide prefetch_insert(KeyHash), the lines an
// insert alone writes; BulkOps<Filter, Distance> adds contains_bulk(),
// insert_bulk() and test_and_insert_bulk().
#pragma once

#include <cstddef>

#include "agebloom/core/hash.hpp"

namespace agebloom {

// Distance: keys ahead whose lines are prefetched. One-line-per-key filters
// take 16: at W = 64M (DRAM) the interleaved layout's bulk test_and_insert
// measured 88 cycles/key at 4, 62 at 16, and the same ~28 at W = 1M (L3).
// Filters that touch a line per segment keep 8: with 9 segments, 16 keys
// ahead would ask for ~144 lines at once, more than the fill buffers hold.
// 0: no requests at all, for the filters whose requests measured slower
// than none (the time-limited filter: 4-24%; docs/PERFORMANCE.md,
// 2026-11-27; APBF asks for its blocked form's lines only, apbf.hpp).
template <class Filter, size_t Distance = 8>
class BulkOps {
 public:
  static constexpr size_t kPrefetchDistance = Distance;  // keys prefetched ahead
  static constexpr bool kRequestsLines = Distance > 0;   // whether the bulk forms prefetch at all

  // out[i] = contains(h[i]) for i < n, prefetched ahead.
  void contains_bulk(const KeyHash* h, size_t n, bool* out) const noexcept {
    prefetch_head(h, n);
    for (size_t i = 0; i < n; ++i) {
      if constexpr (kRequestsLines)
        if (i + kPrefetchDistance < n) self().prefetch(h[i + kPrefetchDistance]);
      out[i] = self().contains(h[i]);
    }
  }
  // insert(h[i]) for i < n in order, prefetched ahead: only the lines an
  // insert writes, where the filter names them apart from a probe's
  // (prefetch_insert). A probe's lines there cost the guarded epoch filter
  // twice its scalar insert at W = 64M, and APBBF at W = 1M
  // (docs/PERFORMANCE.md, 2026-11-27).
  void insert_bulk(const KeyHash* h, size_t n) noexcept {
    for (size_t i = 0; i < n && i < kPrefetchDistance; ++i) request_insert(h[i]);
    for (size_t i = 0; i < n; ++i) {
      if constexpr (kRequestsLines)
        if (i + kPrefetchDistance < n) request_insert(h[i + kPrefetchDistance]);
      self().insert(h[i]);
    }
  }
  // out[i] = test_and_insert(h[i]) for i < n in order: the scalar verdicts, prefetched.
  void test_and_insert_bulk(const KeyHash* h, size_t n, bool* out) noexcept {
    prefetch_head(h, n);
    for (size_t i = 0; i < n; ++i) {
      if constexpr (kRequestsLines)
        if (i + kPrefetchDistance < n) self().prefetch(h[i + kPrefetchDistance]);
      out[i] = self().test_and_insert(h[i]);
    }
  }

 private:
  // The first kPrefetchDistance keys of a burst get their lines requested
  // before the first probe, not only the keys the loop reaches ahead.
  void prefetch_head(const KeyHash* h, size_t n) const noexcept {
    for (size_t i = 0; i < n && i < kPrefetchDistance; ++i) self().prefetch(h[i]);
  }

  void request_insert(KeyHash h) const noexcept {
    if constexpr (requires(const Filter& f, KeyHash k) { f.prefetch_insert(k); })
      self().prefetch_insert(h);
    else
      self().prefetch(h);
  }

  const Filter& self() const noexcept { return static_cast<const Filter&>(*this); }
  Filter& self() noexcept { return static_cast<Filter&>(*this); }
};

}  // namespace agebloom
