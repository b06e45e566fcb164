// Owning guarded epoch filter in device memory (the owner of cuco's
// bloom_filter / bloom_filter_ref split): holds the allocation and the epoch
// schedule, hands out GuardedEpochRef views to kernels.
//
// Device memory holds exactly the CPU arena image (header, then r+1 segments
// of words, each part 64-byte aligned from a 64-aligned base), so upload() /
// download() move a snapshot between a CPU GuardedEpochFilter and this one
// with one copy. The schedule is driven from the host (it decides where
// epochs end); the header in device memory is refreshed on download().
//
// Operations ending in _async enqueue on `stream` and never synchronize (cuco's
// rule); they return an error only for bad arguments or a failed launch.
// Device pointers only: keys, verdict words.
//
// Limits: count windows for insert/test_and_insert (time windows: GpuErrc::
// unsupported); at most 2^31 keys per call (the replay indexes packets with
// 32-bit first-setter stamps).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "agebloom/core/window.hpp"
#include "agebloom/filters/guarded_epoch.hpp"
#include "check.cuh"
#include "guarded_epoch_ref.cuh"
#include "replay.hpp"

namespace agebloom::gpu {

// The replay of one batch: up to r+1 consecutive epochs, each in its own
// segment (slot), so no slot is cleared twice within the batch. Packets are
// numbered from the batch's first; epoch e >= 1 begins at first_len + (e-1)*len.
struct BatchPlan {
  static constexpr uint32_t kNoEpoch = 0xff;
  uint64_t count = 0;      // packets in the batch
  uint64_t first_len = 0;  // packets in epoch 0 (the rest of the current epoch, or a full one)
  uint64_t len = 1;        // ℓ
  uint32_t epochs = 0;
  uint8_t epoch_slot[GuardedEpochConfig::kMaxSegments] = {};  // segment epoch e inserts into
  uint8_t slot_epoch[GuardedEpochConfig::kMaxSegments] = {};  // epoch using slot s, or kNoEpoch
  // Packet i still sees the bits slot s held before the batch iff i <= keep[s]:
  // the slot's clearing happens after the verdict of its epoch's first packet
  // (CPU: contains, then rotate, then insert). UINT32_MAX: never cleared here.
  uint32_t keep[GuardedEpochConfig::kMaxSegments] = {};

  __host__ __device__ uint32_t epoch_of(uint64_t i) const noexcept {
    return i < first_len ? 0u : 1u + static_cast<uint32_t>((i - first_len) / len);
  }
};

class GuardedEpochDevice {
 public:
  GuardedEpochDevice() noexcept = default;
  GuardedEpochDevice(const GuardedEpochDevice&) = delete;
  GuardedEpochDevice& operator=(const GuardedEpochDevice&) = delete;
  GuardedEpochDevice(GuardedEpochDevice&& o) noexcept { swap(o); }
  GuardedEpochDevice& operator=(GuardedEpochDevice&& o) noexcept {
    swap(o);
    return *this;
  }
  ~GuardedEpochDevice() { release(); }

  // Validates `c`, allocates bytes_needed(c) of device memory and zeroes it:
  // the state GuardedEpochFilter::create leaves. GpuErrc::invalid_config
  // (with config_error) or GpuErrc::cuda.
  static GpuStatus create(const GuardedEpochConfig& c, GuardedEpochDevice& out);

  // Replaces the state with a CPU arena image (see replay.hpp); synchronous.
  GpuStatus upload(const void* image, size_t bytes);
  // Writes the state, header included, into a CPU arena image; synchronous.
  GpuStatus download(void* image, size_t bytes);

  // Bulk query: bit i of out (32-bit words, LSB first, pre-zeroed by the
  // caller) = contains(keys[i]).
  GpuStatus contains_async(const KeyHash* keys, size_t n, uint32_t* out, cudaStream_t stream) const;
  // Bulk insert, rotating at epoch ends as the CPU filter's insert_bulk does.
  GpuStatus insert_async(const KeyHash* keys, size_t n, cudaStream_t stream);
  // Exact replay of test_and_insert over keys[0..n): bit i of out = the CPU
  // filter's test_and_insert(keys[i]) called in order; out pre-zeroed.
  GpuStatus test_and_insert_async(const KeyHash* keys, size_t n, uint32_t* out, cudaStream_t stream);

  GuardedEpochRef ref() const noexcept { return ref_; }
  const GuardedEpochConfig& config() const noexcept { return cfg_; }
  uint64_t insertions() const noexcept { return state_.insertions; }
  uint32_t current_segment() const noexcept { return state_.current; }
  size_t bytes() const noexcept { return bytes_; }
  // Batches the last test_and_insert_async/insert_async ran (for stats).
  uint64_t batches() const noexcept { return batches_; }

 private:
  // Mirror of GuardedEpochFilter's private header, member for member: the
  // arena image starts with it (checked by the round-trip test).
  struct State {
    EpochSchedule schedule;
    uint64_t insertions;
    uint32_t current;
  };
  static constexpr size_t kWordsOffset = (sizeof(State) + kCacheLine - 1) / kCacheLine * kCacheLine;

  // Plans the next batch at the host-side schedule and advances it.
  BatchPlan plan_batch(uint64_t remaining, uint32_t max_epochs) noexcept;
  GpuStatus run_batches(const KeyHash* keys, size_t n, uint32_t* out, cudaStream_t stream);
  GpuStatus ensure_first_setters(size_t n);
  void release() noexcept;
  void swap(GuardedEpochDevice& o) noexcept;

  GuardedEpochConfig cfg_{};
  State state_{};
  unsigned char* base_ = nullptr;
  size_t bytes_ = 0;
  GuardedEpochRef ref_{};
  uint32_t* first_ = nullptr;  // first-setter stamps: first_epochs_ arrays of segment_words*64
  uint32_t first_epochs_ = 0;
  uint64_t batches_ = 0;
};

}  // namespace agebloom::gpu
