// Kernels and the owner of the CUDA guarded epoch filter. The exact replay of
// a batch is the three passes of replay_steps.hpp, one kernel each, with the
// clearing of the slots the batch rotates into between the verdicts and the
// inserts.
#include <algorithm>
#include <cstring>
#include <vector>

#include "guarded_epoch_device.cuh"
#include "replay_steps.hpp"

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
// each __ballot_sync (lanes past n vote false).
__global__ void contains_kernel(GuardedEpochRef f, const KeyHash* keys, uint64_t n, uint32_t* out) {
  const uint64_t stride = uint64_t{gridDim.x} * blockDim.x;
  for (uint64_t i = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i - threadIdx.x % 32 < n; i += stride) {
    const bool v = i < n && f.contains(keys[i]);
    const uint32_t mask = __ballot_sync(0xffffffffu, v);
    if (threadIdx.x % 32 == 0) write_warp_bits(out, i, mask);
  }
}

// skip/skip_base (insert-on-miss): packets whose bit is set there do not
// insert (epoch_plan.hpp, inserts()); nullptr: every packet does.
__global__ void first_setter_kernel(GuardedEpochRef f, BatchPlan p, const KeyHash* keys, uint32_t* first,
                                    uint64_t fbits, const uint32_t* skip, uint64_t skip_base) {
  const uint64_t stride = uint64_t{gridDim.x} * blockDim.x;
  for (uint64_t i = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < p.count; i += stride)
    stamp_first_setter(f, p, keys, first, fbits, i, skip, skip_base);
}

__global__ void verdict_kernel(GuardedEpochRef f, BatchPlan p, const KeyHash* keys, const uint32_t* first,
                               uint64_t fbits, uint32_t* out, uint64_t out_base) {
  const uint64_t stride = uint64_t{gridDim.x} * blockDim.x;
  for (uint64_t i = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i - threadIdx.x % 32 < p.count;
       i += stride) {
    const bool seen = i < p.count && replay_verdict(f, p, keys, first, fbits, i);
    const uint32_t mask = __ballot_sync(0xffffffffu, seen);
    if (threadIdx.x % 32 == 0) write_warp_bits(out, out_base + i, mask);
  }
}

// Sets each inserting packet's bits in its epoch's slot (unless !insert);
// with `first`, also returns the F entries it stamped to kUnset (after the
// verdict kernel has read them).
__global__ void insert_kernel(GuardedEpochRef f, BatchPlan p, const KeyHash* keys, uint32_t* first,
                              uint64_t fbits, const uint32_t* skip, uint64_t skip_base, bool insert) {
  const uint64_t stride = uint64_t{gridDim.x} * blockDim.x;
  for (uint64_t i = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < p.count; i += stride)
    insert_and_unstamp(f, p, keys, first, fbits, i, skip, skip_base, insert);
}

}  // namespace

GpuStatus GuardedEpochDevice::create_shape(const Expected<EpochShape>& shape, GuardedEpochDevice& out) {
  if (!shape) {
    GpuStatus s = gpu_error(shape.code() == Errc::block_size_invalid ? GpuErrc::unsupported : GpuErrc::invalid_config);
    s.config_error = shape.code();
    return s;
  }
  GuardedEpochDevice d;
  d.shape_ = *shape;
  // The arena image ends with the words (+ up to 63 bytes of base padding).
  if (kWordsOffset + d.shape_.words_bytes() > d.shape_.bytes) return gpu_error(GpuErrc::bad_argument);
  AGEBLOOM_CUDA_TRY(cudaMalloc(&d.base_, d.shape_.bytes));
  AGEBLOOM_CUDA_TRY(cudaMemset(d.base_, 0, d.shape_.bytes));
  d.state_ = d.shape_.initial_state();
  d.ref_ = d.shape_.at(d.base_);
  out = static_cast<GuardedEpochDevice&&>(d);
  return {};
}

GpuStatus GuardedEpochDevice::create(const GuardedEpochConfig& c, GuardedEpochDevice& out) {
  return create_shape(shape_of(c), out);
}

GpuStatus GuardedEpochDevice::create(const InterleavedEpochConfig& c, GuardedEpochDevice& out) {
  return create_shape(shape_of(c), out);
}

GpuStatus GuardedEpochDevice::upload(const void* image, size_t bytes) {
  if (image == nullptr || bytes != shape_.bytes) return gpu_error(GpuErrc::bad_argument);
  EpochState s;
  std::memcpy(&s, image, sizeof s);
  if (s.current >= shape_.segments || s.schedule.kind != shape_.kind) return gpu_error(GpuErrc::bad_argument);
  AGEBLOOM_CUDA_TRY(cudaMemcpy(base_, image, bytes, cudaMemcpyHostToDevice));
  state_ = s;
  return {};
}

GpuStatus GuardedEpochDevice::download(void* image, size_t bytes) {
  if (image == nullptr || bytes != shape_.bytes) return gpu_error(GpuErrc::bad_argument);
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

// First-setter arrays: one per epoch a batch may span, at most r+1, as many
// as fit in 3/4 of the free device memory (at least one).
GpuStatus GuardedEpochDevice::ensure_first_setters(size_t n) {
  const uint64_t per_epoch = shape_.segment_bits() * sizeof(uint32_t);
  // Count windows: the epochs n keys can span; time windows: any number.
  const uint64_t len = state_.schedule.length;
  uint64_t want = shape_.kind == WindowKind::time ? shape_.segments
                                                  : std::min<uint64_t>(shape_.segments, (n + len - 1) / len + 1);
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

// Zeroes segment s: contiguous words for flat and blocked segments; for the
// one-line layout lane s of every line, a 2D memset of 8-byte columns with a
// 64-byte pitch.
GpuStatus GuardedEpochDevice::clear_segment_async(uint32_t s, cudaStream_t stream) {
  const GuardedEpochRef& r = ref_;
  if (r.word_stride == 1) {
    AGEBLOOM_CUDA_TRY(cudaMemsetAsync(r.word(s, 0), 0, r.segment_words * sizeof(uint64_t), stream));
  } else {
    AGEBLOOM_CUDA_TRY(cudaMemset2DAsync(r.word(s, 0), r.word_stride * sizeof(uint64_t), 0, sizeof(uint64_t),
                                        r.segment_words, stream));
  }
  return {};
}

GpuStatus GuardedEpochDevice::run_batches(const KeyHash* keys, size_t n, uint32_t* out, cudaStream_t stream,
                                          const uint64_t* now) {
  const bool timed = shape_.kind == WindowKind::time;
  if (timed && n != 0 && now == nullptr) return gpu_error(GpuErrc::bad_argument);
  if (n > (uint64_t{1} << 31)) return gpu_error(GpuErrc::bad_argument);
  if (n == 0) return {};
  if (keys == nullptr) return gpu_error(GpuErrc::bad_argument);
  if (out != nullptr) AGEBLOOM_GPU_TRY(ensure_first_setters(n));
  const uint64_t fbits = shape_.segment_bits();
  const uint32_t max_epochs = out != nullptr ? first_epochs_ : shape_.segments;
  batches_ = 0;
  rounds_ = 0;
  for (uint64_t done = 0; done < n; ++batches_) {
    const BatchPlan p = timed ? plan_batch_timed(state_, shape_.segments, now + done, n - done, max_epochs)
                              : plan_batch(state_, shape_.segments, n - done, max_epochs);
    const KeyHash* k = keys + done;
    if (out != nullptr) {
      first_setter_kernel<<<grid_for(p.count), kThreads, 0, stream>>>(ref_, p, k, first_, fbits, nullptr, 0);
      AGEBLOOM_LAUNCH_TRY();
      verdict_kernel<<<grid_for(p.count), kThreads, 0, stream>>>(ref_, p, k, first_, fbits, out, done);
      AGEBLOOM_LAUNCH_TRY();
    }
    for (uint32_t s = 0; s < shape_.segments; ++s)
      if (p.keep_end[s] != BatchPlan::kNever) AGEBLOOM_GPU_TRY(clear_segment_async(s, stream));
    insert_kernel<<<grid_for(p.count), kThreads, 0, stream>>>(ref_, p, k, out != nullptr ? first_ : nullptr,
                                                               fbits, nullptr, 0, true);
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
GpuStatus GuardedEpochDevice::test_or_insert(const KeyHash* keys, size_t n, uint32_t* out, cudaStream_t stream,
                                             const uint64_t* now) {
  const bool timed = shape_.kind == WindowKind::time;
  if (n == 0) return {};
  if (keys == nullptr || out == nullptr || (timed && now == nullptr) || n > (uint64_t{1} << 31))
    return gpu_error(GpuErrc::bad_argument);
  AGEBLOOM_GPU_TRY(ensure_first_setters(n));
  const uint64_t fbits = shape_.segment_bits();
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
      p = plan_batch_walk(st, shape_.segments, timed ? now + done : nullptr, seen.data(), done, n - done,
                          first_epochs_);
      const uint64_t w0 = done / 32, w1 = (done + p.count + 31) / 32;
      first_setter_kernel<<<grid_for(p.count), kThreads, 0, stream>>>(ref_, p, k, first_, fbits, out, done);
      AGEBLOOM_LAUNCH_TRY();
      AGEBLOOM_CUDA_TRY(cudaMemsetAsync(next_dev + w0, 0, (w1 - w0) * sizeof(uint32_t), stream));
      verdict_kernel<<<grid_for(p.count), kThreads, 0, stream>>>(ref_, p, k, first_, fbits, next_dev, done);
      AGEBLOOM_LAUNCH_TRY();
      insert_kernel<<<grid_for(p.count), kThreads, 0, stream>>>(ref_, p, k, first_, fbits, out, done, false);
      AGEBLOOM_LAUNCH_TRY();
      AGEBLOOM_CUDA_TRY(cudaMemcpyAsync(next.data() + w0, next_dev + w0, (w1 - w0) * sizeof(uint32_t),
                                        cudaMemcpyDeviceToHost, stream));
      AGEBLOOM_CUDA_TRY(cudaStreamSynchronize(stream));
      changed = false;
      for (uint64_t at = done; at < done + p.count; ++at) {
        const uint32_t bit = 1u << (at % 32);
        if ((seen[at / 32] ^ next[at / 32]) & bit) {
          seen[at / 32] ^= bit;
          changed = true;
        }
      }
      if (changed)
        AGEBLOOM_CUDA_TRY(cudaMemcpyAsync(out + w0, seen.data() + w0, (w1 - w0) * sizeof(uint32_t),
                                          cudaMemcpyHostToDevice, stream));
    }
    for (uint32_t s = 0; s < shape_.segments; ++s)
      if (p.keep_end[s] != BatchPlan::kNever) AGEBLOOM_GPU_TRY(clear_segment_async(s, stream));
    insert_kernel<<<grid_for(p.count), kThreads, 0, stream>>>(ref_, p, k, nullptr, fbits, out, done, true);
    AGEBLOOM_LAUNCH_TRY();
    state_ = st;
    done += p.count;
  }
  AGEBLOOM_CUDA_TRY(cudaStreamSynchronize(stream));  // before next_dev is freed
  return {};
}

GpuStatus GuardedEpochDevice::insert_async(const KeyHash* keys, size_t n, cudaStream_t stream, const uint64_t* now) {
  return run_batches(keys, n, nullptr, stream, now);
}

GpuStatus GuardedEpochDevice::test_and_insert_async(const KeyHash* keys, size_t n, uint32_t* out,
                                                    cudaStream_t stream, const uint64_t* now) {
  if (n != 0 && out == nullptr) return gpu_error(GpuErrc::bad_argument);
  return run_batches(keys, n, out, stream, now);
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
  std::swap(shape_, o.shape_);
  std::swap(state_, o.state_);
  std::swap(base_, o.base_);
  std::swap(ref_, o.ref_);
  std::swap(first_, o.first_);
  std::swap(first_epochs_, o.first_epochs_);
  std::swap(batches_, o.batches_);
  std::swap(rounds_, o.rounds_);
}

}  // namespace agebloom::gpu
