// Our structures as benchmark subjects: every structure in the registry
// (agebloom/registry/structure.hpp), each in the configuration a user gets
// with --filter NAME --fpr 0.01 (the planner's best shape of that structure
// at FPR 1%), so a registered structure is benchmarked without a line here.
// The filter's state lives in an arena this file owns (SubjectMemory: the
// process heap, or EAL's hugepages beside the peers), as an application's
// would (rte_malloc_socket, a static array).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <type_traits>

#include "agebloom/agebloom.hpp"
#include "agebloom/dedup/dedup_filter.hpp"
#include "agebloom/registry/filter_config.hpp"
#include "bench_common.hpp"
#include "planned_config.hpp"
#include "subject_memory.hpp"

namespace agebloom::perf {
namespace {

// Owns the arena and the filter; adapts the subject concept to the filter's
// KeyHash API (hashes precomputed outside the timer, except bulk_hashed).
template <class Traits>
class FilterSubject {
 public:
  using Filter = typename Traits::Filter;
  static constexpr const char* kName = Traits::kName;
  static constexpr bool kHashesKeys = false;

  explicit FilterSubject(uint64_t w) : cfg_(config_or_die(w)), bytes_(*Filter::bytes_needed(cfg_)), memory_(bytes_) {
    if (!memory_.data()) die((std::string("no room for the filter's arena on the ") + memory_.where()).c_str());
    Arena arena(memory_.data(), bytes_);
    auto f = Filter::create(cfg_, arena);
    if (!f) die(f.what());
    filter_ = *f;
    if constexpr (requires(Filter& x) { Traits::tune(x); }) Traits::tune(filter_);
  }
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
  // End to end from key bytes: hash the burst (Hasher::hash_bulk: four AES
  // rounds for these 8-byte keys), then the bulk call.
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
    if constexpr (requires { filter_.isa(); }) isa = std::string(" isa=") + isa_name(filter_.isa());
    return Traits::describe(cfg_) + " bytes=" + std::to_string(bytes_) + isa + memory_.label();
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
  size_t bytes_;           // the arena's: after cfg_, before memory_ (the initialisation order)
  SubjectMemory memory_;
  Filter filter_;
  Hasher hasher_{kHashSeed};
};

// A registered structure as a subject: named as --filter names it, sized by
// the planner as --filter NAME --fpr 0.01 would be.
template <Structure S>
struct Registered {
  using Config = typename StructureTraits<S>::Config;
  using Filter = typename StructureTraits<S>::Filter;
  static constexpr const char* kName = info(S).name;
  static Expected<Config> config(uint64_t w) {
    auto c = planned_config(S, w);
    if (!c) return c.error();
    return std::get<Config>(c->config);
  }
  static std::string describe(const Config& c) { return dedup::DedupFilter(FilterConfig{S, c}).parameters(); }
};

// The blocked guarded epoch filter with its probe's baseline build (the
// registered one takes the AVX2 build where the CPU has it), so one run shows
// what AVX2 buys (isa.hpp).
struct GeBlockedBaseline : Registered<Structure::guarded_epoch_blocked> {
  static constexpr const char* kName = "guarded-epoch-blocked-baseline-isa";
  static void tune(GuardedEpochFilter& f) { f.use_isa(Isa::baseline); }
};

// The two-line layout with its bulk probe's baseline body, and with its
// AVX2 body (the registered one takes the widest the CPU has:
// two_line_avx512.hpp, two_line_avx2.hpp).
struct TwoLineBaseline : Registered<Structure::two_line> {
  static constexpr const char* kName = "two-line-baseline-isa";
  static void tune(TwoLineEpochFilter& f) { f.use_isa(Isa::baseline); }
};
// The one-line layout with its bulk probe's baseline body (the registered
// one takes the AVX2 probe where the CPU has it: interleaved_avx2.hpp).
struct InterleavedBaseline : Registered<Structure::interleaved> {
  static constexpr const char* kName = "interleaved-baseline-isa";
  static void tune(InterleavedEpochFilter<>& f) { f.use_isa(Isa::baseline); }
};
// The same for the one-line layout with 128-bit lanes.
struct Interleaved128Baseline : Registered<Structure::interleaved_128> {
  static constexpr const char* kName = "interleaved-128-baseline-isa";
  static void tune(InterleavedEpochFilter<bits::Word128>& f) { f.use_isa(Isa::baseline); }
};
struct TwoLineAvx2 : Registered<Structure::two_line> {
  static constexpr const char* kName = "two-line-avx2-isa";
  static void tune(TwoLineEpochFilter& f) { f.use_isa(Isa::avx2); }
};

}  // namespace

void register_filters(uint64_t w) {
  for_each_structure([&]<Structure S>() { register_subject<FilterSubject<Registered<S>>>(w); });
  register_subject<FilterSubject<GeBlockedBaseline>>(w);
  register_subject<FilterSubject<TwoLineBaseline>>(w);
  register_subject<FilterSubject<InterleavedBaseline>>(w);
  register_subject<FilterSubject<Interleaved128Baseline>>(w);
  // Where the registered one is AVX2 already, this would be it twice.
  if (cpu_has_avx512() && cpu_has_avx2()) register_subject<FilterSubject<TwoLineAvx2>>(w);
}

}  // namespace agebloom::perf
