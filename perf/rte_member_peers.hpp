// DPDK rte_member (22.11) as benchmark subjects, on the same keys as our
// filters (8-byte keys; rte_member hashes them itself with CRC32-C, so every
// rte_member figure includes hashing).
//
//   rte_member_ht_cache: RTE_MEMBER_TYPE_HT with is_cache = 1, DPDK's
//     "recent keys" mode: 16-entry buckets of 16-bit signatures, two
//     candidate buckets, a random entry of the primary bucket overwritten when
//     both are full. num_keys = W (32 bits per item). Live keys are evicted:
//     its live FNR is the price of its speed.
//     test_and_insert = lookup_bulk, then add on miss.
//   rte_member_vbf_pair: two RTE_MEMBER_TYPE_VBF filters (one set each),
//     sized for W/2 keys at 0.5% each (≈1% for the pair); insertions go to
//     the current one, and every W/2 insertions the other is reset and
//     becomes current. The closest rte_member gets to a sliding window: it
//     remembers between W/2 and W insertions, so keys older than that are
//     live false negatives (about a quarter of the live window on average).
//
// EAL must be initialised first (init_eal); without it rte_member_create
// fails for lack of a heap.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "bench_common.hpp"

struct rte_member_setsum;

namespace agebloom::perf {

// rte_eal_init with no PCI and a 1 GiB heap: on 4 KB pages with a
// per-process file prefix, or on 2 MB hugepages (--in-memory) under
// AGEBLOOM_BENCH_MEMORY=huge. Returns false (and prints why) if EAL refused
// or the variable holds anything but huge or 4k.
bool init_eal(const char* argv0);
// Where init_eal put EAL's heap: "2 MB hugepages", "4 KB pages (--no-huge)",
// or "none" before it succeeded.
const char* eal_memory();
// Whether init_eal put EAL's heap on hugepages (subject_memory.hpp then puts
// our subjects there too).
bool eal_on_hugepages();
void cleanup_eal();

class HtCacheSubject {
 public:
  static constexpr const char* kName = "rte_member_ht_cache";
  static constexpr bool kHashesKeys = true;

  explicit HtCacheSubject(uint64_t w);
  ~HtCacheSubject();
  HtCacheSubject(const HtCacheSubject&) = delete;
  HtCacheSubject& operator=(const HtCacheSubject&) = delete;

  void insert(const Chunk& c, size_t i) noexcept;
  bool contains(const Chunk& c, size_t i) const noexcept;
  bool test_and_insert(const Chunk& c, size_t i) noexcept;
  void insert_bulk(const Chunk& c, size_t i, size_t n) noexcept;
  void contains_bulk(const Chunk& c, size_t i, size_t n, bool* out) const noexcept;
  void test_and_insert_bulk(const Chunk& c, size_t i, size_t n, bool* out) noexcept;

  double bits_per_item() const noexcept;
  double model_fpr() const noexcept;
  std::string describe() const;

 private:
  rte_member_setsum* ss_ = nullptr;
  uint64_t window_;
};

class VbfPairSubject {
 public:
  static constexpr const char* kName = "rte_member_vbf_pair";
  static constexpr bool kHashesKeys = true;

  explicit VbfPairSubject(uint64_t w);
  ~VbfPairSubject();
  VbfPairSubject(const VbfPairSubject&) = delete;
  VbfPairSubject& operator=(const VbfPairSubject&) = delete;

  void insert(const Chunk& c, size_t i) noexcept;
  bool contains(const Chunk& c, size_t i) const noexcept;
  bool test_and_insert(const Chunk& c, size_t i) noexcept;
  void insert_bulk(const Chunk& c, size_t i, size_t n) noexcept;
  void contains_bulk(const Chunk& c, size_t i, size_t n, bool* out) const noexcept;
  void test_and_insert_bulk(const Chunk& c, size_t i, size_t n, bool* out) noexcept;

  double bits_per_item() const noexcept;
  double model_fpr() const noexcept;
  std::string describe() const;

 private:
  void rotate_if_due() noexcept;
  rte_member_setsum* current() const noexcept { return vbf_[cur_]; }
  rte_member_setsum* previous() const noexcept { return vbf_[cur_ ^ 1]; }

  rte_member_setsum* vbf_[2] = {nullptr, nullptr};
  unsigned cur_ = 0;
  uint64_t in_current_ = 0;  // insertions into the current filter
  uint64_t period_;          // W/2: insertions between resets
  uint64_t window_;
};

}  // namespace agebloom::perf
