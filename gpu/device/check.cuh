// Every CUDA call and every launch is checked, and a failure becomes a
// GpuStatus value (no exceptions, no abort): AGEBLOOM_CUDA_TRY(expr) returns
// from the enclosing function on error, naming the call and its line.
// AGEBLOOM_LAUNCH_TRY() after a <<<...>>> catches launch errors (bad
// configuration, too many resources); errors raised while the kernel runs
// surface at the next synchronizing call, which is checked too.
#pragma once

#include <cuda_runtime.h>

#include "agebloom/gpu/replay.hpp"

#define AGEBLOOM_GPU_STR2(x) #x
#define AGEBLOOM_GPU_STR(x) AGEBLOOM_GPU_STR2(x)

namespace agebloom::gpu {

inline GpuStatus cuda_failure(cudaError_t e, const char* where) noexcept {
  GpuStatus s;
  s.code = GpuErrc::cuda;
  s.cuda_error = static_cast<int>(e);
  s.cuda_name = cudaGetErrorName(e);
  s.where = where;
  return s;
}

inline GpuStatus gpu_error(GpuErrc code) noexcept {
  GpuStatus s;
  s.code = code;
  return s;
}

}  // namespace agebloom::gpu

#define AGEBLOOM_CUDA_TRY(expr)                                                          \
  do {                                                                                   \
    const cudaError_t agebloom_e_ = (expr);                                              \
    if (agebloom_e_ != cudaSuccess)                                                      \
      return ::agebloom::gpu::cuda_failure(agebloom_e_,                                  \
                                           __FILE__ ":" AGEBLOOM_GPU_STR(__LINE__) ": " #expr); \
  } while (0)

#define AGEBLOOM_LAUNCH_TRY() AGEBLOOM_CUDA_TRY(cudaGetLastError())

// Propagates a GpuStatus from a callee.
#define AGEBLOOM_GPU_TRY(expr)                             \
  do {                                                     \
    ::agebloom::gpu::GpuStatus agebloom_s_ = (expr);       \
    if (!agebloom_s_.ok()) return agebloom_s_;             \
  } while (0)
