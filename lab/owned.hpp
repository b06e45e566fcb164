// A filter of the core over its own 64-byte aligned heap arena: what an
// experiment that drives one structure directly (not through the registry)
// builds. `ok` is false when the config or the memory is refused.
#pragma once

#include <cstdlib>
#include <memory>

#include "agebloom/core/arena.hpp"

namespace agebloom::lab {

template <class Filter>
struct Owned {
  Filter f;
  std::unique_ptr<unsigned char, decltype(&std::free)> memory{nullptr, &std::free};
  bool ok = false;

  template <class Config>
  explicit Owned(const Config& c) {
    auto need = Filter::bytes_needed(c);
    if (!need) return;
    memory.reset(static_cast<unsigned char*>(std::aligned_alloc(64, (*need + 63) / 64 * 64)));
    if (!memory) return;
    Arena arena(memory.get(), *need);
    auto made = Filter::create(c, arena);
    if (!made) return;
    f = *made;
    ok = true;
  }
};

}  // namespace agebloom::lab
