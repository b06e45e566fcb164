// Kernels and the owner of the CUDA filters (epoch_device.cuh). The exact
// replay of a batch is a family's three per-packet passes, one kernel each,
// with the clearing of the segments the batch rotates into between the
// verdicts and the inserts; insert-on-miss repeats the first two (and the
// unstamping) until the verdicts stop changing.
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "device/epoch_device.cuh"

namespace agebloom::gpu {

namespace {

constexpr uint32_t kThreads = 256;  // 8 warps: enough to hide latency, any SM fits several blocks

uint32_t grid_for(uint64_t n) {
  const uint64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<uint32_t>(std::min<uint64_t>(blocks ? blocks : 1, uint64_t{1} << 20));
}

// Writes a warp's 32 verdicts (bits for packets base..base+31) into the bit
// array: one or two atomic ORs, since base need not be 32-aligned.
__device__ void write_warp_bits(uint32_t* out, uint64_t base, uint32_t mask) {
  if (mask == 0) return;
  const uint64_t word = base / 32;
  const uint32_t shift = static_cast<uint32_t>(base % 32);
  atomicOr(out + word, mask << shift);
  if (shift && (mask >> (32 - shift))) atomicOr(out + word + 1, mask >> (32 - shift));
}

// Grid-stride loops step by whole warps so every lane of a warp takes part in
// each __ballot_sync (lanes past n vote false). head: APBF's newest slice.
// L: the guarded epoch layout the kernel is made for (-1: any; APBF).
template <class Family, int L>
__global__ void contains_kernel(typename Family::Ref f, uint32_t head, const KeyHash* keys, uint64_t n,
                                uint32_t* out) {
  const uint64_t stride = uint64_t{gridDim.x} * blockDim.x;
  for (uint64_t i = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i - threadIdx.x % 32 < n; i += stride) {
    const bool v = i < n && Family::template contains<L>(f, keys[i], head);
    const uint32_t mask = __ballot_sync(0xffffffffu, v);
    if (threadIdx.x % 32 == 0) write_warp_bits(out, i, mask);
  }
}

// skip/skip_base (insert-on-miss): packets whose bit is set there do not
// insert (epoch_plan.hpp, inserts()); nullptr: every packet does.
template <class Family>
__global__ void first_setter_kernel(typename Family::Ref f, BatchPlan p, const KeyHash* keys, uint32_t* first,
                                    uint64_t fbits, const uint32_t* skip, uint64_t skip_base) {
  const uint64_t stride = uint64_t{gridDim.x} * blockDim.x;
  for (uint64_t i = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < p.count; i += stride)
    Family::stamp(f, p, keys, first, fbits, i, skip, skip_base);
}

template <class Family>
__global__ void verdict_kernel(typename Family::Ref f, BatchPlan p, const KeyHash* keys, const uint32_t* first,
                               uint64_t fbits, uint32_t* out, uint64_t out_base) {
  const uint64_t stride = uint64_t{gridDim.x} * blockDim.x;
  for (uint64_t i = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i - threadIdx.x % 32 < p.count;
       i += stride) {
    const bool seen = i < p.count && Family::verdict(f, p, keys, first, fbits, i);
    const uint32_t mask = __ballot_sync(0xffffffffu, seen);
    if (threadIdx.x % 32 == 0) write_warp_bits(out, out_base + i, mask);
  }
}

// Sets each inserting packet's bits (unless !insert); with `first`, also
// returns the F entries it stamped to kUnset (after the verdict kernel has
// read them).
template <class Family>
__global__ void insert_kernel(typename Family::Ref f, BatchPlan p, const KeyHash* keys, uint32_t* first,
                              uint64_t fbits, const uint32_t* skip, uint64_t skip_base, bool insert) {
  const uint64_t stride = uint64_t{gridDim.x} * blockDim.x;
  for (uint64_t i = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < p.count; i += stride)
    Family::insert(f, p, keys, first, fbits, i, skip, skip_base, insert);
}

// The one-line layout line by line (line_replay.hpp). 1: each packet's line
// and index, the pairs the radix sort orders.
__global__ void line_key_kernel(GuardedEpochRef f, const KeyHash* keys, uint64_t n, uint32_t* line,
                                uint32_t* index) {
  const uint64_t stride = uint64_t{gridDim.x} * blockDim.x;
  for (uint64_t i = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) {
    line[i] = line_key(f, keys, i);
    index[i] = static_cast<uint32_t>(i);
  }
}

// 2: the thread at the head of each line's run (sorted[t - 1] differs)
// replays the run; the threads that find no head cost a load and a compare.
// A run of kLongRun packets or more (one key flooding the batch) is listed
// instead, for long_run_kernel: one thread took 0.5 us a packet there
// (line_replay.hpp).
__global__ void line_replay_kernel(GuardedEpochRef f, BatchPlan p, const KeyHash* keys, const uint32_t* sorted,
                                   const uint32_t* index, const uint32_t* skip, uint64_t skip_base, uint8_t* seen,
                                   LineWriteBack wb, uint32_t* long_runs, uint32_t* long_count) {
  const uint64_t stride = uint64_t{gridDim.x} * blockDim.x;
  for (uint64_t t = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; t < p.count; t += stride) {
    const uint32_t line = sorted[t];
    if (t > 0 && sorted[t - 1] == line) continue;
    uint32_t len = 1;
    while (len < kLongRun && t + len < p.count && sorted[t + len] == line) ++len;
    if (len == kLongRun) {
      long_runs[atomicAdd(long_count, 1u)] = static_cast<uint32_t>(t);
      continue;
    }
    replay_line(f, p, keys, index + t, len, skip, skip_base, seen, wb);
  }
}

// 2b: each listed long run by one warp, 32 packets at a time: lane l judges
// packet c + l of chunk c, seeing what the chunk's earlier packets set in
// each slot by an exclusive prefix OR over the lanes (line_replay.hpp;
// replay_long_run_emulated is the same algorithm with the lanes in a loop).
// Runs are disjoint lines, so warps never share a line.
__global__ void long_run_kernel(GuardedEpochRef f, BatchPlan p, const KeyHash* keys, const uint32_t* sorted,
                                const uint32_t* index, const uint32_t* skip, uint64_t skip_base, uint8_t* seen,
                                LineWriteBack wb, const uint32_t* long_runs, const uint32_t* long_count) {
  constexpr unsigned kAll = 0xffffffffu;
  const uint32_t lane = threadIdx.x % kWarpLanes;
  const uint64_t warps = uint64_t{gridDim.x} * blockDim.x / kWarpLanes;
  const uint32_t runs = *long_count;
  for (uint64_t r = (uint64_t{blockIdx.x} * blockDim.x + threadIdx.x) / kWarpLanes; r < runs; r += warps) {
    const uint64_t t = long_runs[r];
    const uint32_t line = sorted[t];
    uint64_t old[8];
    load_line(f.word(0, line), old);
    uint64_t fresh[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (uint64_t c = t;; c += kWarpLanes) {
      const uint64_t q = c + lane;
      const bool valid = q < p.count && sorted[q] == line;
      const uint32_t i = valid ? index[q] : 0;
      const uint64_t m = valid ? f.lane_mask(keys[i]) : 0;
      const uint32_t slot = valid ? insert_slot(p, skip, skip_base, i) : kNoSlot;
      uint64_t before[8], total[8];
      AGEBLOOM_UNROLL
      for (uint32_t s = 0; s < 8; ++s) {
        unsigned long long x = slot == s ? m : 0;
        before[s] = fresh[s];
        total[s] = 0;
        if (!__any_sync(kAll, x != 0)) continue;  // no packet of the chunk inserts there
        AGEBLOOM_UNROLL
        for (uint32_t d = 1; d < kWarpLanes; d <<= 1) {
          const unsigned long long y = __shfl_up_sync(kAll, x, d);
          if (lane >= d) x |= y;
        }
        const unsigned long long up = __shfl_up_sync(kAll, x, 1);
        before[s] |= lane == 0 ? 0 : up;
        total[s] = __shfl_sync(kAll, x, kWarpLanes - 1);
      }
      if (valid) seen[i] = line_hit(f, p, old, before, i, m);
      AGEBLOOM_UNROLL
      for (uint32_t s = 0; s < 8; ++s) fresh[s] |= total[s];
      if (!__all_sync(kAll, valid)) break;  // the run ended in this chunk
    }
    if (lane == 0) write_back_line(f, line, old, fresh, wb);
  }
}

// 4 (insert-always, when the batch rotates): the clears on untouched lines.
__global__ void clear_untouched_kernel(GuardedEpochRef f, uint64_t cleared, uint8_t* touched) {
  const uint64_t stride = uint64_t{gridDim.x} * blockDim.x;
  for (uint64_t line = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; line < f.segment_words; line += stride)
    clear_untouched(f, line, cleared, touched);
}

// 3: the verdict bytes as bits of out, a warp's 32 at a time.
__global__ void pack_verdicts_kernel(const uint8_t* seen, uint64_t n, uint32_t* out, uint64_t out_base) {
  const uint64_t stride = uint64_t{gridDim.x} * blockDim.x;
  for (uint64_t i = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i - threadIdx.x % 32 < n; i += stride) {
    const uint32_t mask = __ballot_sync(0xffffffffu, i < n && seen[i] != 0);
    if (threadIdx.x % 32 == 0) write_warp_bits(out, out_base + i, mask);
  }
}

// Zeroes lanes `slots` (bit s: lane s) of every line, a thread per line: one
// pass over the lines for all the batch's rotations, where a 2D memset per
// lane (8-byte rows, 64-byte pitch) measured slower than the inserts.
__global__ void clear_lanes_kernel(GuardedEpochRef f, uint64_t slots) {
  const uint64_t stride = uint64_t{gridDim.x} * blockDim.x;
  for (uint64_t line = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; line < f.segment_words; line += stride)
    f.clear_lanes(line, slots);
}

uint32_t slots_of(const EpochShape& s) { return s.segments; }
uint32_t slots_of(const ApbfShape& s) { return s.segments(); }
uint32_t live_of(const EpochShape& s) { return s.live; }  // the most epochs a batch spans
uint32_t live_of(const ApbfShape& s) { return s.segments(); }
size_t words_offset_of(const EpochShape& s) { return s.words_offset; }
size_t words_offset_of(const ApbfShape&) { return kWordsOffset; }

}  // namespace

cudaError_t GuardedEpochFamily::clear(const GuardedEpochRef& r, uint64_t slots, cudaStream_t stream) {
  if (slots == 0) return cudaSuccess;
  if (r.word_stride != 1) {
    clear_lanes_kernel<<<grid_for(r.segment_words), kThreads, 0, stream>>>(r, slots);
    return cudaGetLastError();
  }
  for (uint32_t s = 0; s < r.segments; ++s)
    if ((slots >> s) & 1u)
      if (cudaError_t e = cudaMemsetAsync(r.word(s, 0), 0, r.segment_words * sizeof(uint64_t), stream);
          e != cudaSuccess)
        return e;
  return cudaSuccess;
}

template <class Family>
uint32_t EpochDevice<Family>::slots() const noexcept {
  return slots_of(shape_);
}

template <class Family>
GpuStatus EpochDevice<Family>::create_shape(const Expected<Shape>& shape, EpochDevice& out) {
  if (!shape) {
    GpuStatus s = gpu_error(shape.code() == Errc::block_size_invalid ? GpuErrc::unsupported : GpuErrc::invalid_config);
    s.config_error = shape.code();
    return s;
  }
  EpochDevice d;
  d.shape_ = *shape;
  // The arena image ends with the words (+ up to 63 bytes of base padding).
  if (words_offset_of(d.shape_) + d.shape_.words_bytes() > d.shape_.bytes) return gpu_error(GpuErrc::bad_argument);
  AGEBLOOM_CUDA_TRY(cudaMalloc(&d.base_, d.shape_.bytes));
  AGEBLOOM_CUDA_TRY(cudaMemset(d.base_, 0, d.shape_.bytes));
  d.state_ = d.shape_.initial_state();
  d.ref_ = d.shape_.at(d.base_);
  if constexpr (Family::kByLine) {
    if (d.lines_by_line()) {
      AGEBLOOM_GPU_TRY(d.replay_by_line(true));
      out = static_cast<EpochDevice&&>(d);
      return {};
    }
  }
  AGEBLOOM_GPU_TRY(d.reserve_first_setters());
  out = static_cast<EpochDevice&&>(d);
  return {};
}

template <class Family>
GpuStatus EpochDevice<Family>::replay_by_line(bool on) {
  if (!on) {
    release_line_buffers();  // before the stamps take their share of what is free
    if (first_ == nullptr) AGEBLOOM_GPU_TRY(reserve_first_setters());
    by_line_ = false;
    return {};
  }
  if constexpr (Family::kByLine) {
    if (lines_by_line()) {
      if (line_seen_ == nullptr) AGEBLOOM_GPU_TRY(reserve_line_buffers());
      by_line_ = true;
      return {};
    }
  }
  return gpu_error(GpuErrc::unsupported);
}

// Line by line: batches of at most 2^25 packets (17 bytes each here, and the
// sort's scratch), fewer where device memory is short; the sort looks at the
// bits a line number can have.
template <class Family>
GpuStatus EpochDevice<Family>::reserve_line_buffers() {
  if constexpr (Family::kByLine) {
    size_t free_b = 0, total_b = 0;
    AGEBLOOM_CUDA_TRY(cudaMemGetInfo(&free_b, &total_b));
    constexpr uint64_t kPerPacket = 4 * sizeof(uint32_t) + 1;
    const uint64_t cap = std::max<uint64_t>(std::min<uint64_t>(uint64_t{1} << 25, free_b / 4 / kPerPacket), 1024);
    const uint64_t lines = shape_.ref.segment_words;
    int bits = 1;
    while (bits < 32 && (uint64_t{1} << bits) < lines) ++bits;
    line_key_bits_ = bits;
    for (int b = 0; b < 2; ++b) {
      AGEBLOOM_CUDA_TRY(cudaMalloc(&line_keys_[b], cap * sizeof(uint32_t)));
      AGEBLOOM_CUDA_TRY(cudaMalloc(&line_index_[b], cap * sizeof(uint32_t)));
    }
    AGEBLOOM_CUDA_TRY(cudaMalloc(&line_seen_, cap));
    AGEBLOOM_CUDA_TRY(cudaMalloc(&long_runs_, (cap / kLongRun + 1) * sizeof(uint32_t)));
    AGEBLOOM_CUDA_TRY(cudaMalloc(&long_count_, sizeof(uint32_t)));
    AGEBLOOM_CUDA_TRY(cudaMalloc(&line_touched_, lines));
    AGEBLOOM_CUDA_TRY(cudaMemset(line_touched_, 0, lines));
    size_t temp = 0;
    AGEBLOOM_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, temp, line_keys_[0], line_keys_[1], line_index_[0],
                                                      line_index_[1], static_cast<int>(cap), 0, line_key_bits_));
    AGEBLOOM_CUDA_TRY(cudaMalloc(&sort_temp_, temp));
    sort_temp_bytes_ = temp;
    line_cap_ = cap;
    return {};
  } else {
    return gpu_error(GpuErrc::unsupported);
  }
}

template <class Family>
GpuStatus EpochDevice<Family>::line_verdicts(const BatchPlan& p, const KeyHash* k, const uint32_t* skip,
                                             uint64_t skip_base, uint32_t* out, uint64_t out_base,
                                             LineWriteBack wb, cudaStream_t stream) {
  if constexpr (Family::kByLine) {
    line_key_kernel<<<grid_for(p.count), kThreads, 0, stream>>>(ref_, k, p.count, line_keys_[0], line_index_[0]);
    AGEBLOOM_LAUNCH_TRY();
    size_t temp = sort_temp_bytes_;
    AGEBLOOM_CUDA_TRY(cub::DeviceRadixSort::SortPairs(sort_temp_, temp, line_keys_[0], line_keys_[1],
                                                      line_index_[0], line_index_[1], static_cast<int>(p.count), 0,
                                                      line_key_bits_, stream));
    AGEBLOOM_CUDA_TRY(cudaMemsetAsync(long_count_, 0, sizeof(uint32_t), stream));
    line_replay_kernel<<<grid_for(p.count), kThreads, 0, stream>>>(ref_, p, k, line_keys_[1], line_index_[1], skip,
                                                                   skip_base, line_seen_, wb, long_runs_, long_count_);
    AGEBLOOM_LAUNCH_TRY();
    // A warp for each long run there may be (the kernel reads how many there are).
    long_run_kernel<<<grid_for((p.count / kLongRun + 1) * kWarpLanes), kThreads, 0, stream>>>(
        ref_, p, k, line_keys_[1], line_index_[1], skip, skip_base, line_seen_, wb, long_runs_, long_count_);
    AGEBLOOM_LAUNCH_TRY();
    pack_verdicts_kernel<<<grid_for(p.count), kThreads, 0, stream>>>(line_seen_, p.count, out, out_base);
    AGEBLOOM_LAUNCH_TRY();
    return {};
  } else {
    return gpu_error(GpuErrc::unsupported);
  }
}

template <class Family>
uint32_t EpochDevice<Family>::batch_epochs(bool stamps) const noexcept {
  return stamps && !by_line_ && Family::kStampsPerEpoch ? first_arrays_ : slots();
}

template <class Family>
uint64_t EpochDevice<Family>::batch_packets(uint64_t remaining) const noexcept {
  return by_line_ ? std::min(remaining, line_cap_) : remaining;
}

template <class Family>
GpuStatus EpochDevice<Family>::upload(const void* image, size_t bytes) {
  if (image == nullptr || bytes != shape_.bytes) return gpu_error(GpuErrc::bad_argument);
  EpochState s;
  std::memcpy(&s, image, sizeof s);
  if (s.current >= slots() || s.schedule.kind != shape_.kind) return gpu_error(GpuErrc::bad_argument);
  AGEBLOOM_CUDA_TRY(cudaMemcpy(base_, image, bytes, cudaMemcpyHostToDevice));
  state_ = s;
  if constexpr (std::is_same_v<Shape, EpochShape>) {
    if (shape_.swept) {
      SweptRingHeader h;
      std::memcpy(&h, image, sizeof h);
      epoch_insertions_ = h.epoch_insertions;
    }
  }
  return {};
}

template <class Family>
GpuStatus EpochDevice<Family>::download(void* image, size_t bytes) {
  if (image == nullptr || bytes != shape_.bytes) return gpu_error(GpuErrc::bad_argument);
  if constexpr (std::is_same_v<Shape, EpochShape>) {
    if (shape_.swept) {
      // The CPU filter's sweep: the spare's first lines cleared, the header
      // saying how many (epoch_plan.hpp, swept_header). The replay never
      // reads the spare and clears a lane whole when an epoch takes it, so
      // clearing these lines now changes no later verdict.
      const SweptRingHeader h = swept_header(shape_, state_, epoch_insertions_);
      if (h.swept != 0)
        AGEBLOOM_CUDA_TRY(cudaMemset2D(ref_.word(spare_slot(shape_, state_), 0), 8 * sizeof(uint64_t), 0,
                                       sizeof(uint64_t), h.swept));
      AGEBLOOM_CUDA_TRY(cudaMemcpy(base_, &h, sizeof h, cudaMemcpyHostToDevice));
      AGEBLOOM_CUDA_TRY(cudaMemcpy(image, base_, bytes, cudaMemcpyDeviceToHost));
      return {};
    }
  }
  AGEBLOOM_CUDA_TRY(cudaMemcpy(base_, &state_, sizeof state_, cudaMemcpyHostToDevice));
  AGEBLOOM_CUDA_TRY(cudaMemcpy(image, base_, bytes, cudaMemcpyDeviceToHost));
  return {};
}

template <class Family>
GpuStatus EpochDevice<Family>::contains_async(const KeyHash* keys, size_t n, uint32_t* out,
                                              cudaStream_t stream) const {
  if (n == 0) return {};
  if (keys == nullptr || out == nullptr) return gpu_error(GpuErrc::bad_argument);
  // One kernel per guarded epoch layout (GuardedEpochRef::contains_as); the
  // swept layout's spare, the slot after the current one, is not read.
  Ref r = ref_;
  if constexpr (std::is_same_v<Shape, EpochShape>)
    if (shape_.swept) r.spare = spare_slot(shape_, state_);
  auto launch = [&](auto layout) {
    contains_kernel<Family, decltype(layout)::value><<<grid_for(n), kThreads, 0, stream>>>(r, state_.current, keys,
                                                                                            n, out);
  };
  if constexpr (Family::kByLine) {
    switch (ref_.layout) {
      case SegmentLayout::lanes: launch(std::integral_constant<int, int(SegmentLayout::lanes)>{}); break;
      case SegmentLayout::blocked: launch(std::integral_constant<int, int(SegmentLayout::blocked)>{}); break;
      case SegmentLayout::flat: launch(std::integral_constant<int, int(SegmentLayout::flat)>{}); break;
    }
  } else {
    launch(std::integral_constant<int, -1>{});
  }
  AGEBLOOM_LAUNCH_TRY();
  return {};
}

// First-setter arrays, reserved once at create() so that no _async call
// allocates or synchronizes. Guarded epoch: one per epoch a batch may span,
// at most r+1, as many as fit in 3/4 of the free device memory (at least
// one; fewer only shorten the batches). APBF: one per physical slice, always all.
template <class Family>
GpuStatus EpochDevice<Family>::reserve_first_setters() {
  const uint64_t per_array = shape_.segment_bits() * sizeof(uint32_t);
  uint64_t want = Family::kStampsPerEpoch ? live_of(shape_) : slots();
  if constexpr (Family::kStampsPerEpoch) {
    size_t free_b = 0, total_b = 0;
    AGEBLOOM_CUDA_TRY(cudaMemGetInfo(&free_b, &total_b));
    want = std::max<uint64_t>(1, std::min<uint64_t>(want, free_b / 4 * 3 / per_array));
  }
  AGEBLOOM_CUDA_TRY(cudaMalloc(&first_, want * per_array));
  AGEBLOOM_CUDA_TRY(cudaMemset(first_, 0xff, want * per_array));
  first_arrays_ = static_cast<uint32_t>(want);
  return {};
}

template <class Family>
GpuStatus EpochDevice<Family>::run_batches(const KeyHash* keys, size_t n, uint32_t* out, cudaStream_t stream,
                                           const uint64_t* now) {
  const bool timed = shape_.kind == WindowKind::time;
  if (timed && n != 0 && now == nullptr) return gpu_error(GpuErrc::bad_argument);
  if (n > (uint64_t{1} << 31)) return gpu_error(GpuErrc::bad_argument);
  if (n == 0) return {};
  if (keys == nullptr) return gpu_error(GpuErrc::bad_argument);
  const uint64_t fbits = shape_.segment_bits();
  const uint32_t max_epochs = batch_epochs(out != nullptr);
  const bool stamps = out != nullptr && !by_line_;
  batches_ = 0;
  rounds_ = 0;
  for (uint64_t done = 0; done < n; ++batches_) {
    const uint64_t before = state_.insertions;
    const BatchPlan p = Family::plan(state_, shape_, ref_, timed ? now + done : nullptr, nullptr, 0,
                                     out != nullptr ? batch_packets(n - done) : n - done, max_epochs);
    note_epoch_start(p, before, epoch_insertions_);
    const KeyHash* k = keys + done;
    const uint64_t cleared = p.cleared_slots(slots());
    if (by_line_ && out != nullptr) {
      // Verdicts, inserts and the touched lines' clears in the line pass;
      // then the other lines' clears (line_replay.hpp, step 3).
      AGEBLOOM_GPU_TRY(line_verdicts(p, k, nullptr, 0, out, done, {cleared, line_touched_}, stream));
      if constexpr (Family::kByLine) {
        if (cleared != 0) {
          clear_untouched_kernel<<<grid_for(ref_.segment_words), kThreads, 0, stream>>>(ref_, cleared, line_touched_);
          AGEBLOOM_LAUNCH_TRY();
        }
      }
      done += p.count;
      continue;
    }
    if (stamps) {
      first_setter_kernel<Family><<<grid_for(p.count), kThreads, 0, stream>>>(ref_, p, k, first_, fbits, nullptr, 0);
      AGEBLOOM_LAUNCH_TRY();
      verdict_kernel<Family><<<grid_for(p.count), kThreads, 0, stream>>>(ref_, p, k, first_, fbits, out, done);
      AGEBLOOM_LAUNCH_TRY();
    }
    AGEBLOOM_CUDA_TRY(Family::clear(ref_, cleared, stream));
    insert_kernel<Family><<<grid_for(p.count), kThreads, 0, stream>>>(
        ref_, p, k, stamps ? first_ : nullptr, fbits, nullptr, 0, true);
    AGEBLOOM_LAUNCH_TRY();
    done += p.count;
  }
  return {};
}

// Insert-on-miss (replay_steps.hpp): per batch, rounds of stamp, verdict and
// unstamp with the inserts the previous round's verdicts imply (the first
// round: every packet inserts), until no verdict changes; then clear and
// insert once. The host plans each round from the verdicts (count windows
// count insertions), so every round ends with a copy of the batch's verdict
// words to the host: synchronous, unlike the insert-always path.
template <class Family>
GpuStatus EpochDevice<Family>::test_or_insert(const KeyHash* keys, size_t n, uint32_t* out, cudaStream_t stream,
                                              const uint64_t* now) {
  const bool timed = shape_.kind == WindowKind::time;
  if (n == 0) return {};
  if (keys == nullptr || out == nullptr || (timed && now == nullptr) || n > (uint64_t{1} << 31))
    return gpu_error(GpuErrc::bad_argument);
  const uint64_t fbits = shape_.segment_bits();
  const uint32_t max_epochs = batch_epochs(true);
  const size_t words = (n + 31) / 32;
  std::vector<uint32_t> seen(words, 0), next(words, 0);  // out's words on the host: the guess, then the answer
  uint32_t* next_dev = nullptr;
  AGEBLOOM_CUDA_TRY(cudaMalloc(&next_dev, words * sizeof(uint32_t)));
  struct Free {
    uint32_t* p;
    ~Free() { (void)cudaFree(p); }
  } free_next{next_dev};
  AGEBLOOM_CUDA_TRY(cudaMemsetAsync(out, 0, words * sizeof(uint32_t), stream));
  batches_ = 0;
  rounds_ = 0;
  for (uint64_t done = 0; done < n; ++batches_) {
    EpochState st;
    BatchPlan p;
    const KeyHash* k = keys + done;
    for (bool changed = true; changed; ++rounds_) {
      st = state_;
      p = Family::plan(st, shape_, ref_, timed ? now + done : nullptr, seen.data(), done, batch_packets(n - done),
                       max_epochs);
      const uint64_t w0 = done / 32, w1 = (done + p.count + 31) / 32;
      AGEBLOOM_CUDA_TRY(cudaMemsetAsync(next_dev + w0, 0, (w1 - w0) * sizeof(uint32_t), stream));
      if (by_line_) {
        AGEBLOOM_GPU_TRY(line_verdicts(p, k, out, done, next_dev, done, {}, stream));
      } else {
        first_setter_kernel<Family><<<grid_for(p.count), kThreads, 0, stream>>>(ref_, p, k, first_, fbits, out, done);
        AGEBLOOM_LAUNCH_TRY();
        verdict_kernel<Family><<<grid_for(p.count), kThreads, 0, stream>>>(ref_, p, k, first_, fbits, next_dev, done);
        AGEBLOOM_LAUNCH_TRY();
        insert_kernel<Family><<<grid_for(p.count), kThreads, 0, stream>>>(ref_, p, k, first_, fbits, out, done, false);
        AGEBLOOM_LAUNCH_TRY();
      }
      AGEBLOOM_CUDA_TRY(cudaMemcpyAsync(next.data() + w0, next_dev + w0, (w1 - w0) * sizeof(uint32_t),
                                        cudaMemcpyDeviceToHost, stream));
      AGEBLOOM_CUDA_TRY(cudaStreamSynchronize(stream));
      // The batch's verdict bits that changed, a word at a time.
      changed = false;
      for (uint64_t w = w0; w < w1; ++w) {
        const uint64_t lo = std::max<uint64_t>(done, w * 32), hi = std::min<uint64_t>(done + p.count, w * 32 + 32);
        const uint32_t in_batch = static_cast<uint32_t>(((uint64_t{1} << (hi - lo)) - 1) << (lo - w * 32));
        const uint32_t diff = (seen[w] ^ next[w]) & in_batch;
        seen[w] ^= diff;
        changed |= diff != 0;
      }
      if (changed)
        AGEBLOOM_CUDA_TRY(cudaMemcpyAsync(out + w0, seen.data() + w0, (w1 - w0) * sizeof(uint32_t),
                                          cudaMemcpyHostToDevice, stream));
    }
    AGEBLOOM_CUDA_TRY(Family::clear(ref_, p.cleared_slots(slots()), stream));
    insert_kernel<Family><<<grid_for(p.count), kThreads, 0, stream>>>(ref_, p, k, nullptr, fbits, out, done, true);
    AGEBLOOM_LAUNCH_TRY();
    note_epoch_start(p, state_.insertions, epoch_insertions_);
    state_ = st;
    done += p.count;
  }
  AGEBLOOM_CUDA_TRY(cudaStreamSynchronize(stream));  // before next_dev is freed
  return {};
}

template <class Family>
GpuStatus EpochDevice<Family>::insert_async(const KeyHash* keys, size_t n, cudaStream_t stream, const uint64_t* now) {
  return run_batches(keys, n, nullptr, stream, now);
}

template <class Family>
GpuStatus EpochDevice<Family>::test_and_insert_async(const KeyHash* keys, size_t n, uint32_t* out,
                                                     cudaStream_t stream, const uint64_t* now) {
  if (n != 0 && out == nullptr) return gpu_error(GpuErrc::bad_argument);
  return run_batches(keys, n, out, stream, now);
}

template <class Family>
void EpochDevice<Family>::release() noexcept {
  // Errors on free cannot be reported from a destructor; the memory is gone either way.
  if (base_ != nullptr) (void)cudaFree(base_);
  if (first_ != nullptr) (void)cudaFree(first_);
  release_line_buffers();
  base_ = nullptr;
  first_ = nullptr;
  first_arrays_ = 0;
}

template <class Family>
void EpochDevice<Family>::release_line_buffers() noexcept {
  for (int b = 0; b < 2; ++b) {
    if (line_keys_[b] != nullptr) (void)cudaFree(line_keys_[b]);
    if (line_index_[b] != nullptr) (void)cudaFree(line_index_[b]);
    line_keys_[b] = line_index_[b] = nullptr;
  }
  if (line_seen_ != nullptr) (void)cudaFree(line_seen_);
  if (line_touched_ != nullptr) (void)cudaFree(line_touched_);
  if (long_runs_ != nullptr) (void)cudaFree(long_runs_);
  if (long_count_ != nullptr) (void)cudaFree(long_count_);
  long_runs_ = long_count_ = nullptr;
  if (sort_temp_ != nullptr) (void)cudaFree(sort_temp_);
  line_seen_ = nullptr;
  line_touched_ = nullptr;
  sort_temp_ = nullptr;
  sort_temp_bytes_ = 0;
  line_cap_ = 0;
  by_line_ = false;
}

template <class Family>
void EpochDevice<Family>::swap(EpochDevice& o) noexcept {
  std::swap(shape_, o.shape_);
  std::swap(state_, o.state_);
  std::swap(base_, o.base_);
  std::swap(ref_, o.ref_);
  std::swap(first_, o.first_);
  std::swap(first_arrays_, o.first_arrays_);
  std::swap(by_line_, o.by_line_);
  std::swap(line_keys_, o.line_keys_);
  std::swap(line_index_, o.line_index_);
  std::swap(line_seen_, o.line_seen_);
  std::swap(line_touched_, o.line_touched_);
  std::swap(long_runs_, o.long_runs_);
  std::swap(long_count_, o.long_count_);
  std::swap(sort_temp_, o.sort_temp_);
  std::swap(sort_temp_bytes_, o.sort_temp_bytes_);
  std::swap(line_cap_, o.line_cap_);
  std::swap(line_key_bits_, o.line_key_bits_);
  std::swap(batches_, o.batches_);
  std::swap(rounds_, o.rounds_);
  std::swap(epoch_insertions_, o.epoch_insertions_);
}

template class EpochDevice<GuardedEpochFamily>;
template class EpochDevice<ApbfFamily>;

}  // namespace agebloom::gpu
