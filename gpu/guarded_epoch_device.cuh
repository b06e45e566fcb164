// Owning guarded epoch filter in device memory (the owner of cuco's
// bloom_filter / bloom_filter_ref split): holds the allocation and the epoch
// schedule, hands out GuardedEpochRef views to kernels. One owner for every
// layout the replay handles (epoch_plan.hpp's shape_of): the guarded epoch
// filter flat or blocked (so the rotating ring), and the one-line layout.
//
// Device memory holds exactly the CPU arena image (header, then the words, 64
// bytes after a 64-aligned base), so upload() / download() move a snapshot
// between a CPU filter and this one with one copy. The schedule is driven from
// the host (it decides where epochs end); the header in device memory is
// refreshed on download().
//
// Operations ending in _async enqueue on `stream` and never synchronize (cuco's
// rule); they return an error only for bad arguments or a failed launch.
// Device pointers only: keys, verdict words.
//
// Time windows: insert/test_and_insert take each key's clock (`now`,
// non-decreasing, the ticks the CPU filter's advance() would get); count
// windows take none. At most 2^31 keys per call (the replay indexes packets
// with 32-bit first-setter stamps).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "agebloom/filters/guarded_epoch.hpp"
#include "agebloom/filters/interleaved_epoch.hpp"
#include "check.cuh"
#include "epoch_plan.hpp"
#include "guarded_epoch_ref.hpp"
#include "replay.hpp"

namespace agebloom::gpu {

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

  // Validates `c`, allocates its arena image in device memory and zeroes it:
  // the state the CPU filter's create() leaves. GpuErrc::invalid_config (with
  // config_error), GpuErrc::unsupported (32-bit lanes) or GpuErrc::cuda.
  static GpuStatus create(const GuardedEpochConfig& c, GuardedEpochDevice& out);
  static GpuStatus create(const InterleavedEpochConfig& c, GuardedEpochDevice& out);

  // Replaces the state with a CPU arena image (see replay.hpp); synchronous.
  GpuStatus upload(const void* image, size_t bytes);
  // Writes the state, header included, into a CPU arena image; synchronous.
  GpuStatus download(void* image, size_t bytes);

  // Bulk query: bit i of out (32-bit words, LSB first, pre-zeroed by the
  // caller) = contains(keys[i]).
  GpuStatus contains_async(const KeyHash* keys, size_t n, uint32_t* out, cudaStream_t stream) const;
  // Bulk insert, rotating at epoch ends as the CPU filter's insert_bulk does
  // (time windows: as advance(now[i]) then insert(keys[i]) in order). `now`
  // is host memory: the host plans the epochs.
  GpuStatus insert_async(const KeyHash* keys, size_t n, cudaStream_t stream, const uint64_t* now = nullptr);
  // Exact replay of test_and_insert over keys[0..n): bit i of out = the CPU
  // filter's test_and_insert(keys[i]) called in order (time windows: each
  // after advance(now[i])); out pre-zeroed.
  GpuStatus test_and_insert_async(const KeyHash* keys, size_t n, uint32_t* out, cudaStream_t stream,
                                  const uint64_t* now = nullptr);

  // The same under insert-on-miss (a packet inserts only when its verdict is
  // "new"): exact by a fixed point per batch (replay_steps.hpp). Synchronous:
  // returns when the verdicts are in `out` (device) and the state is final.
  GpuStatus test_or_insert(const KeyHash* keys, size_t n, uint32_t* out, cudaStream_t stream,
                           const uint64_t* now = nullptr);

  GuardedEpochRef ref() const noexcept { return ref_; }
  const EpochShape& shape() const noexcept { return shape_; }
  uint64_t insertions() const noexcept { return state_.insertions; }
  uint32_t current_segment() const noexcept { return state_.current; }
  size_t bytes() const noexcept { return shape_.bytes; }
  // Batches the last test_and_insert_async/insert_async/test_or_insert ran,
  // and the rounds test_or_insert needed in all (for stats).
  uint64_t batches() const noexcept { return batches_; }
  uint64_t rounds() const noexcept { return rounds_; }

 private:
  static GpuStatus create_shape(const Expected<EpochShape>& shape, GuardedEpochDevice& out);
  GpuStatus run_batches(const KeyHash* keys, size_t n, uint32_t* out, cudaStream_t stream, const uint64_t* now);
  GpuStatus ensure_first_setters(size_t n);
  GpuStatus clear_segment_async(uint32_t s, cudaStream_t stream);
  void release() noexcept;
  void swap(GuardedEpochDevice& o) noexcept;

  EpochShape shape_{};
  EpochState state_{};
  unsigned char* base_ = nullptr;
  GuardedEpochRef ref_{};
  uint32_t* first_ = nullptr;  // first-setter stamps: first_epochs_ arrays of shape_.segment_bits()
  uint32_t first_epochs_ = 0;
  uint64_t batches_ = 0;
  uint64_t rounds_ = 0;
};

}  // namespace agebloom::gpu
