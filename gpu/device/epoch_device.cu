// Kernels and the owner of the CUDA filters (epoch_device.cuh). The exact
// replay of a batch is a family's three per-packet passes, one kernel each,
// with the clearing of the segments the batch rotates into between the
// verdicts and the inserts; insert-on-miss repeats the first two (and the
// unstamping) until the verdicts stop changing.
#include <algorithm>
#include <cstring>
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
template <class Family>
__global__ void contains_kernel(typename Family::Ref f, uint32_t head, const KeyHash* keys, uint64_t n,
                                uint32_t* out) {
  const uint64_t stride = uint64_t{gridDim.x} * blockDim.x;
  for (uint64_t i = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i - threadIdx.x % 32 < n; i += stride) {
    const bool v = i < n && Family::contains(f, keys[i], head);
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

uint32_t slots_of(const EpochShape& s) { return s.segments; }
uint32_t slots_of(const ApbfShape& s) { return s.segments(); }

}  // namespace

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
  if (kWordsOffset + d.shape_.words_bytes() > d.shape_.bytes) return gpu_error(GpuErrc::bad_argument);
  AGEBLOOM_CUDA_TRY(cudaMalloc(&d.base_, d.shape_.bytes));
  AGEBLOOM_CUDA_TRY(cudaMemset(d.base_, 0, d.shape_.bytes));
  d.state_ = d.shape_.initial_state();
  d.ref_ = d.shape_.at(d.base_);
  AGEBLOOM_GPU_TRY(d.reserve_first_setters());
  out = static_cast<EpochDevice&&>(d);
  return {};
}

template <class Family>
GpuStatus EpochDevice<Family>::upload(const void* image, size_t bytes) {
  if (image == nullptr || bytes != shape_.bytes) return gpu_error(GpuErrc::bad_argument);
  EpochState s;
  std::memcpy(&s, image, sizeof s);
  if (s.current >= slots() || s.schedule.kind != shape_.kind) return gpu_error(GpuErrc::bad_argument);
  AGEBLOOM_CUDA_TRY(cudaMemcpy(base_, image, bytes, cudaMemcpyHostToDevice));
  state_ = s;
  return {};
}

template <class Family>
GpuStatus EpochDevice<Family>::download(void* image, size_t bytes) {
  if (image == nullptr || bytes != shape_.bytes) return gpu_error(GpuErrc::bad_argument);
  AGEBLOOM_CUDA_TRY(cudaMemcpy(base_, &state_, sizeof state_, cudaMemcpyHostToDevice));
  AGEBLOOM_CUDA_TRY(cudaMemcpy(image, base_, bytes, cudaMemcpyDeviceToHost));
  return {};
}

template <class Family>
GpuStatus EpochDevice<Family>::contains_async(const KeyHash* keys, size_t n, uint32_t* out,
                                              cudaStream_t stream) const {
  if (n == 0) return {};
  if (keys == nullptr || out == nullptr) return gpu_error(GpuErrc::bad_argument);
  contains_kernel<Family><<<grid_for(n), kThreads, 0, stream>>>(ref_, state_.current, keys, n, out);
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
  uint64_t want = slots();
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
  const uint32_t max_epochs = out != nullptr && Family::kStampsPerEpoch ? first_arrays_ : slots();
  batches_ = 0;
  rounds_ = 0;
  for (uint64_t done = 0; done < n; ++batches_) {
    const BatchPlan p =
        Family::plan(state_, shape_, ref_, timed ? now + done : nullptr, nullptr, 0, n - done, max_epochs);
    const KeyHash* k = keys + done;
    if (out != nullptr) {
      first_setter_kernel<Family><<<grid_for(p.count), kThreads, 0, stream>>>(ref_, p, k, first_, fbits, nullptr, 0);
      AGEBLOOM_LAUNCH_TRY();
      verdict_kernel<Family><<<grid_for(p.count), kThreads, 0, stream>>>(ref_, p, k, first_, fbits, out, done);
      AGEBLOOM_LAUNCH_TRY();
    }
    for (uint32_t s = 0; s < slots(); ++s)
      if (p.keep_end[s] != BatchPlan::kNever) AGEBLOOM_CUDA_TRY(Family::clear(ref_, s, stream));
    insert_kernel<Family><<<grid_for(p.count), kThreads, 0, stream>>>(
        ref_, p, k, out != nullptr ? first_ : nullptr, fbits, nullptr, 0, true);
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
  const uint32_t max_epochs = Family::kStampsPerEpoch ? first_arrays_ : slots();
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
      p = Family::plan(st, shape_, ref_, timed ? now + done : nullptr, seen.data(), done, n - done, max_epochs);
      const uint64_t w0 = done / 32, w1 = (done + p.count + 31) / 32;
      first_setter_kernel<Family><<<grid_for(p.count), kThreads, 0, stream>>>(ref_, p, k, first_, fbits, out, done);
      AGEBLOOM_LAUNCH_TRY();
      AGEBLOOM_CUDA_TRY(cudaMemsetAsync(next_dev + w0, 0, (w1 - w0) * sizeof(uint32_t), stream));
      verdict_kernel<Family><<<grid_for(p.count), kThreads, 0, stream>>>(ref_, p, k, first_, fbits, next_dev, done);
      AGEBLOOM_LAUNCH_TRY();
      insert_kernel<Family><<<grid_for(p.count), kThreads, 0, stream>>>(ref_, p, k, first_, fbits, out, done, false);
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
    for (uint32_t s = 0; s < slots(); ++s)
      if (p.keep_end[s] != BatchPlan::kNever) AGEBLOOM_CUDA_TRY(Family::clear(ref_, s, stream));
    insert_kernel<Family><<<grid_for(p.count), kThreads, 0, stream>>>(ref_, p, k, nullptr, fbits, out, done, true);
    AGEBLOOM_LAUNCH_TRY();
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
  base_ = nullptr;
  first_ = nullptr;
  first_arrays_ = 0;
}

template <class Family>
void EpochDevice<Family>::swap(EpochDevice& o) noexcept {
  std::swap(shape_, o.shape_);
  std::swap(state_, o.state_);
  std::swap(base_, o.base_);
  std::swap(ref_, o.ref_);
  std::swap(first_, o.first_);
  std::swap(first_arrays_, o.first_arrays_);
  std::swap(batches_, o.batches_);
  std::swap(rounds_, o.rounds_);
}

template class EpochDevice<GuardedEpochFamily>;
template class EpochDevice<ApbfFamily>;

}  // namespace agebloom::gpu
