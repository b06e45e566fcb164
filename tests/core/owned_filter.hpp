// A filter together with the heap buffer that backs its arena (tests only: the
// library itself never allocates). The arena starts on a cache line, so two
// filters of one config lay out their state identically and state() can be
// compared byte for byte.
#pragma once

#include <gtest/gtest.h>

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
