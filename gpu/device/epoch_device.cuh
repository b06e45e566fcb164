// The owning filters in device memory (the owner of cuco's bloom_filter /
// bloom_filter_ref split): each holds the allocation and the epoch schedule
// and hands out a ref to kernels. One owner, EpochDevice<Family>, for both
// families the exact replay handles:
//   - GuardedEpochDevice: the guarded epoch filter flat or blocked (and so the
//     rotating ring) and the one-line layout (epoch_plan.hpp, replay_steps.hpp);
//   - ApbfDevice: APBF and APBBF (apbf_replay.hpp).
// A family says how a batch is planned, what its three per-packet passes are,
// how a segment is cleared and how a key is queried.
//
// Device memory holds exactly the CPU arena image (header, then the words, 64
// bytes after a 64-aligned base), so upload() / download() move a snapshot
// between a CPU filter and this one with one copy. The schedule is driven from
// the host (it decides where epochs end); the header in device memory is
// refreshed on download().
//
// Operations ending in _async enqueue on `stream` and never synchronize (cuco's
// rule); they return an error only for bad arguments or a failed launch.
// Device pointers only: keys, verdict words; `now` (time windows: each key's
// clock, non-decreasing) is host memory, since the host plans the epochs. At
// most 2^31 keys per call (the replay indexes packets with 32-bit stamps).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "agebloom/filters/apbf.hpp"
#include "agebloom/filters/guarded_epoch.hpp"
#include "agebloom/filters/interleaved_epoch.hpp"
#include "portable/apbf_replay.hpp"
#include "device/check.cuh"
#include "portable/epoch_plan.hpp"
#include "portable/guarded_epoch_ref.hpp"
#include "portable/line_replay.hpp"
#include "agebloom/gpu/replay.hpp"
#include "portable/replay_steps.hpp"

namespace agebloom::gpu {

// The guarded epoch family: one first-setter array per epoch of a batch.
struct GuardedEpochFamily {
  using Ref = GuardedEpochRef;
  using Shape = EpochShape;
  static constexpr bool kStampsPerEpoch = true;
  static constexpr bool kByLine = true;  // the one-line layout may replay line by line

  static BatchPlan plan(EpochState& st, const Shape& shape, const Ref&, const uint64_t* now, const uint32_t* skip,
                        uint64_t skip_base, uint64_t remaining, uint32_t max_epochs) noexcept {
    return plan_for(shape, st, now, skip, skip_base, remaining, max_epochs);
  }
  __device__ static void stamp(const Ref& f, const BatchPlan& p, const KeyHash* k, uint32_t* first, uint64_t fb,
                               uint64_t i, const uint32_t* skip, uint64_t base) {
    stamp_first_setter(f, p, k, first, fb, i, skip, base);
  }
  __device__ static bool verdict(const Ref& f, const BatchPlan& p, const KeyHash* k, const uint32_t* first,
                                 uint64_t fb, uint64_t i) {
    return replay_verdict(f, p, k, first, fb, i);
  }
  __device__ static void insert(const Ref& f, const BatchPlan& p, const KeyHash* k, uint32_t* first, uint64_t fb,
                                uint64_t i, const uint32_t* skip, uint64_t base, bool ins) {
    insert_and_unstamp(f, p, k, first, fb, i, skip, base, ins);
  }
  // L: the layout the kernel was made for (contains_as), or -1 for any.
  template <int L>
  __device__ static bool contains(const Ref& f, KeyHash h, uint32_t) {
    if constexpr (L < 0) return f.contains(h);
    else return f.template contains_as<static_cast<SegmentLayout>(L)>(h);
  }
  // Zeroes the segments in `slots` (bit s: segment s): contiguous words for
  // flat and blocked segments; for the one-line layout lanes of every line,
  // one kernel for all of them (epoch_device.cu).
  static cudaError_t clear(const Ref& r, uint64_t slots, cudaStream_t stream);
};

// APBF / APBBF: one first-setter array per physical slice.
struct ApbfFamily {
  using Ref = ApbfRef;
  using Shape = ApbfShape;
  static constexpr bool kStampsPerEpoch = false;
  static constexpr bool kByLine = false;

  static BatchPlan plan(EpochState& st, const Shape&, const Ref& f, const uint64_t* now, const uint32_t* skip,
                        uint64_t skip_base, uint64_t remaining, uint32_t) noexcept {
    return apbf_plan_batch(st, f, now, skip, skip_base, remaining);
  }
  __device__ static void stamp(const Ref& f, const BatchPlan& p, const KeyHash* k, uint32_t* first, uint64_t fb,
                               uint64_t i, const uint32_t* skip, uint64_t base) {
    apbf_stamp_first_setter(f, p, k, first, fb, i, skip, base);
  }
  __device__ static bool verdict(const Ref& f, const BatchPlan& p, const KeyHash* k, const uint32_t* first,
                                 uint64_t fb, uint64_t i) {
    return apbf_replay_verdict(f, p, k, first, fb, i);
  }
  __device__ static void insert(const Ref& f, const BatchPlan& p, const KeyHash* k, uint32_t* first, uint64_t fb,
                                uint64_t i, const uint32_t* skip, uint64_t base, bool ins) {
    apbf_insert_and_unstamp(f, p, k, first, fb, i, skip, base, ins);
  }
  template <int>
  __device__ static bool contains(const Ref& f, KeyHash h, uint32_t head) { return f.contains(h, head); }
  static cudaError_t clear(const Ref& r, uint64_t slots, cudaStream_t stream) {
    for (uint32_t s = 0; s < r.slices; ++s)
      if ((slots >> s) & 1u)
        if (cudaError_t e = cudaMemsetAsync(r.slice(s), 0, r.slice_words * sizeof(uint64_t), stream); e != cudaSuccess)
          return e;
    return cudaSuccess;
  }
};

template <class Family>
class EpochDevice {
 public:
  using Ref = typename Family::Ref;
  using Shape = typename Family::Shape;

  EpochDevice() noexcept = default;
  EpochDevice(const EpochDevice&) = delete;
  EpochDevice& operator=(const EpochDevice&) = delete;
  EpochDevice(EpochDevice&& o) noexcept { swap(o); }
  EpochDevice& operator=(EpochDevice&& o) noexcept {
    swap(o);
    return *this;
  }
  ~EpochDevice() { release(); }

  // Validates `c`, allocates its arena image in device memory and zeroes it
  // (the state the CPU filter's create() leaves), and reserves the replay's
  // working memory (the one-line layout's line buffers, else first-setter
  // stamps), so that no _async call allocates. GpuErrc::invalid_config (with
  // config_error), GpuErrc::unsupported (a shape the replay does not take) or
  // GpuErrc::cuda. After any error from a call below, the device filter's
  // state is unspecified (a batch may have stopped half done): start again
  // from create() or upload().
  template <class Config>
  static GpuStatus create(const Config& c, EpochDevice& out) {
    return create_shape(shape_of(c), out);
  }

  // Replaces the state with a CPU arena image (see replay.hpp); synchronous.
  GpuStatus upload(const void* image, size_t bytes);
  // Writes the state, header included, into a CPU arena image; synchronous.
  GpuStatus download(void* image, size_t bytes);

  // Bulk query: bit i of out (32-bit words, LSB first, pre-zeroed by the
  // caller) = contains(keys[i]).
  GpuStatus contains_async(const KeyHash* keys, size_t n, uint32_t* out, cudaStream_t stream) const;
  // Bulk insert, rotating at epoch ends as the CPU filter's insert_bulk does
  // (time windows: as advance(now[i]) then insert(keys[i]) in order).
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

  // The one-line layout's verdicts: line by line (line_replay.hpp; the
  // default for that layout) or by first-setter stamps (every other layout's
  // method). Reserves what the chosen method needs, so no _async call
  // allocates; GpuErrc::unsupported for line by line on another layout.
  GpuStatus replay_by_line(bool on);
  bool replays_by_line() const noexcept { return by_line_; }

  Ref ref() const noexcept { return ref_; }
  const Shape& shape() const noexcept { return shape_; }
  uint64_t insertions() const noexcept { return state_.insertions; }
  uint32_t current_segment() const noexcept { return state_.current; }
  size_t bytes() const noexcept { return shape_.bytes; }
  // Batches the last test_and_insert_async/insert_async/test_or_insert ran,
  // and the rounds test_or_insert needed in all (for stats).
  uint64_t batches() const noexcept { return batches_; }
  uint64_t rounds() const noexcept { return rounds_; }

 private:
  static GpuStatus create_shape(const Expected<Shape>& shape, EpochDevice& out);
  uint32_t slots() const noexcept;
  GpuStatus run_batches(const KeyHash* keys, size_t n, uint32_t* out, cudaStream_t stream, const uint64_t* now);
  // Verdicts of batch p (keys k) line by line into out's bits from out_base;
  // with wb.touched, each touched line's final state too (line_replay.hpp).
  GpuStatus line_verdicts(const BatchPlan& p, const KeyHash* k, const uint32_t* skip, uint64_t skip_base,
                          uint32_t* out, uint64_t out_base, LineWriteBack wb, cudaStream_t stream);
  // The most epochs and packets one batch may take with the method in use.
  uint32_t batch_epochs(bool stamps) const noexcept;
  uint64_t batch_packets(uint64_t remaining) const noexcept;
  GpuStatus reserve_first_setters();
  GpuStatus reserve_line_buffers();
  void release_line_buffers() noexcept;
  // The one-line layout with at most 2^32 lines: what the line sort's 32-bit
  // keys number (line_replay.hpp); past that (256 GiB) it replays by stamps.
  bool lines_by_line() const noexcept {
    if constexpr (Family::kByLine)
      return shape_.ref.layout == SegmentLayout::lanes && shape_.ref.segment_words <= (uint64_t{1} << 32);
    else
      return false;
  }
  void release() noexcept;
  void swap(EpochDevice& o) noexcept;

  Shape shape_{};
  EpochState state_{};
  unsigned char* base_ = nullptr;
  Ref ref_{};
  uint32_t* first_ = nullptr;  // first-setter stamps: first_arrays_ arrays of shape_.segment_bits()
  uint32_t first_arrays_ = 0;
  // Line by line: (line, index) pairs before and after the sort, each packet's
  // verdict byte, the lines' marks, the sort's scratch; batches of at most
  // line_cap_ packets.
  bool by_line_ = false;
  uint32_t* line_keys_[2] = {};
  uint32_t* line_index_[2] = {};
  uint8_t* line_seen_ = nullptr;
  uint8_t* line_touched_ = nullptr;  // one mark per line, all 0 between batches
  // The batch's long runs (line_replay.hpp, kLongRun): each one's first sorted
  // position, and their count; the line pass lists them, a warp replays each.
  uint32_t* long_runs_ = nullptr;
  uint32_t* long_count_ = nullptr;
  void* sort_temp_ = nullptr;
  size_t sort_temp_bytes_ = 0;
  uint64_t line_cap_ = 0;
  int line_key_bits_ = 32;
  uint64_t batches_ = 0;
  uint64_t rounds_ = 0;
  uint64_t epoch_insertions_ = 0;  // the swept layout's: insertions when the current epoch began
};

using GuardedEpochDevice = EpochDevice<GuardedEpochFamily>;
using ApbfDevice = EpochDevice<ApbfFamily>;

}  // namespace agebloom::gpu
