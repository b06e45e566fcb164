// The bulk forms every filter offers, written once: walk the burst, prefetch
// the lines key i + kPrefetchDistance will touch, probe key i. Verdicts equal
// the scalar calls made in order, since prefetching changes no state.
//
// CRTP: a Filter provides contains(), insert(), test_and_insert() and
// prefetch(KeyHash); BulkOps<Filter> adds contains_bulk(), insert_bulk() and
// test_and_insert_bulk().
#pragma once

#include <cstddef>

#include "agebloom/core/hash.hpp"

namespace agebloom {

template <class Filter>
class BulkOps {
 public:
  // Keys ahead whose lines are prefetched: enough to cover DRAM latency with
  // one probe's work per key, few enough to stay in the fill buffers.
  static constexpr size_t kPrefetchDistance = 8;

  void contains_bulk(const KeyHash* h, size_t n, bool* out) const noexcept {
    for (size_t i = 0; i < n; ++i) {
      if (i + kPrefetchDistance < n) self().prefetch(h[i + kPrefetchDistance]);
      out[i] = self().contains(h[i]);
    }
  }
  void insert_bulk(const KeyHash* h, size_t n) noexcept {
    for (size_t i = 0; i < n; ++i) {
      if (i + kPrefetchDistance < n) self().prefetch(h[i + kPrefetchDistance]);
      self().insert(h[i]);
    }
  }
  void test_and_insert_bulk(const KeyHash* h, size_t n, bool* out) noexcept {
    for (size_t i = 0; i < n; ++i) {
      if (i + kPrefetchDistance < n) self().prefetch(h[i + kPrefetchDistance]);
      out[i] = self().test_and_insert(h[i]);
    }
  }

 private:
  const Filter& self() const noexcept { return static_cast<const Filter&>(*this); }
  Filter& self() noexcept { return static_cast<Filter&>(*this); }
};

}  // namespace agebloom
