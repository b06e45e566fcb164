// A filter together with the heap buffer that backs its arena (tests only: the
// library itself never allocates). The arena starts on a cache line, so two
// filters of one config lay out their state identically and state() can be
// compared byte for byte.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "agebloom/agebloom.hpp"

template <class Filter>
struct OwnedFilter {
  std::vector<unsigned char> memory;
  size_t offset = 0, used = 0;
  Filter filter;

  template <class Config>
  explicit OwnedFilter(const Config& c) {
    auto need = Filter::bytes_needed(c);
    EXPECT_TRUE(need) << need.what();
    if (!need) return;
    memory.resize(*need + 64);
    offset = (64 - reinterpret_cast<uintptr_t>(memory.data()) % 64) % 64;
    agebloom::Arena arena(memory.data() + offset, *need);
    auto f = Filter::create(c, arena);
    EXPECT_TRUE(f) << f.what();
    if (f) filter = *f;
    used = arena.used();
  }
  std::vector<unsigned char> state() const { return {memory.begin() + offset, memory.begin() + offset + used}; }
  Filter* operator->() { return &filter; }
};

// filter.insert_bulk over keys in chunks shorter and longer than a bulk
// form's look-ahead (8 keys), then the rest: for the forms that keep work
// computed keys ahead (the flat layouts' insert_bulk).
template <class Filter, class Key>
void insert_bulk_in_chunks(Filter& filter, const std::vector<Key>& keys) {
  size_t i = 0;
  for (size_t chunk : {size_t{1}, size_t{7}, size_t{8}, size_t{9}, size_t{64}, size_t{1000}, keys.size()}) {
    const size_t n = std::min(chunk, keys.size() - i);
    filter.insert_bulk(keys.data() + i, n);
    i += n;
  }
}
