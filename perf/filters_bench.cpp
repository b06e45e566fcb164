// Our structures as benchmark subjects: every filter in include/agebloom/filters
// at FPR 1% (model), each in the configuration a user would get by asking for
// 1%. The filter's state lives in an arena this file owns (aligned_alloc), as
// an application's would (rte_malloc_socket, a static array).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <type_traits>

#include "agebloom/agebloom.hpp"
#include "bench_common.hpp"

namespace agebloom::perf {
namespace {

inline constexpr double kFpr = 0.01;

// Owns the arena and the filter; adapts the subject concept to the filter's
// KeyHash API (hashes precomputed outside the timer, except bulk_hashed).
template <class Traits>
class FilterSubject {
 public:
  using Filter = typename Traits::Filter;
  static constexpr const char* kName = Traits::kName;
  static constexpr bool kHashesKeys = false;

  explicit FilterSubject(uint64_t w) : cfg_(config_or_die(w)) {
    const size_t bytes = *Filter::bytes_needed(cfg_);
    memory_ = std::aligned_alloc(kCacheLine, align_up(bytes, kCacheLine));
    if (!memory_) die("out of memory");
    Arena arena(memory_, bytes);
    auto f = Filter::create(cfg_, arena);
    if (!f) die(f.what());
    filter_ = *f;
    bytes_ = bytes;
    if constexpr (requires(Filter& x) { Traits::tune(x); }) Traits::tune(filter_);
  }
  ~FilterSubject() { std::free(memory_); }
  FilterSubject(const FilterSubject&) = delete;
  FilterSubject& operator=(const FilterSubject&) = delete;

  void insert(const Chunk& c, size_t i) noexcept { filter_.insert(c.hashes[i]); }
  bool contains(const Chunk& c, size_t i) const noexcept { return filter_.contains(c.hashes[i]); }
  bool test_and_insert(const Chunk& c, size_t i) noexcept { return filter_.test_and_insert(c.hashes[i]); }
  void insert_bulk(const Chunk& c, size_t i, size_t n) noexcept { filter_.insert_bulk(&c.hashes[i], n); }
  void contains_bulk(const Chunk& c, size_t i, size_t n, bool* out) const noexcept {
    filter_.contains_bulk(&c.hashes[i], n, out);
  }
  void test_and_insert_bulk(const Chunk& c, size_t i, size_t n, bool* out) noexcept {
    filter_.test_and_insert_bulk(&c.hashes[i], n, out);
  }
  // End to end from key bytes: hash the burst (XXH3-128), then the bulk call.
  void test_and_insert_bulk_hashed(const Chunk& c, size_t i, size_t n, bool* out) noexcept {
    KeyHash h[kBurst];
    hasher_.hash_bulk(&c.ptrs[i], &c.lengths[i], n, h);
    filter_.test_and_insert_bulk(h, n, out);
  }

  // From the configuration (what the structure is sized for), not from the
  // arena bytes, which add one header line.
  double bits_per_item() const noexcept { return cfg_.bits_per_item(); }
  double model_fpr() const noexcept { return cfg_.model_fpr(); }
  std::string describe() const {
    std::string isa;
    if constexpr (std::is_same_v<Filter, GuardedEpochFilter>)
      if (cfg_.block_bits) isa = filter_.uses_avx2() ? " isa=avx2" : " isa=baseline";
    return Traits::describe(cfg_) + " bytes=" + std::to_string(bytes_) + isa;
  }

 private:
  static auto config_or_die(uint64_t w) {
    auto c = Traits::config(w);
    if (!c) die(c.what());
    return *c;
  }
  [[noreturn]] static void die(const char* why) {
    std::fprintf(stderr, "%s: %s\n", Traits::kName, why);
    std::exit(1);
  }

  std::remove_cvref_t<decltype(*Traits::config(1))> cfg_;
  Filter filter_;
  void* memory_ = nullptr;
  size_t bytes_ = 0;
  Hasher hasher_{kHashSeed};
};

std::string ge_describe(const GuardedEpochConfig& c) {
  return "r=" + std::to_string(c.r) + " k=" + std::to_string(c.k) + " B=" + std::to_string(c.block_bits);
}
std::string apbf_describe(const ApbfConfig& c) {
  return "k=" + std::to_string(c.k) + " l=" + std::to_string(c.l) + " B=" + std::to_string(c.block_bits) +
         " b=" + std::to_string(c.bits_per_block);
}

// Paper 000 layout: r = 8 live epochs + the guard, k bits anywhere in a segment.
struct GeFlat {
  using Filter = GuardedEpochFilter;
  static constexpr const char* kName = "ge_flat";
  static auto config(uint64_t w) { return GuardedEpochConfig::for_fpr(Window::count(w), kFpr, 8, 0); }
  static std::string describe(const GuardedEpochConfig& c) { return ge_describe(c); }
};
// Blocked: one 512-bit block (one cache line) per segment probe.
struct GeBlocked {
  using Filter = GuardedEpochFilter;
  static constexpr const char* kName = "ge_blocked512";
  static auto config(uint64_t w) { return GuardedEpochConfig::for_fpr(Window::count(w), kFpr, 8, 512); }
  static std::string describe(const GuardedEpochConfig& c) { return ge_describe(c); }
};
// The same with the blocked probe's baseline build (ge_blocked512 takes the
// AVX2 build where the CPU has it), so one run shows what AVX2 buys (isa.hpp).
struct GeBlockedBaseline : GeBlocked {
  static constexpr const char* kName = "ge_blocked512_base";
  static void tune(GuardedEpochFilter& f) { f.use_avx2(false); }
};
// APBF with the published parameterisation (k = 7, l = 4 at 1%).
struct Apbf {
  using Filter = ApbfFilter;
  static constexpr const char* kName = "apbf";
  static auto config(uint64_t w) { return ApbfConfig::for_fpr(Window::count(w), kFpr); }
  static std::string describe(const ApbfConfig& c) { return apbf_describe(c); }
};
// APBBF, 512-bit blocks. (k, l, b) = (3, 16, 4): the fewest bits per item
// whose model FP is at most 1% among k <= 4, l <= 16 (bounding the segments
// a miss scans), b in {4, 8}; from a scan of ApbfConfig::model_fpr at
// W = 1M: 20.6 bits/item, model FP 0.39%. With b = 8 nothing under 1% costs
// less than 46 bits/item (k = 2, l = 2); k = 1 stops at 1.5%.
struct Apbbf {
  using Filter = ApbfFilter;
  static constexpr const char* kName = "apbbf512";
  static auto config(uint64_t w) { return ApbfConfig::blocked(Window::count(w), 3, 16, 512, 4); }
  static std::string describe(const ApbfConfig& c) { return apbf_describe(c); }
};
// Rotating ring of N + 1 = 5 plain Bloom filters (paper 004's usual shape),
// the same type as the guarded epoch filter with r = N.
struct Ring {
  using Filter = RotatingRingFilter;
  static constexpr const char* kName = "ring4_flat";
  static auto config(uint64_t w) { return RotatingRing::config(Window::count(w), 4, kFpr); }
  static std::string describe(const GuardedEpochConfig& c) { return ge_describe(c); }
};

// The one-cache-line layout: every segment's lane of one line index in one
// 64-byte line (8 x 64-bit lanes, r = 7), k bits partitioned in the lane.
struct Interleaved {
  using Filter = InterleavedEpochFilter<uint64_t>;
  static constexpr const char* kName = "interleaved64";
  static auto config(uint64_t w) { return InterleavedEpochConfig::for_fpr(Window::count(w), kFpr, 64); }
  static std::string describe(const InterleavedEpochConfig& c) {
    return "r=" + std::to_string(c.r) + " k=" + std::to_string(c.k) + " lines=" + std::to_string(c.lines);
  }
};

// The APBF scan in one line: 16 lanes of 32 bits, k + l = 16.
struct InterleavedApbf {
  using Filter = InterleavedApbfFilter<uint32_t>;
  static constexpr const char* kName = "interleaved_apbf32";
  static auto config(uint64_t w) { return InterleavedApbfConfig::for_fpr(Window::count(w), kFpr, 32); }
  static std::string describe(const InterleavedApbfConfig& c) {
    return "k=" + std::to_string(c.k) + " l=" + std::to_string(c.l) + " b=" + std::to_string(c.b) +
           " lines=" + std::to_string(c.lines);
  }
};

}  // namespace

void register_filters(uint64_t w) {
  register_subject<FilterSubject<Interleaved>>(w);
  register_subject<FilterSubject<InterleavedApbf>>(w);
  register_subject<FilterSubject<GeFlat>>(w);
  register_subject<FilterSubject<GeBlocked>>(w);
  register_subject<FilterSubject<GeBlockedBaseline>>(w);
  register_subject<FilterSubject<Apbf>>(w);
  register_subject<FilterSubject<Apbbf>>(w);
  register_subject<FilterSubject<Ring>>(w);
}

}  // namespace agebloom::perf
