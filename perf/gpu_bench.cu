// agebloom-gpu-bench: keys per second of the CUDA backend's filters.
//
//   agebloom-gpu-bench [--sizes 8M,64M,512M,1G,2G] [--layouts flat,blk512,line64,swept64,apbf,apbbf] [--keys N]
//                      [--seed HEX] [--no-paper] [--replay-distinct D]
//
// For each filter size (guarded epoch flat and blocked B = 512, r = 8, 14 bits
// per window item, so W = bytes * 8 / 14; and the one-line layout, r = 7,
// k = 8, W = bytes * 8 / 28; on request APBF at 1% (ApbfConfig::for_fpr) and
// APBBF (k = 3, l = 16, B = 512, b = 4, the device test's), W as many keys as
// the size holds) it times, with CUDA events and keys already in device memory:
//   insert   bulk insert of N keys (rotating at epoch ends)
//   q live   bulk contains of the last min(W, N/2) inserted keys (all live)
//   q neg    bulk contains of N/2 never-inserted keys (a negative probes
//            every segment: the slow case of the segment layouts; APBF's
//            scan stops at its first miss: its fast case)
//   replay   exact test_and_insert replay of N keys (verdicts as the CPU's);
//            for the one-line layout also by first-setter stamps ("rp
//            stamp"), the method it used before line-by-line replay
//   on-miss  the exact replay under insert-on-miss
// and prints keys/s plus an estimate of the negative query's DRAM traffic as a
// fraction of the peak bandwidth (one 32-byte sector per probed bit, flat, one
// 64-byte line per segment, blocked, one line, one-line layout; APBF and
// APBBF, one sector or line per slice that Algorithm 1's scan probes when every
// probe misses: slices l, l - k, ... 0, so l/k + 1; an upper bound since L2
// hits are counted).
// Then the paper-000 configuration: 200,000,000 insertions, W = 40,000,000,
// 14 bits per item, r = 8; 10M live + 10M negative queries, with the measured
// FPR on the negatives beside the model (paper's B200: 183.8 Mq/s for r = 8).
// Keys are XXH3-like mixes of (seed, index) drawn on the device; the seed is
// printed so runs reproduce. --replay-distinct D (D > 0): the replays' keys
// are only D distinct ones (index mod D), the rest as above; D = 1 is one
// source flooding a trace, a batch that is one run of a single key, which
// one thread replays alone (the slow case of the exact replay).
#include <cuda_runtime.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "device/check.cuh"
#include "device/epoch_device.cuh"
#include "agebloom/gpu/replay.hpp"

using namespace agebloom;
using namespace agebloom::gpu;

namespace {

// distinct > 0: index mod distinct (that many distinct keys).
__global__ void make_keys(KeyHash* out, uint64_t n, uint64_t first, uint64_t seed, uint64_t distinct) {
  const uint64_t stride = uint64_t{gridDim.x} * blockDim.x;
  for (uint64_t i = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) {
    const uint64_t index = distinct ? (first + i) % distinct : first + i;
    const uint64_t x = index * 0x9e3779b97f4a7c15ULL ^ seed;
    out[i] = KeyHash{mix64(x), mix64(x ^ 0xd6e8feb86659fd93ULL)};
  }
}

__global__ void popcount_bits(const uint32_t* bits, uint64_t words, unsigned long long* total) {
  const uint64_t stride = uint64_t{gridDim.x} * blockDim.x;
  unsigned long long local = 0;
  for (uint64_t i = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < words; i += stride) local += __popc(bits[i]);
  atomicAdd(total, local);
}

struct Timer {
  cudaEvent_t a = nullptr, b = nullptr;
  Timer() {
    (void)cudaEventCreate(&a);
    (void)cudaEventCreate(&b);
  }
  ~Timer() {
    (void)cudaEventDestroy(a);
    (void)cudaEventDestroy(b);
  }
};

struct DeviceBuffers {
  KeyHash* keys = nullptr;
  uint32_t* bits = nullptr;
  unsigned long long* count = nullptr;
  ~DeviceBuffers() {
    if (keys) (void)cudaFree(keys);
    if (bits) (void)cudaFree(bits);
    if (count) (void)cudaFree(count);
  }
};

double peak_bytes_per_s() {
  int khz = 0, bus = 0;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, 0) != cudaSuccess ||
      cudaDeviceGetAttribute(&bus, cudaDevAttrGlobalMemoryBusWidth, 0) != cudaSuccess)
    return 0;
  return 2.0 * khz * 1e3 * bus / 8;  // DDR: two transfers per clock
}

GpuStatus fill_keys(KeyHash* d, uint64_t n, uint64_t first, uint64_t seed, uint64_t distinct = 0) {
  make_keys<<<1024, 256>>>(d, n, first, seed, distinct);
  AGEBLOOM_LAUNCH_TRY();
  return {};
}

GpuStatus count_bits(const DeviceBuffers& b, uint64_t n, uint64_t& out) {
  AGEBLOOM_CUDA_TRY(cudaMemset(b.count, 0, sizeof(unsigned long long)));
  popcount_bits<<<1024, 256>>>(b.bits, (n + 31) / 32, b.count);
  AGEBLOOM_LAUNCH_TRY();
  unsigned long long c = 0;
  AGEBLOOM_CUDA_TRY(cudaMemcpy(&c, b.count, sizeof c, cudaMemcpyDeviceToHost));
  out = c;
  return {};
}

// Times one operation over n keys; returns seconds.
template <class Op>
GpuStatus timed(Op&& op, double& seconds) {
  Timer t;
  AGEBLOOM_CUDA_TRY(cudaEventRecord(t.a));
  AGEBLOOM_GPU_TRY(op());
  AGEBLOOM_CUDA_TRY(cudaEventRecord(t.b));
  AGEBLOOM_CUDA_TRY(cudaEventSynchronize(t.b));
  float ms = 0;
  AGEBLOOM_CUDA_TRY(cudaEventElapsedTime(&ms, t.a, t.b));
  seconds = ms / 1e3;
  return {};
}

// DRAM bytes a query reads: one 32-byte sector per probed bit (flat), one
// 64-byte line per segment (blocked), one line (the one-line layout).
double query_bytes_per_key(const GuardedEpochConfig& c) {
  return c.block_bits ? 64.0 * c.segments() : 32.0 * c.k * c.segments();
}
double query_bytes_per_key(const InterleavedEpochConfig&) { return 64.0; }
// APBF: the slices jump_back_scan probes when each probe misses (l, l - k, ...).
double query_bytes_per_key(const ApbfConfig& c) { return (c.block_bits ? 64.0 : 32.0) * (c.l / c.k + 1); }
uint32_t segments_of(const GuardedEpochConfig& c) { return c.segments(); }
uint32_t segments_of(const InterleavedEpochConfig& c) { return c.segments(); }
uint32_t segments_of(const ApbfConfig& c) { return c.slices(); }

// The device owner of each config's family.
template <class Config>
using DeviceOf = std::conditional_t<std::is_same_v<Config, ApbfConfig>, ApbfDevice, GuardedEpochDevice>;

// The one-line layout's replay by first-setter stamps, beside its default
// (line by line), in the same process.
bool has_stamp_column(const GuardedEpochConfig&) { return false; }
bool has_stamp_column(const InterleavedEpochConfig&) { return true; }
bool has_stamp_column(const ApbfConfig&) { return false; }

template <class Config>
GpuStatus bench_config(const Config& cfg, const char* layout, uint64_t window, uint64_t n, uint64_t seed,
                       double peak, uint64_t replay_distinct) {
  DeviceBuffers b;
  AGEBLOOM_CUDA_TRY(cudaMalloc(&b.keys, n * sizeof(KeyHash)));
  AGEBLOOM_CUDA_TRY(cudaMalloc(&b.bits, (n + 31) / 32 * 4));
  AGEBLOOM_CUDA_TRY(cudaMalloc(&b.count, sizeof(unsigned long long)));
  using Device = DeviceOf<Config>;
  Device f;
  AGEBLOOM_GPU_TRY(Device::create(cfg, f));
  double t_ins = 0, t_live = 0, t_neg = 0, t_rep = 0, t_stamps = 0, t_miss = 0;
  AGEBLOOM_GPU_TRY(fill_keys(b.keys, n, 0, seed));
  AGEBLOOM_GPU_TRY(timed([&] { return f.insert_async(b.keys, n, nullptr); }, t_ins));
  // Live: the last min(W, n/2) inserted, all inside the window (found: all
  // of them, no false negatives); negative: n/2 never inserted (found: FPs).
  const uint64_t live = std::min<uint64_t>(window, n / 2), neg = n / 2;
  uint64_t live_found = 0, neg_found = 0;
  AGEBLOOM_GPU_TRY(fill_keys(b.keys, live, n - live, seed));
  AGEBLOOM_CUDA_TRY(cudaMemset(b.bits, 0, (n + 31) / 32 * 4));
  AGEBLOOM_GPU_TRY(timed([&] { return f.contains_async(b.keys, live, b.bits, nullptr); }, t_live));
  AGEBLOOM_GPU_TRY(count_bits(b, live, live_found));
  AGEBLOOM_GPU_TRY(fill_keys(b.keys, neg, uint64_t{1} << 62, seed));
  AGEBLOOM_CUDA_TRY(cudaMemset(b.bits, 0, (n + 31) / 32 * 4));
  AGEBLOOM_GPU_TRY(timed([&] { return f.contains_async(b.keys, neg, b.bits, nullptr); }, t_neg));
  AGEBLOOM_GPU_TRY(count_bits(b, neg, neg_found));
  // Replays from an empty filter: insert-always (the default method, and
  // for the one-line layout first-setter stamps too), then insert-on-miss.
  auto replay = [&](bool stamps, bool on_miss, double& t) -> GpuStatus {
    Device g;
    AGEBLOOM_GPU_TRY(Device::create(cfg, g));
    if (stamps) AGEBLOOM_GPU_TRY(g.replay_by_line(false));
    AGEBLOOM_GPU_TRY(fill_keys(b.keys, n, 0, seed, replay_distinct));
    AGEBLOOM_CUDA_TRY(cudaMemset(b.bits, 0, (n + 31) / 32 * 4));
    return timed([&] { return on_miss ? g.test_or_insert(b.keys, n, b.bits, nullptr)
                                      : g.test_and_insert_async(b.keys, n, b.bits, nullptr); }, t);
  };
  AGEBLOOM_GPU_TRY(replay(false, false, t_rep));
  if (has_stamp_column(cfg)) AGEBLOOM_GPU_TRY(replay(true, false, t_stamps));
  AGEBLOOM_GPU_TRY(replay(false, true, t_miss));
  const double bytes = query_bytes_per_key(cfg);
  const double qbw = peak > 0 ? neg * bytes / t_neg / peak : 0;
  std::printf("%10.1f MiB  %-8s %3u %2u %12llu %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.5f %6.0f %7.2f\n",
              static_cast<double>(f.bytes()) / (1 << 20), layout, segments_of(cfg), cfg.k,
              static_cast<unsigned long long>(window), n / t_ins / 1e9, live / t_live / 1e9, neg / t_neg / 1e9,
              (live + neg) / (t_live + t_neg) / 1e9, n / t_rep / 1e9, t_stamps > 0 ? n / t_stamps / 1e9 : 0.0,
              n / t_miss / 1e9, static_cast<double>(neg_found) / neg, bytes, qbw);
  if (live_found != live)
    std::printf("  FALSE NEGATIVES: %llu of %llu live keys not found\n",
                static_cast<unsigned long long>(live - live_found), static_cast<unsigned long long>(live));
  return {};
}

// layout: "flat" and "blk512" (guarded epoch, r = 8, 14 bits per window item),
// "line64" (the one-line layout: r = 7, k = 8, one 64-byte line per key, at
// ~28 bits per item, what 1% costs it; ARCHITECTURE.md's GPU target layout).
// "apbf" (Age-Partitioned Bloom Filter at 1%, as the planner's for_fpr sizes
// it) and "apbbf" (its blocked form as the device test has it: k = 3,
// l = 16, B = 512, b = 4): W is what `bytes` holds at the bits per item a
// window of 2^20 takes.
Expected<ApbfConfig> apbf_config(const std::string& layout, uint64_t window) {
  if (layout == "apbf") return ApbfConfig::for_fpr(Window::count(window), 0.01);
  return ApbfConfig::blocked(Window::count(window), 3, 16, 512, 4);
}

GpuStatus bench_size(uint64_t bytes, const std::string& layout, uint64_t n, uint64_t seed, double peak,
                     uint64_t replay_distinct) {
  if (layout == "apbf" || layout == "apbbf") {
    constexpr uint64_t kProbe = uint64_t{1} << 20;
    const auto probe = apbf_config(layout, kProbe);
    const Expected<size_t> probe_bytes = probe ? ApbfFilter::bytes_needed(*probe) : Expected<size_t>(probe.code());
    const auto cfg = probe_bytes ? apbf_config(layout, static_cast<uint64_t>(static_cast<double>(bytes) /
                                                                             static_cast<double>(*probe_bytes) * kProbe))
                                 : Expected<ApbfConfig>(probe_bytes.code());
    if (!cfg) {
      GpuStatus s = gpu_error(GpuErrc::invalid_config);
      s.config_error = cfg.code();
      return s;
    }
    return bench_config(*cfg, layout.c_str(), cfg->window.span, n, seed, peak, replay_distinct);
  }
  if (layout == "line64" || layout == "swept64") {
    // line64: r = 7, ~28 bits per item at 1%. swept64, the swept layout
    // (--filter auto's past 4 MiB): r = 6, so r + 1 = 7 live lanes and the
    // spare, ~31 bits per item.
    const bool swept = layout == "swept64";
    InterleavedEpochConfig c;
    c.window = Window::count(bytes * 8 / (swept ? 31 : 28));
    c.r = swept ? 6 : 7;
    c.k = 8;
    c.lane_bits = 64;
    c.lines = bytes / 64;
    c.capacity = c.window.span;
    const Status st = swept ? InterleavedSweptConfig(c).validate() : c.validate();
    if (!st) {
      GpuStatus s = gpu_error(GpuErrc::invalid_config);
      s.config_error = st.code();
      return s;
    }
    if (swept) return bench_config(InterleavedSweptConfig(c), "swept64", c.window.span, n, seed, peak, replay_distinct);
    return bench_config(c, "line64", c.window.span, n, seed, peak, replay_distinct);
  }
  const uint32_t block_bits = layout == "blk512" ? 512 : 0;
  const uint64_t window = bytes * 8 / 14;
  auto cfg = GuardedEpochConfig::for_bits_per_item(Window::count(window), 14.0, 8, block_bits);
  if (!cfg) {
    GpuStatus s = gpu_error(GpuErrc::invalid_config);
    s.config_error = cfg.code();
    return s;
  }
  return bench_config(*cfg, block_bits ? "blk512" : "flat", window, n, seed, peak, replay_distinct);
}

GpuStatus bench_paper(uint32_t block_bits, uint64_t seed) {
  constexpr uint64_t kInsertions = 200'000'000, kWindow = 40'000'000, kQueries = 10'000'000;
  auto cfg = GuardedEpochConfig::for_bits_per_item(Window::count(kWindow), 14.0, 8, block_bits);
  if (!cfg) {
    GpuStatus s = gpu_error(GpuErrc::invalid_config);
    s.config_error = cfg.code();
    return s;
  }
  DeviceBuffers b;
  AGEBLOOM_CUDA_TRY(cudaMalloc(&b.keys, kInsertions * sizeof(KeyHash)));
  AGEBLOOM_CUDA_TRY(cudaMalloc(&b.bits, (kInsertions + 31) / 32 * 4));
  AGEBLOOM_CUDA_TRY(cudaMalloc(&b.count, sizeof(unsigned long long)));
  AGEBLOOM_GPU_TRY(fill_keys(b.keys, kInsertions, 0, seed));
  GuardedEpochDevice f, g;
  AGEBLOOM_GPU_TRY(GuardedEpochDevice::create(*cfg, f));
  AGEBLOOM_GPU_TRY(GuardedEpochDevice::create(*cfg, g));
  double t_ins = 0, t_rep = 0, t_live = 0, t_neg = 0;
  AGEBLOOM_GPU_TRY(timed([&] { return f.insert_async(b.keys, kInsertions, nullptr); }, t_ins));
  AGEBLOOM_CUDA_TRY(cudaMemset(b.bits, 0, (kInsertions + 31) / 32 * 4));
  AGEBLOOM_GPU_TRY(timed([&] { return g.test_and_insert_async(b.keys, kInsertions, b.bits, nullptr); }, t_rep));
  uint64_t replay_hits = 0;
  AGEBLOOM_GPU_TRY(count_bits(b, kInsertions, replay_hits));
  // Live: the last 10M insertions (inside W); negative: never inserted.
  const KeyHash* live = b.keys + (kInsertions - kQueries);
  AGEBLOOM_CUDA_TRY(cudaMemset(b.bits, 0, (kQueries + 31) / 32 * 4));
  AGEBLOOM_GPU_TRY(timed([&] { return f.contains_async(live, kQueries, b.bits, nullptr); }, t_live));
  uint64_t live_hits = 0;
  AGEBLOOM_GPU_TRY(count_bits(b, kQueries, live_hits));
  AGEBLOOM_GPU_TRY(fill_keys(b.keys, kQueries, uint64_t{1} << 62, seed));
  AGEBLOOM_CUDA_TRY(cudaMemset(b.bits, 0, (kQueries + 31) / 32 * 4));
  AGEBLOOM_GPU_TRY(timed([&] { return f.contains_async(b.keys, kQueries, b.bits, nullptr); }, t_neg));
  uint64_t neg_hits = 0;
  AGEBLOOM_GPU_TRY(count_bits(b, kQueries, neg_hits));
  std::printf("paper-000 %-6s r=8 k=%u %.1f MiB: insert %.3f Gk/s, replay %.3f Gk/s (%llu replay hits), "
              "live query %.3f Gq/s (%llu/%llu found), negative query %.3f Gq/s, FPR %.5f (model %.5f), "
              "all 20M queries %.1f Mq/s\n",
              block_bits ? "blk512" : "flat", cfg->k, static_cast<double>(f.bytes()) / (1 << 20),
              kInsertions / t_ins / 1e9, kInsertions / t_rep / 1e9, static_cast<unsigned long long>(replay_hits),
              kQueries / t_live / 1e9, static_cast<unsigned long long>(live_hits),
              static_cast<unsigned long long>(kQueries), kQueries / t_neg / 1e9,
              static_cast<double>(neg_hits) / kQueries, cfg->model_fpr(), 2 * kQueries / (t_live + t_neg) / 1e6);
  return {};
}

// "a,b,c" -> {"a", "b", "c"}
std::vector<std::string> split_list(const std::string& list) {
  std::vector<std::string> out;
  for (size_t p = 0; p <= list.size();) {
    size_t q = list.find(',', p);
    if (q == std::string::npos) q = list.size();
    out.push_back(list.substr(p, q - p));
    p = q + 1;
  }
  return out;
}

constexpr const char* kUsage =
    "usage: agebloom-gpu-bench [--sizes 8M,64M,2G] [--layouts flat,blk512,line64,swept64,apbf,apbbf] [--keys N] "
    "[--seed HEX] [--no-paper] [--replay-distinct D]\n";

// "8M", "1G", "512K", "4096": bytes; 0 when it is not a positive size.
uint64_t parse_size(const std::string& s) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || !(v > 0)) return 0;
  const char u = *end;
  if (u != '\0' && end[1] != '\0') return 0;
  const double mult = u == 'K' ? 1024.0 : u == 'M' ? 1048576.0 : u == 'G' ? 1073741824.0 : u == '\0' ? 1.0 : 0.0;
  return v * mult < 18446744073709551616.0 ? static_cast<uint64_t>(v * mult) : 0;
}

// A whole unsigned number in `base`, or false.
bool parse_unsigned(const char* s, int base, uint64_t& out) {
  char* end = nullptr;
  errno = 0;
  out = std::strtoull(s, &end, base);
  return s[0] != '-' && end != s && *end == '\0' && errno != ERANGE;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<uint64_t> sizes = {8ull << 20, 32ull << 20, 128ull << 20, 512ull << 20, 1024ull << 20, 2048ull << 20};
  std::vector<std::string> layouts = {"flat", "blk512", "line64"};
  uint64_t n = 64ull << 20, seed = 0x6167656c6f6f6d21ULL, replay_distinct = 0;
  bool paper = true;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--sizes" && i + 1 < argc) {
      sizes.clear();
      for (const std::string& v : split_list(argv[++i])) {
        sizes.push_back(parse_size(v));
        if (sizes.back() == 0) {
          std::fprintf(stderr, "agebloom-gpu-bench: --sizes takes sizes such as 8M, 1G or 65536, not '%s'\n", v.c_str());
          return 2;
        }
      }
    } else if (a == "--layouts" && i + 1 < argc) {
      layouts = split_list(argv[++i]);
      for (const std::string& l : layouts)
        if (l != "flat" && l != "blk512" && l != "line64" && l != "swept64" && l != "apbf" && l != "apbbf") {
          std::fprintf(stderr,
                       "agebloom-gpu-bench: --layouts takes flat, blk512, line64, swept64, apbf and apbbf, not '%s'\n",
                       l.c_str());
          return 2;
        }
    } else if (a == "--keys" && i + 1 < argc) {
      if (!parse_unsigned(argv[++i], 10, n)) {
        std::fprintf(stderr, "agebloom-gpu-bench: --keys takes a count, not '%s'\n", argv[i]);
        return 2;
      }
    } else if (a == "--seed" && i + 1 < argc) {
      if (!parse_unsigned(argv[++i], 16, seed)) {
        std::fprintf(stderr, "agebloom-gpu-bench: --seed takes a hexadecimal number, not '%s'\n", argv[i]);
        return 2;
      }
    } else if (a == "--no-paper") {
      paper = false;
    } else if (a == "--replay-distinct" && i + 1 < argc) {
      if (!parse_unsigned(argv[++i], 10, replay_distinct) || replay_distinct == 0) {
        std::fprintf(stderr, "agebloom-gpu-bench: --replay-distinct takes a count of at least 1, not '%s'\n", argv[i]);
        return 2;
      }
    } else if (a == "-h" || a == "--help") {
      std::printf("%s"
                  "keys per second of the CUDA backend's filters (default sizes 8M,32M,128M,512M,1G,2G; layouts "
                  "flat,blk512,line64), then the configuration of Guarded Epoch Bloom Filters' GPU evaluation\n",
                  kUsage);
      return 0;
    } else {
      std::fprintf(stderr, "%s", kUsage);
      return 2;
    }
  }
  if (n == 0 || n > (uint64_t{1} << 31)) {
    std::fprintf(stderr, "agebloom-gpu-bench: --keys must be in 1..2^31\n");
    return 2;
  }
  std::string why;
  if (!gpu_available(why)) {
    std::fprintf(stderr, "agebloom-gpu-bench: %s\n", why.c_str());
    return 1;
  }
  const double peak = peak_bytes_per_s();
  std::printf("device: %s; peak DRAM %.0f GB/s; seed %016llx; %llu keys per measurement\n",
              gpu_description().c_str(), peak / 1e9, static_cast<unsigned long long>(seed),
              static_cast<unsigned long long>(n));
  if (replay_distinct)
    std::printf("replays (replay, rp stamp, on-miss) over %llu distinct keys, each repeated\n",
                static_cast<unsigned long long>(replay_distinct));
  std::printf("%14s  %-8s %3s %2s %12s %9s %9s %9s %9s %9s %9s %9s %9s %6s %7s\n", "filter", "layout", "seg", "k",
              "window W", "insert", "q live", "q neg", "q mix", "replay", "rp stamp", "on-miss", "FPR", "B/key",
              "neg bw");
  std::printf("(G keys/s; replay: exact insert-always, the default method; rp stamp: the one-line layout by "
              "first-setter stamps; on-miss: exact insert-on-miss; B/key: DRAM bytes a negative query reads at most, "
              "APBF/APBBF: when each of its probes misses; "
              "neg bw: negative queries' B/key traffic over the peak)\n");
  for (uint64_t bytes : sizes)
    for (const std::string& layout : layouts)
      if (GpuStatus s = bench_size(bytes, layout, n, seed, peak, replay_distinct); !s) {
        std::fprintf(stderr, "agebloom-gpu-bench: %s\n", s.message().c_str());
        return 1;
      }
  if (paper)
    for (uint32_t block : {0u, 512u})
      if (GpuStatus s = bench_paper(block, seed); !s) {
        std::fprintf(stderr, "agebloom-gpu-bench: %s\n", s.message().c_str());
        return 1;
      }
  return 0;
}
