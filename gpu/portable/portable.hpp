// What lets the replay's per-packet steps compile for both sides: as CUDA
// device code inside the kernels, and as plain host C++ in the emulation test
// (tests/gpu/replay_emulation_test.cpp), which runs the same steps on the CPU
// in scrambled orders to check the algorithm where no GPU is lent.
#pragma once

#include <cstdint>

#include "agebloom/core/host_device.hpp"  // AGEBLOOM_HD

namespace agebloom::gpu {

// The two atomics the replay uses. On the device many threads race for a
// word and both operations commute, so any interleaving gives one result; on
// the host the emulation is single-threaded and a plain update is that result.
AGEBLOOM_HD inline void atomic_min_u32(uint32_t* p, uint32_t v) noexcept {
#if defined(__CUDA_ARCH__)
  atomicMin(p, v);
#else
  if (v < *p) *p = v;
#endif
}

AGEBLOOM_HD inline void atomic_or_u64(uint64_t* p, uint64_t v) noexcept {
#if defined(__CUDA_ARCH__)
  atomicOr(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
#else
  *p |= v;
#endif
}

}  // namespace agebloom::gpu
