// replay.hpp on the CUDA owner (epoch_device.cuh): device probing,
// chunked streaming of the keys, and the bulk helpers.
//
// Streaming: two key buffers and two verdict buffers on the device. Chunk c
// replays on the compute stream while chunk c+1 uploads on the copy stream;
// events order "upload done -> replay" and "replay + verdict download done ->
// buffer reused". Chunk boundaries are multiples of 32 keys, so every chunk's
// verdicts start on a byte (and word) boundary of the caller's bit array. The
// caller's arrays are page-locked for the call when the driver allows it
// (cudaHostRegister); otherwise the copies are staged and overlap less.
//
// insert-on-miss: a packet inserts only when its verdict is false, and
// count-window epochs count insertions, so both the first-setter stamps and
// the epoch boundaries depend on the verdicts: GuardedEpochDevice::
// test_or_insert iterates each batch to the fixed point of its verdicts
// (replay_steps.hpp), synchronously.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include "device/check.cuh"
#include "device/epoch_device.cuh"
#include "agebloom/gpu/replay.hpp"

namespace agebloom::gpu {

bool gpu_available(std::string& why) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    why = std::string("no usable CUDA device: ") + cudaGetErrorName(e) + ": " + cudaGetErrorString(e);
    (void)cudaGetLastError();  // not sticky, but leave no error behind for the caller's next check
    return false;
  }
  if (n == 0) {
    why = "no CUDA device";
    return false;
  }
  why.clear();
  return true;
}

std::string gpu_description() {
  std::string why;
  if (!gpu_available(why)) return why;
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) return "device 0 (properties unavailable)";
  char mem[32];
  std::snprintf(mem, sizeof mem, "%.1f", static_cast<double>(p.totalGlobalMem) / (1024.0 * 1024 * 1024));
  return std::string(p.name) + ", " + mem + " GiB, " + std::to_string(p.multiProcessorCount) + " SMs, sm_" +
         std::to_string(p.major) + std::to_string(p.minor);
}

namespace {

// Everything replay allocates, released on every return path.
struct Resources {
  cudaStream_t compute = nullptr, copy = nullptr;
  cudaEvent_t uploaded[2] = {}, done[2] = {}, start = nullptr, stop = nullptr;
  KeyHash* keys[2] = {};
  uint32_t* verdicts[2] = {};
  const void* registered[2] = {};

  GpuStatus init(size_t chunk) {
    AGEBLOOM_CUDA_TRY(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking));
    AGEBLOOM_CUDA_TRY(cudaStreamCreateWithFlags(&copy, cudaStreamNonBlocking));
    for (int b = 0; b < 2; ++b) {
      AGEBLOOM_CUDA_TRY(cudaEventCreateWithFlags(&uploaded[b], cudaEventDisableTiming));
      AGEBLOOM_CUDA_TRY(cudaEventCreateWithFlags(&done[b], cudaEventDisableTiming));
      AGEBLOOM_CUDA_TRY(cudaMalloc(&keys[b], chunk * sizeof(KeyHash)));
      AGEBLOOM_CUDA_TRY(cudaMalloc(&verdicts[b], (chunk + 31) / 32 * sizeof(uint32_t)));
    }
    AGEBLOOM_CUDA_TRY(cudaEventCreate(&start));
    AGEBLOOM_CUDA_TRY(cudaEventCreate(&stop));
    return {};
  }
  // Page-locks a caller array for the call's duration; failure only costs overlap.
  void try_register(int slot, const void* p, size_t bytes) {
    if (p != nullptr && bytes != 0 &&
        cudaHostRegister(const_cast<void*>(p), bytes, cudaHostRegisterDefault) == cudaSuccess)
      registered[slot] = p;
    else
      (void)cudaGetLastError();
  }
  ~Resources() {
    // Teardown errors cannot change the result the caller already has.
    if (compute) (void)cudaStreamSynchronize(compute);
    if (copy) (void)cudaStreamSynchronize(copy);
    for (int b = 0; b < 2; ++b) {
      if (registered[b]) (void)cudaHostUnregister(const_cast<void*>(registered[b]));
      if (keys[b]) (void)cudaFree(keys[b]);
      if (verdicts[b]) (void)cudaFree(verdicts[b]);
      if (uploaded[b]) (void)cudaEventDestroy(uploaded[b]);
      if (done[b]) (void)cudaEventDestroy(done[b]);
    }
    if (start) (void)cudaEventDestroy(start);
    if (stop) (void)cudaEventDestroy(stop);
    if (compute) (void)cudaStreamDestroy(compute);
    if (copy) (void)cudaStreamDestroy(copy);
  }
};

// What the replay can take: a valid config over a count window, with a shape
// the device owner knows.
template <class Config>
GpuStatus check_supported(const Config& c) {
  if (Status s = c.validate(); !s) {
    GpuStatus g = gpu_error(GpuErrc::invalid_config);
    g.config_error = s.code();
    return g;
  }
  if (!shape_of(c)) return gpu_error(GpuErrc::unsupported);
  return {};
}

// Keys per chunk: the caller's choice, else 64 Mi keys (1 GiB of KeyHash per
// buffer), within a quarter of the free memory for both buffers; a multiple of
// 32 and at most 2^31 (the first-setter stamps are 32-bit).
GpuStatus choose_chunk(size_t n, size_t requested, size_t& chunk) {
  size_t free_b = 0, total_b = 0;
  AGEBLOOM_CUDA_TRY(cudaMemGetInfo(&free_b, &total_b));
  size_t c = requested ? requested : (size_t{1} << 26);
  c = std::min(c, free_b / 4 / (2 * sizeof(KeyHash) + 1));
  c = std::min(c, std::max<size_t>(n, 32));
  c = std::min(c, size_t{1} << 31);
  chunk = std::max<size_t>(32, c / 32 * 32);
  return {};
}


// The device owner of a configuration's family.
template <class Config>
struct DeviceFor {
  using type = GuardedEpochDevice;
};
template <>
struct DeviceFor<ApbfConfig> {
  using type = ApbfDevice;
};

template <class Config>
GpuStatus replay_impl(const Config& c, const KeyHash* keys, size_t n, const ReplayOptions& opt,
                      uint8_t* verdict_bits, void* arena_image, size_t arena_bytes, ReplayStats* stats) {
  AGEBLOOM_GPU_TRY(check_supported(c));
  if (c.window.is_time() && n != 0 && opt.times == nullptr) return gpu_error(GpuErrc::bad_argument);
  const bool on_miss = opt.policy == ReplayPolicy::insert_on_miss;
  if (n != 0 && (keys == nullptr || verdict_bits == nullptr)) return gpu_error(GpuErrc::bad_argument);
  typename DeviceFor<Config>::type f;
  AGEBLOOM_GPU_TRY(DeviceFor<Config>::type::create(c, f));
  if (arena_image != nullptr) AGEBLOOM_GPU_TRY(f.upload(arena_image, arena_bytes));
  if (!opt.by_line && f.replays_by_line()) AGEBLOOM_GPU_TRY(f.replay_by_line(false));
  size_t chunk = 0;
  AGEBLOOM_GPU_TRY(choose_chunk(n, opt.chunk_keys, chunk));
  Resources r;
  AGEBLOOM_GPU_TRY(r.init(chunk));
  r.try_register(0, keys, n * sizeof(KeyHash));
  r.try_register(1, verdict_bits, (n + 7) / 8);

  const size_t chunks = (n + chunk - 1) / chunk;
  auto upload = [&](size_t ci) -> GpuStatus {
    const int b = static_cast<int>(ci % 2);
    const size_t len = std::min(chunk, n - ci * chunk);
    // Buffer b last served chunk ci-2: wait for its replay and download.
    AGEBLOOM_CUDA_TRY(cudaStreamWaitEvent(r.copy, r.done[b], 0));
    AGEBLOOM_CUDA_TRY(cudaMemcpyAsync(r.keys[b], keys + ci * chunk, len * sizeof(KeyHash),
                                      cudaMemcpyHostToDevice, r.copy));
    AGEBLOOM_CUDA_TRY(cudaEventRecord(r.uploaded[b], r.copy));
    return {};
  };

  AGEBLOOM_CUDA_TRY(cudaEventRecord(r.start, r.compute));
  uint64_t batches = 0, rounds = 0;
  if (chunks > 0) AGEBLOOM_GPU_TRY(upload(0));
  for (size_t ci = 0; ci < chunks; ++ci) {
    const int b = static_cast<int>(ci % 2);
    const size_t len = std::min(chunk, n - ci * chunk);
    if (ci + 1 < chunks) AGEBLOOM_GPU_TRY(upload(ci + 1));
    AGEBLOOM_CUDA_TRY(cudaStreamWaitEvent(r.compute, r.uploaded[b], 0));
    AGEBLOOM_CUDA_TRY(cudaMemsetAsync(r.verdicts[b], 0, (len + 31) / 32 * sizeof(uint32_t), r.compute));
    const uint64_t* times = c.window.is_time() ? opt.times + ci * chunk : nullptr;
    if (on_miss) AGEBLOOM_GPU_TRY(f.test_or_insert(r.keys[b], len, r.verdicts[b], r.compute, times));
    else AGEBLOOM_GPU_TRY(f.test_and_insert_async(r.keys[b], len, r.verdicts[b], r.compute, times));
    batches += f.batches();
    rounds += f.rounds();
    // Little-endian words: byte j of the word array is verdict byte j.
    AGEBLOOM_CUDA_TRY(cudaMemcpyAsync(verdict_bits + ci * chunk / 8, r.verdicts[b], (len + 7) / 8,
                                      cudaMemcpyDeviceToHost, r.compute));
    AGEBLOOM_CUDA_TRY(cudaEventRecord(r.done[b], r.compute));
  }
  AGEBLOOM_CUDA_TRY(cudaEventRecord(r.stop, r.compute));
  AGEBLOOM_CUDA_TRY(cudaStreamSynchronize(r.compute));
  AGEBLOOM_CUDA_TRY(cudaGetLastError());
  if (arena_image != nullptr) AGEBLOOM_GPU_TRY(f.download(arena_image, arena_bytes));
  if (stats != nullptr) {
    float ms = 0;
    AGEBLOOM_CUDA_TRY(cudaEventElapsedTime(&ms, r.start, r.stop));
    stats->chunks = chunks;
    stats->batches = batches;
    stats->rounds = rounds;
    stats->device_seconds = ms / 1e3;
  }
  return {};
}


// One-shot device copies of the keys and a verdict word array, freed on return.
struct Scratch {
  KeyHash* keys = nullptr;
  uint32_t* bits = nullptr;
  ~Scratch() {
    if (keys) (void)cudaFree(keys);
    if (bits) (void)cudaFree(bits);
  }
};


template <class Config>
GpuStatus contains_impl(const Config& c, const void* arena_image, size_t arena_bytes, const KeyHash* keys, size_t n,
                        uint8_t* verdict_bits) {
  if (Status s = c.validate(); !s) {
    GpuStatus g = gpu_error(GpuErrc::invalid_config);
    g.config_error = s.code();
    return g;
  }
  if (!shape_of(c)) return gpu_error(GpuErrc::unsupported);
  if (n != 0 && (keys == nullptr || verdict_bits == nullptr)) return gpu_error(GpuErrc::bad_argument);
  if (n > (size_t{1} << 31)) return gpu_error(GpuErrc::bad_argument);
  typename DeviceFor<Config>::type f;
  AGEBLOOM_GPU_TRY(DeviceFor<Config>::type::create(c, f));
  if (arena_image != nullptr) AGEBLOOM_GPU_TRY(f.upload(arena_image, arena_bytes));
  if (n == 0) return {};
  Scratch s;
  const size_t words = (n + 31) / 32;
  AGEBLOOM_CUDA_TRY(cudaMalloc(&s.keys, n * sizeof(KeyHash)));
  AGEBLOOM_CUDA_TRY(cudaMalloc(&s.bits, words * sizeof(uint32_t)));
  AGEBLOOM_CUDA_TRY(cudaMemcpy(s.keys, keys, n * sizeof(KeyHash), cudaMemcpyHostToDevice));
  AGEBLOOM_CUDA_TRY(cudaMemset(s.bits, 0, words * sizeof(uint32_t)));
  AGEBLOOM_GPU_TRY(f.contains_async(s.keys, n, s.bits, nullptr));
  AGEBLOOM_CUDA_TRY(cudaMemcpy(verdict_bits, s.bits, (n + 7) / 8, cudaMemcpyDeviceToHost));
  return {};
}

template <class Config>
GpuStatus insert_impl(const Config& c, void* arena_image, size_t arena_bytes, const KeyHash* keys, size_t n,
                      const uint64_t* times) {
  AGEBLOOM_GPU_TRY(check_supported(c));
  if (arena_image == nullptr || (n != 0 && keys == nullptr)) return gpu_error(GpuErrc::bad_argument);
  if (c.window.is_time() && n != 0 && times == nullptr) return gpu_error(GpuErrc::bad_argument);
  typename DeviceFor<Config>::type f;
  AGEBLOOM_GPU_TRY(DeviceFor<Config>::type::create(c, f));
  AGEBLOOM_GPU_TRY(f.upload(arena_image, arena_bytes));
  Scratch s;
  if (n != 0) {
    AGEBLOOM_CUDA_TRY(cudaMalloc(&s.keys, n * sizeof(KeyHash)));
    AGEBLOOM_CUDA_TRY(cudaMemcpy(s.keys, keys, n * sizeof(KeyHash), cudaMemcpyHostToDevice));
    AGEBLOOM_GPU_TRY(f.insert_async(s.keys, n, nullptr, c.window.is_time() ? times : nullptr));
    AGEBLOOM_CUDA_TRY(cudaDeviceSynchronize());
  }
  return f.download(arena_image, arena_bytes);
}

// Calls f(config) for the config types the device owners take (those with a
// shape_of), GpuErrc::unsupported for the others and for what
// unsupported_reason() refuses.
template <class F>
GpuStatus on_device(const FilterConfig& config, F&& f) {
  if (!unsupported_reason(config).empty()) return gpu_error(GpuErrc::unsupported);
  return config.visit([&](const auto& c) -> GpuStatus {
    if constexpr (requires { shape_of(c); }) return f(c);
    else return gpu_error(GpuErrc::unsupported);
  });
}

}  // namespace

GpuStatus replay(const FilterConfig& config, const KeyHash* keys, size_t n, const ReplayOptions& opt,
                 uint8_t* verdict_bits, void* arena_image, size_t arena_bytes, ReplayStats* stats) {
  return on_device(config, [&](const auto& c) {
    return replay_impl(c, keys, n, opt, verdict_bits, arena_image, arena_bytes, stats);
  });
}

GpuStatus contains_bulk(const FilterConfig& config, const void* arena_image, size_t arena_bytes,
                        const KeyHash* keys, size_t n, uint8_t* verdict_bits) {
  return on_device(config, [&](const auto& c) {
    return contains_impl(c, arena_image, arena_bytes, keys, n, verdict_bits);
  });
}

GpuStatus insert_bulk(const FilterConfig& config, void* arena_image, size_t arena_bytes, const KeyHash* keys,
                      size_t n, const uint64_t* times) {
  return on_device(config, [&](const auto& c) { return insert_impl(c, arena_image, arena_bytes, keys, n, times); });
}

}  // namespace agebloom::gpu
