// AGEBLOOM_HD marks the core functions that CUDA device code calls as well
// (bit placement, hashing, the epoch schedule): __host__ __device__ under
// nvcc, nothing for every other compiler.
#pragma once

#if defined(__CUDACC__)
#define AGEBLOOM_HD __host__ __device__
#else
#define AGEBLOOM_HD
#endif
