// rte_member peers: see rte_member_peers.hpp for what each one is.
#include "rte_member_peers.hpp"

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_member.h>
#include <rte_memory.h>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "../dpdk_app/runtime_dir.hpp"

namespace agebloom::perf {

namespace {

// Set id every key is added with (0 is RTE_MEMBER_NO_MATCH).
constexpr member_set_t kSet = 1;

// rte_member wants `const void**`; the chunk's pointers are const.
const void** keys_at(const Chunk& c, size_t i) { return const_cast<const void**>(&c.ptrs[i]); }

[[noreturn]] void die(const char* who) {
  std::fprintf(stderr, "%s: rte_member_create failed: %s\n", who, rte_strerror(rte_errno));
  std::exit(1);
}

rte_member_setsum* create(const char* kind, rte_member_setsum_type type, uint8_t is_cache, uint32_t num_keys,
                          float fpr) {
  static unsigned serial = 0;  // names must be unique among live set summaries
  const std::string name = std::string(kind) + "-" + std::to_string(serial++);
  rte_member_parameters p{};
  p.name = name.c_str();
  p.type = type;
  p.is_cache = is_cache;
  p.num_keys = num_keys;
  p.key_len = sizeof(uint64_t);
  p.num_set = 1;
  p.false_positive_rate = fpr;
  p.prim_hash_seed = kDpdkPrimSeed;
  p.sec_hash_seed = kDpdkSecSeed;
  p.socket_id = SOCKET_ID_ANY;
  rte_member_setsum* ss = rte_member_create(&p);
  if (!ss) die(kind);
  return ss;
}

const char* g_eal_memory = "none";  // set by init_eal
bool g_eal_huge = false;            // set by init_eal
std::string g_runtime_dir;          // the EAL's, removed by cleanup_eal

}  // namespace

const char* eal_memory() { return g_eal_memory; }
bool eal_on_hugepages() { return g_eal_huge; }

bool init_eal(const char* argv0) {
  // No hugepages or devices: rte_member needs only EAL's heap. The main
  // lcore may run on any CPU (2-core machines are shared with compilers;
  // pinning it to CPU 0 would only add noise). A per-process file prefix and
  // --no-shconf keep concurrent runs from sharing runtime files
  // (--in-memory would do too, but EAL rejects it beside --no-huge).
  //
  // AGEBLOOM_BENCH_MEMORY=huge puts EAL's heap on 2 MB hugepages instead
  // (1 GB of them free on a mounted hugetlbfs), as dedup_fwd runs in
  // production: the pipeline benchmark's mbufs and filter then live there,
  // both sides alike, and so do our filters' and the memory floors' arenas
  // (subject_memory.hpp): every subject of the filter table on the same pages.
  const unsigned cpus = std::thread::hardware_concurrency() ? std::thread::hardware_concurrency() : 1;
  const char* memory = std::getenv("AGEBLOOM_BENCH_MEMORY");
  const bool huge = memory != nullptr && std::strcmp(memory, "huge") == 0;
  if (memory != nullptr && !huge && std::strcmp(memory, "4k") != 0) {
    std::fprintf(stderr, "AGEBLOOM_BENCH_MEMORY must be huge or 4k, not '%s'\n", memory);
    return false;
  }
  std::vector<std::string> args = {
      argv0, "--no-pci", "-m", "1024", "--log-level=error",
      "--lcores", cpus > 1 ? "0@(0-" + std::to_string(cpus - 1) + ")" : "0@0",
  };
  if (huge) {
    args.push_back("--in-memory");  // hugepages without runtime files
  } else {
    for (const char* a : {"--no-huge", "--no-shconf", "--file-prefix"}) args.push_back(a);
    args.push_back("agebloom-bench-" + std::to_string(getpid()));
  }
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  if (rte_eal_init(static_cast<int>(args.size()), argv.data()) < 0) {
    std::fprintf(stderr, "rte_eal_init failed: %s\n", rte_strerror(rte_errno));
    return false;
  }
  g_eal_memory = huge ? "2 MB hugepages" : "4 KB pages (--no-huge)";
  g_eal_huge = huge;
  g_runtime_dir = rte_eal_get_runtime_dir();
  // Also on the ways out that skip cleanup_eal (a flag Google Benchmark
  // refuses, a --benchmark_out it cannot open: it exits from inside): the
  // folder was left in /var/run/dpdk, one per such run.
  std::atexit([] { dedup_fwd::remove_eal_runtime_dir(g_runtime_dir); });
  return true;
}

void cleanup_eal() {
  rte_eal_cleanup();
  dedup_fwd::remove_eal_runtime_dir(g_runtime_dir);  // one folder per run otherwise (/var/run/dpdk)
}

// ---- HT cache ---------------------------------------------------------------

HtCacheSubject::HtCacheSubject(uint64_t w)
    : ss_(create("ht", RTE_MEMBER_TYPE_HT, 1, static_cast<uint32_t>(w), 0.0f)), window_(w) {}
HtCacheSubject::~HtCacheSubject() { rte_member_free(ss_); }

void HtCacheSubject::insert(const Chunk& c, size_t i) noexcept { rte_member_add(ss_, c.ptrs[i], kSet); }

bool HtCacheSubject::contains(const Chunk& c, size_t i) const noexcept {
  member_set_t s;
  return rte_member_lookup(ss_, c.ptrs[i], &s) > 0;
}

bool HtCacheSubject::test_and_insert(const Chunk& c, size_t i) noexcept {
  member_set_t s;
  if (rte_member_lookup(ss_, c.ptrs[i], &s) > 0) return true;
  rte_member_add(ss_, c.ptrs[i], kSet);
  return false;
}

void HtCacheSubject::insert_bulk(const Chunk& c, size_t i, size_t n) noexcept {
  for (size_t j = 0; j < n; ++j) rte_member_add(ss_, c.ptrs[i + j], kSet);  // no bulk add in rte_member
}

void HtCacheSubject::contains_bulk(const Chunk& c, size_t i, size_t n, bool* out) const noexcept {
  member_set_t ids[kBurst];
  rte_member_lookup_bulk(ss_, keys_at(c, i), static_cast<uint32_t>(n), ids);
  for (size_t j = 0; j < n; ++j) out[j] = ids[j] != RTE_MEMBER_NO_MATCH;
}

void HtCacheSubject::test_and_insert_bulk(const Chunk& c, size_t i, size_t n, bool* out) noexcept {
  member_set_t ids[kBurst];
  rte_member_lookup_bulk(ss_, keys_at(c, i), static_cast<uint32_t>(n), ids);
  for (size_t j = 0; j < n; ++j) {
    out[j] = ids[j] != RTE_MEMBER_NO_MATCH;
    if (!out[j]) rte_member_add(ss_, c.ptrs[i + j], kSet);
  }
}

double HtCacheSubject::bits_per_item() const noexcept {
  // A bucket is 16 signatures and 16 set ids of 16 bits: one 64-byte line.
  return static_cast<double>(ss_->bucket_cnt) * 64 * 8 / static_cast<double>(window_);
}
double HtCacheSubject::model_fpr() const noexcept { return std::nan(""); }
std::string HtCacheSubject::describe() const {
  return "buckets=" + std::to_string(ss_->bucket_cnt) + " entries=" +
         std::to_string(ss_->bucket_cnt * RTE_MEMBER_BUCKET_ENTRIES);
}

// ---- vBF pair ---------------------------------------------------------------

// Each filter at 0.5%: a key is tested in both, so the pair's FP is ≈ 1%.
constexpr float kVbfFpr = 0.005f;

VbfPairSubject::VbfPairSubject(uint64_t w) : period_(w / 2), window_(w) {
  for (auto& v : vbf_) v = create("vbf", RTE_MEMBER_TYPE_VBF, 0, static_cast<uint32_t>(period_), kVbfFpr);
}
VbfPairSubject::~VbfPairSubject() {
  for (auto* v : vbf_) rte_member_free(v);
}

void VbfPairSubject::rotate_if_due() noexcept {
  if (in_current_ < period_) return;
  cur_ ^= 1;
  rte_member_reset(current());
  in_current_ = 0;
}

void VbfPairSubject::insert(const Chunk& c, size_t i) noexcept {
  rotate_if_due();
  rte_member_add(current(), c.ptrs[i], kSet);
  ++in_current_;
}

bool VbfPairSubject::contains(const Chunk& c, size_t i) const noexcept {
  member_set_t s;
  return rte_member_lookup(current(), c.ptrs[i], &s) > 0 || rte_member_lookup(previous(), c.ptrs[i], &s) > 0;
}

bool VbfPairSubject::test_and_insert(const Chunk& c, size_t i) noexcept {
  rotate_if_due();
  member_set_t s;
  bool seen = true;
  if (rte_member_lookup(current(), c.ptrs[i], &s) <= 0) {
    seen = rte_member_lookup(previous(), c.ptrs[i], &s) > 0;
    rte_member_add(current(), c.ptrs[i], kSet);  // present in current already: adding is a no-op
  }
  ++in_current_;
  return seen;
}

void VbfPairSubject::insert_bulk(const Chunk& c, size_t i, size_t n) noexcept {
  for (size_t j = 0; j < n; ++j) insert(c, i + j);  // no bulk add in rte_member
}

void VbfPairSubject::contains_bulk(const Chunk& c, size_t i, size_t n, bool* out) const noexcept {
  member_set_t ids[kBurst];
  const void* miss[kBurst];
  size_t at[kBurst], misses = 0;
  rte_member_lookup_bulk(current(), keys_at(c, i), static_cast<uint32_t>(n), ids);
  for (size_t j = 0; j < n; ++j) {
    out[j] = ids[j] != RTE_MEMBER_NO_MATCH;
    if (!out[j]) miss[misses] = c.ptrs[i + j], at[misses++] = j;
  }
  if (misses == 0) return;
  rte_member_lookup_bulk(previous(), miss, static_cast<uint32_t>(misses), ids);
  for (size_t t = 0; t < misses; ++t) out[at[t]] = ids[t] != RTE_MEMBER_NO_MATCH;
}

void VbfPairSubject::test_and_insert_bulk(const Chunk& c, size_t i, size_t n, bool* out) noexcept {
  // Split the burst at a reset so every key lands in the filter that is
  // current at its position, as the scalar form does.
  for (size_t done = 0; done < n;) {
    rotate_if_due();
    const size_t m = n - done < period_ - in_current_ ? n - done : static_cast<size_t>(period_ - in_current_);
    member_set_t ids[kBurst];
    const void* miss[kBurst];
    size_t at[kBurst], misses = 0;
    rte_member_lookup_bulk(current(), keys_at(c, i + done), static_cast<uint32_t>(m), ids);
    for (size_t j = 0; j < m; ++j) {
      out[done + j] = ids[j] != RTE_MEMBER_NO_MATCH;
      if (!out[done + j]) miss[misses] = c.ptrs[i + done + j], at[misses++] = done + j;
    }
    if (misses) {
      rte_member_lookup_bulk(previous(), const_cast<const void**>(miss), static_cast<uint32_t>(misses), ids);
      for (size_t t = 0; t < misses; ++t) {
        out[at[t]] = ids[t] != RTE_MEMBER_NO_MATCH;
        rte_member_add(current(), miss[t], kSet);
      }
    }
    in_current_ += m;
    done += m;
  }
}

double VbfPairSubject::bits_per_item() const noexcept {
  return 2.0 * vbf_[0]->bits * vbf_[0]->num_set / static_cast<double>(window_);
}
double VbfPairSubject::model_fpr() const noexcept {
  // Both filters full (W/2 keys each), rounded-up bit counts as allocated.
  const double m = vbf_[0]->bits, k = vbf_[0]->num_hashes, n = static_cast<double>(period_);
  const double f = std::pow(1.0 - std::exp(-k * n / m), k);
  return 1.0 - (1.0 - f) * (1.0 - f);
}
std::string VbfPairSubject::describe() const {
  return "bits_per_filter=" + std::to_string(vbf_[0]->bits) + " k=" + std::to_string(vbf_[0]->num_hashes) +
         " reset_every=" + std::to_string(period_);
}

void register_rte_member_peers(uint64_t w) {
  register_subject<HtCacheSubject>(w);
  register_subject<VbfPairSubject>(w);
}

}  // namespace agebloom::perf
