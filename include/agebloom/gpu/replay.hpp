// Host API of the CUDA backend: plain C++, no CUDA headers, so tools and
// tests compiled by the host compiler can call it. Built without nvcc, the
// same functions exist and report GpuErrc::not_built (gpu/replay_stub.cpp).
//
// What it replays is what the registry marks `gpu` (registry/structure.hpp):
// the guarded epoch filter flat and blocked (and so the ring), the one-line
// guarded epoch filter with 64-bit lanes, APBF and APBBF (at most 64 slices
// and 64 bits per block), over count and time windows:
//   - replay(FilterConfig, ...): the dedup semantics `verdict[i] =
//     test_and_insert(key[i])` (insert-always; or insert-on-miss), each
//     packet's verdict equal to the sequential CPU filter's, bit for bit,
//     although the packets run in parallel. How: gpu/portable/epoch_plan.hpp,
//     "Exact replay" (the one place it is explained). replay() dispatches to
//     the typed calls below (gpu/dispatch.cpp); unsupported_reason() says
//     why a structure is not replayed.
//   - contains_bulk() / insert_bulk(): the bulk forms over a filter state.
//   - gpu_available(): whether a CUDA device can be used, and why not.
//
// Filter state travels as the CPU filter's *arena image*: the bytes its
// create(cfg, arena) carved from an arena whose base is 64-byte aligned
// (header, then the words). The device keeps the same layout, so a snapshot
// moves either way with one copy. Pass arena_image = nullptr to start from an
// empty filter.
//
// Every call here is synchronous: it returns when the results are in host
// memory. The asynchronous forms (on a stream, never synchronizing) are the
// device owners' _async calls (gpu/device/epoch_device.cuh).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "agebloom/core/hash.hpp"
#include "agebloom/filters/apbf.hpp"
#include "agebloom/filters/guarded_epoch.hpp"
#include "agebloom/filters/interleaved_epoch.hpp"
#include "agebloom/registry/filter_config.hpp"

namespace agebloom::gpu {

// What a GPU call answers.
enum class GpuErrc : uint8_t {
  ok = 0,         // done
  not_built,      // compiled without nvcc: there is no CUDA backend in this build
  cuda,           // a CUDA call or launch failed: cuda_error, where
  invalid_config, // the filter config does not validate: config_error
  unsupported,    // a feature this backend does not implement yet (see above)
  bad_argument,   // null pointer, arena image of the wrong size, too many keys
};

// Errors as values (no exceptions cross this API). `where` is a static string
// "file:line: expression" for CUDA failures; `cuda_name` is cudaGetErrorName.
struct GpuStatus {
  GpuErrc code = GpuErrc::ok;        // ok, or what failed
  int cuda_error = 0;                // code == cuda: the cudaError_t
  const char* cuda_name = nullptr;   // code == cuda: its name
  const char* where = nullptr;       // code == cuda: the call that failed
  Errc config_error = Errc::ok;      // code == invalid_config: why

  bool ok() const noexcept { return code == GpuErrc::ok; }  // code == ok
  explicit operator bool() const noexcept { return ok(); }  // ok()
  std::string message() const;                              // one line for a report
};

// True when at least one CUDA device can be used; otherwise `why` says what
// failed ("no CUDA device", "CUDA driver version is insufficient...", "built
// without nvcc"). Cheap after the first call; never aborts.
bool gpu_available(std::string& why);

// Name of device 0 and its memory, for reports ("NVIDIA H100 80GB HBM3, 79.1 GiB").
std::string gpu_description();

// dedup::Policy for the GPU replay (the same two rules).
enum class ReplayPolicy : uint8_t { insert_always, insert_on_miss };

// How replay() runs.
struct ReplayOptions {
  ReplayPolicy policy = ReplayPolicy::insert_always;  // what a verdict inserts
  // Time windows: each key's clock, non-decreasing (the ticks the CPU
  // filter's advance() gets before that key); required there, ignored for
  // count windows. Host memory: the host plans where epochs end.
  const uint64_t* times = nullptr;
  // Keys per upload chunk (0 = choose from free device memory). Traces larger
  // than one chunk stream through two key buffers: chunk c+1 is copied while
  // chunk c replays.
  size_t chunk_keys = 0;
  // The one-line layout only: its verdicts line by line (a stable sort of
  // the batch by line, then each line's packets in order;
  // gpu/portable/line_replay.hpp), the default. false: by first-setter
  // stamps, the method every other layout uses, kept to compare the two.
  bool by_line = true;
};

// What a replay() did.
struct ReplayStats {
  uint64_t chunks = 0;         // key chunks uploaded
  uint64_t batches = 0;        // groups of <= r+1 epochs replayed by one kernel set
  uint64_t rounds = 0;         // insert-on-miss: rounds to the verdicts' fixed point, all batches
  double device_seconds = 0;   // kernel + copy time measured with CUDA events
};

// Bytes of an arena image for `config` (= the filter's bytes_needed; 0 if invalid).
inline size_t arena_image_bytes(const FilterConfig& config) noexcept { return config.bytes_needed(); }

// Empty when this backend replays `config` (the registry row's gpu flag and
// this backend's limits: 64-bit lanes, at most 64 slices and 64 bits per
// block), else why not (gpu/dispatch.cpp).
std::string unsupported_reason(const FilterConfig& config);

// Replays keys[0..n) through the filter `config` (count window, or time
// window with opt.times) with the dedup semantics of `opt.policy`, writing one
// verdict bit per key to verdict_bits (LSB first, byte i holds keys
// 8i..8i+7; 1 = "seen" = suppressed): (n + 7) / 8 bytes. Starts from
// arena_image when non-null (arena_bytes must equal arena_image_bytes(config))
// and writes the final state back into it, so the CPU filter created on that
// arena continues exactly where the GPU stopped. GpuErrc::unsupported for a
// structure this backend does not replay, invalid_config (with config_error)
// for a config that does not validate.
GpuStatus replay(const FilterConfig& config, const KeyHash* keys, size_t n, const ReplayOptions& opt,
                 uint8_t* verdict_bits, void* arena_image, size_t arena_bytes, ReplayStats* stats = nullptr);

// Bulk query over the state in arena_image (not modified): verdict bits as above.
GpuStatus contains_bulk(const FilterConfig& config, const void* arena_image, size_t arena_bytes,
                        const KeyHash* keys, size_t n, uint8_t* verdict_bits);

// Bulk insert (rotating at epoch ends like insert_bulk on the CPU) into the
// state in arena_image, which receives the result. Time windows: times[i] is
// key i's clock (as advance(times[i]) then insert(keys[i]) in order).
GpuStatus insert_bulk(const FilterConfig& config, void* arena_image, size_t arena_bytes, const KeyHash* keys,
                      size_t n, const uint64_t* times = nullptr);

}  // namespace agebloom::gpu
