// Kernels and the owner of the CUDA guarded epoch filter.
//
// Exact replay of a batch (up to r+1 epochs, each in its own slot; BatchPlan):
//   1. first_setter: every packet stamps its bits in its epoch's array F_e
//      with atomicMin(index), so F_e[bit] = the first packet of epoch e that
//      set the bit (UINT32_MAX: none).
//   2. verdict: packet i sees bit b of slot s iff the slot held it before the
//      batch and is not yet cleared for i (i <= keep[s]), or F_e[b] < i for the
//      epoch e inserting into s. Since bits of an epoch are only set, this is
//      the state the sequential filter had just before packet i.
//   3. clear the slots the batch rotates into, then insert: set the bits and
//      put UINT32_MAX back into the F entries touched (so F never needs a
//      full clear: the cost stays proportional to the packets).
#include <algorithm>
#include <cstring>

#include "guarded_epoch_device.cuh"

namespace agebloom::gpu {

namespace {

constexpr uint32_t kThreads = 256;  // 8 warps: enough to hide latency, any SM fits several blocks
constexpr uint32_t kNone = 0xffffffffu;

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
// each __ballot_sync (lanes past n vote false).
__global__ void contains_kernel(GuardedEpochRef f, const KeyHash* keys, uint64_t n, uint32_t* out) {
  const uint64_t stride = uint64_t{gridDim.x} * blockDim.x;
  for (uint64_t i = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i - threadIdx.x % 32 < n; i += stride) {
    const bool v = i < n && f.contains(keys[i]);
    const uint32_t mask = __ballot_sync(0xffffffffu, v);
    if (threadIdx.x % 32 == 0) write_warp_bits(out, i, mask);
  }
}

__global__ void first_setter_kernel(GuardedEpochRef f, BatchPlan p, const KeyHash* keys, uint32_t* first,
                                    uint64_t fbits) {
  const uint64_t stride = uint64_t{gridDim.x} * blockDim.x;
  for (uint64_t i = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < p.count; i += stride) {
    uint32_t* F = first + p.epoch_of(i) * fbits;
    const KeyHash h = keys[i];
    for (uint32_t j = 0; j < f.k; ++j) atomicMin(F + f.position(h, j), static_cast<uint32_t>(i));
  }
}

__global__ void verdict_kernel(GuardedEpochRef f, BatchPlan p, const KeyHash* keys, const uint32_t* first,
                               uint64_t fbits, uint32_t* out, uint64_t out_base) {
  const uint64_t stride = uint64_t{gridDim.x} * blockDim.x;
  for (uint64_t i = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i - threadIdx.x % 32 < p.count;
       i += stride) {
    bool seen = false;
    if (i < p.count) {
      const KeyHash h = keys[i];
      const uint32_t me = static_cast<uint32_t>(i);
      for (uint32_t s = 0; s < f.segments && !seen; ++s) {
        const uint64_t* seg = f.segment(s);
        const bool old_visible = me <= p.keep[s];
        const uint32_t* F = p.slot_epoch[s] == BatchPlan::kNoEpoch ? nullptr : first + p.slot_epoch[s] * fbits;
        bool all = true;
        for (uint32_t j = 0; j < f.k && all; ++j) {
          const uint64_t b = f.position(h, j);
          all = (old_visible && ((seg[b / 64] >> (b % 64)) & 1u)) || (F != nullptr && F[b] < me);
        }
        seen = all;
      }
    }
    const uint32_t mask = __ballot_sync(0xffffffffu, seen);
    if (threadIdx.x % 32 == 0) write_warp_bits(out, out_base + i, mask);
  }
}

// Sets each packet's bits in its epoch's slot; with `first`, also returns the
// F entries it stamped to kNone (after the verdict kernel has read them).
__global__ void insert_kernel(GuardedEpochRef f, BatchPlan p, const KeyHash* keys, uint32_t* first,
                              uint64_t fbits) {
  const uint64_t stride = uint64_t{gridDim.x} * blockDim.x;
  for (uint64_t i = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < p.count; i += stride) {
    const uint32_t e = p.epoch_of(i);
    const KeyHash h = keys[i];
    f.insert(p.epoch_slot[e], h);
    if (first != nullptr) {
      uint32_t* F = first + e * fbits;
      for (uint32_t j = 0; j < f.k; ++j) F[f.position(h, j)] = kNone;
    }
  }
}

}  // namespace

GpuStatus GuardedEpochDevice::create(const GuardedEpochConfig& c, GuardedEpochDevice& out) {
  auto need = GuardedEpochFilter::bytes_needed(c);
  if (!need) {
    GpuStatus s = gpu_error(GpuErrc::invalid_config);
    s.config_error = need.code();
    return s;
  }
  GuardedEpochDevice d;
  d.cfg_ = c;
  d.bytes_ = *need;
  AGEBLOOM_CUDA_TRY(cudaMalloc(&d.base_, d.bytes_));
  AGEBLOOM_CUDA_TRY(cudaMemset(d.base_, 0, d.bytes_));
  d.state_.schedule = EpochSchedule::make(c.window.kind, c.epoch_length());
  if (c.window.is_time()) d.state_.schedule.fill_cap = c.epoch_capacity;
  d.state_.insertions = 0;
  d.state_.current = 0;
  d.ref_.words = reinterpret_cast<uint64_t*>(d.base_ + kWordsOffset);
  d.ref_.segment_words = c.block_bits ? (c.segment_bits / c.block_bits) * (c.block_bits / 64)
                                      : bits::words_for(c.segment_bits);
  d.ref_.segment_bits = c.segment_bits;
  d.ref_.blocks = c.block_bits ? c.segment_bits / c.block_bits : 0;
  d.ref_.log2_block = c.block_bits ? static_cast<uint32_t>(__builtin_ctz(c.block_bits)) : 0;
  d.ref_.k = c.k;
  d.ref_.segments = c.segments();
  // The arena image ends with the words (+ up to 63 bytes of base padding).
  if (kWordsOffset + d.ref_.segment_words * 8 * c.segments() > d.bytes_) return gpu_error(GpuErrc::bad_argument);
  out = static_cast<GuardedEpochDevice&&>(d);
  return {};
}

GpuStatus GuardedEpochDevice::upload(const void* image, size_t bytes) {
  if (image == nullptr || bytes != bytes_) return gpu_error(GpuErrc::bad_argument);
  State s;
  std::memcpy(&s, image, sizeof s);
  if (s.current >= cfg_.segments() || s.schedule.kind != cfg_.window.kind) return gpu_error(GpuErrc::bad_argument);
  AGEBLOOM_CUDA_TRY(cudaMemcpy(base_, image, bytes, cudaMemcpyHostToDevice));
  state_ = s;
  return {};
}

GpuStatus GuardedEpochDevice::download(void* image, size_t bytes) {
  if (image == nullptr || bytes != bytes_) return gpu_error(GpuErrc::bad_argument);
  AGEBLOOM_CUDA_TRY(cudaMemcpy(base_, &state_, sizeof state_, cudaMemcpyHostToDevice));
  AGEBLOOM_CUDA_TRY(cudaMemcpy(image, base_, bytes, cudaMemcpyDeviceToHost));
  return {};
}

GpuStatus GuardedEpochDevice::contains_async(const KeyHash* keys, size_t n, uint32_t* out,
                                             cudaStream_t stream) const {
  if (n == 0) return {};
  if (keys == nullptr || out == nullptr) return gpu_error(GpuErrc::bad_argument);
  contains_kernel<<<grid_for(n), kThreads, 0, stream>>>(ref_, keys, n, out);
  AGEBLOOM_LAUNCH_TRY();
  return {};
}

// Host side of the schedule: EpochSchedule::rotate_before_insert applied to a
// run of insertions at once. `fill` counts the current epoch's insertions; the
// insertion that finds fill == ℓ rotates first.
BatchPlan GuardedEpochDevice::plan_batch(uint64_t remaining, uint32_t max_epochs) noexcept {
  BatchPlan p;
  const uint32_t S = cfg_.segments();
  EpochSchedule& sch = state_.schedule;
  p.len = sch.length;
  for (uint32_t s = 0; s < S; ++s) {
    p.slot_epoch[s] = BatchPlan::kNoEpoch;
    p.keep[s] = kNone;
  }
  while (p.epochs < max_epochs && p.count < remaining) {
    const bool rotate = sch.fill == sch.length;
    if (rotate) {
      state_.current = (state_.current + 1) % S;
      sch.fill = 0;
    }
    const uint64_t take = std::min<uint64_t>(sch.length - sch.fill, remaining - p.count);
    if (p.epochs == 0) p.first_len = take;
    p.epoch_slot[p.epochs] = static_cast<uint8_t>(state_.current);
    p.slot_epoch[state_.current] = static_cast<uint8_t>(p.epochs);
    if (rotate) p.keep[state_.current] = static_cast<uint32_t>(p.count);
    sch.fill += take;
    p.count += take;
    ++p.epochs;
  }
  state_.insertions += p.count;
  return p;
}

// First-setter arrays: one per epoch a batch may span, at most r+1, as many
// as fit in 3/4 of the free device memory (at least one).
GpuStatus GuardedEpochDevice::ensure_first_setters(size_t n) {
  const uint64_t per_epoch = ref_.segment_words * 64 * sizeof(uint32_t);
  const uint64_t len = state_.schedule.length;
  uint64_t want = std::min<uint64_t>(cfg_.segments(), (n + len - 1) / len + 1);
  if (want <= first_epochs_) return {};
  if (first_ != nullptr) {
    AGEBLOOM_CUDA_TRY(cudaFree(first_));
    first_ = nullptr;
    first_epochs_ = 0;
  }
  size_t free_b = 0, total_b = 0;
  AGEBLOOM_CUDA_TRY(cudaMemGetInfo(&free_b, &total_b));
  want = std::max<uint64_t>(1, std::min<uint64_t>(want, free_b / 4 * 3 / per_epoch));
  AGEBLOOM_CUDA_TRY(cudaMalloc(&first_, want * per_epoch));
  AGEBLOOM_CUDA_TRY(cudaMemset(first_, 0xff, want * per_epoch));
  first_epochs_ = static_cast<uint32_t>(want);
  return {};
}

GpuStatus GuardedEpochDevice::run_batches(const KeyHash* keys, size_t n, uint32_t* out, cudaStream_t stream) {
  if (cfg_.window.is_time()) return gpu_error(GpuErrc::unsupported);
  if (n > (uint64_t{1} << 31)) return gpu_error(GpuErrc::bad_argument);
  if (n == 0) return {};
  if (keys == nullptr) return gpu_error(GpuErrc::bad_argument);
  if (out != nullptr) AGEBLOOM_GPU_TRY(ensure_first_setters(n));
  const uint64_t fbits = ref_.segment_words * 64;
  const uint32_t max_epochs = out != nullptr ? first_epochs_ : cfg_.segments();
  batches_ = 0;
  for (uint64_t done = 0; done < n; ++batches_) {
    const BatchPlan p = plan_batch(n - done, max_epochs);
    const KeyHash* k = keys + done;
    if (out != nullptr) {
      first_setter_kernel<<<grid_for(p.count), kThreads, 0, stream>>>(ref_, p, k, first_, fbits);
      AGEBLOOM_LAUNCH_TRY();
      verdict_kernel<<<grid_for(p.count), kThreads, 0, stream>>>(ref_, p, k, first_, fbits, out, done);
      AGEBLOOM_LAUNCH_TRY();
    }
    for (uint32_t s = 0; s < cfg_.segments(); ++s)
      if (p.keep[s] != kNone)
        AGEBLOOM_CUDA_TRY(cudaMemsetAsync(ref_.words + s * ref_.segment_words, 0,
                                          ref_.segment_words * sizeof(uint64_t), stream));
    insert_kernel<<<grid_for(p.count), kThreads, 0, stream>>>(ref_, p, k, out != nullptr ? first_ : nullptr,
                                                               fbits);
    AGEBLOOM_LAUNCH_TRY();
    done += p.count;
  }
  return {};
}

GpuStatus GuardedEpochDevice::insert_async(const KeyHash* keys, size_t n, cudaStream_t stream) {
  return run_batches(keys, n, nullptr, stream);
}

GpuStatus GuardedEpochDevice::test_and_insert_async(const KeyHash* keys, size_t n, uint32_t* out,
                                                    cudaStream_t stream) {
  if (n != 0 && out == nullptr) return gpu_error(GpuErrc::bad_argument);
  return run_batches(keys, n, out, stream);
}

void GuardedEpochDevice::release() noexcept {
  // Errors on free cannot be reported from a destructor; the memory is gone either way.
  if (base_ != nullptr) (void)cudaFree(base_);
  if (first_ != nullptr) (void)cudaFree(first_);
  base_ = nullptr;
  first_ = nullptr;
  first_epochs_ = 0;
}

void GuardedEpochDevice::swap(GuardedEpochDevice& o) noexcept {
  std::swap(cfg_, o.cfg_);
  std::swap(state_, o.state_);
  std::swap(base_, o.base_);
  std::swap(bytes_, o.bytes_);
  std::swap(ref_, o.ref_);
  std::swap(first_, o.first_);
  std::swap(first_epochs_, o.first_epochs_);
  std::swap(batches_, o.batches_);
}

}  // namespace agebloom::gpu
