// What lets the replay's per-packet steps compile for both sides: as CUDA
// device code inside the kernels, and as plain host C++ in the emulation test
// (tests/gpu/replay_emulation_test.cpp), which runs the same steps on the CPU
// in scrambled orders to check the algorithm where no GPU is lent.
#pragma once

#include <cstdint>
#include <cstring>

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

// Fully unrolled loops over a line's eight words, so that arrays indexed by
// the loop stay in registers on the device (a dynamic index puts them in
// local memory); the host compiler unrolls such loops by itself.
#if defined(__CUDA_ARCH__)
#define AGEBLOOM_UNROLL _Pragma("unroll")
#else
#define AGEBLOOM_UNROLL
#endif

// Reads one 64-byte line (64-aligned): four 16-byte loads on the device,
// where eight 8-byte ones would be eight instructions for the same two sectors.
AGEBLOOM_HD inline void load_line(const uint64_t* p, uint64_t (&out)[8]) noexcept {
#if defined(__CUDA_ARCH__)
  const ulonglong2* v = reinterpret_cast<const ulonglong2*>(p);
  AGEBLOOM_UNROLL
  for (int q = 0; q < 4; ++q) {
    const ulonglong2 x = v[q];
    out[2 * q] = x.x;
    out[2 * q + 1] = x.y;
  }
#else
  std::memcpy(out, p, sizeof out);
#endif
}

// Writes one 64-byte line (64-aligned), as load_line reads it.
AGEBLOOM_HD inline void store_line(uint64_t* p, const uint64_t (&in)[8]) noexcept {
#if defined(__CUDA_ARCH__)
  ulonglong2* v = reinterpret_cast<ulonglong2*>(p);
  AGEBLOOM_UNROLL
  for (int q = 0; q < 4; ++q) v[q] = make_ulonglong2(in[2 * q], in[2 * q + 1]);
#else
  std::memcpy(p, in, sizeof in);
#endif
}

}  // namespace agebloom::gpu
