#include "subject_memory.hpp"

#include <cstdio>
#include <cstdlib>

#include "agebloom/core/arena.hpp"

#ifdef AGEBLOOM_BENCH_DPDK
#include <rte_malloc.h>

#include "rte_member_peers.hpp"
#endif

namespace agebloom::perf {

SubjectMemory::SubjectMemory(size_t bytes) {
  const size_t rounded = align_up(bytes, kCacheLine);
#ifdef AGEBLOOM_BENCH_DPDK
  if (eal_on_hugepages()) {
    data_ = rte_malloc("agebloom_bench_subject", rounded, kCacheLine);
    if (data_) {
      eal_ = true;
      return;
    }
    fell_back_ = true;
    std::fprintf(stderr, "agebloom-bench: %zu bytes do not fit EAL's hugepage heap; this subject is on the process heap\n",
                 rounded);
  }
#endif
  data_ = std::aligned_alloc(kCacheLine, rounded);
}

SubjectMemory::~SubjectMemory() {
#ifdef AGEBLOOM_BENCH_DPDK
  if (eal_) {
    rte_free(data_);
    return;
  }
#endif
  std::free(data_);
}

const char* SubjectMemory::where() const noexcept { return eal_ ? "2 MB hugepages (EAL heap)" : "process heap"; }

const char* SubjectMemory::label() const noexcept {
  if (eal_) return " memory=hugepages";
  return fell_back_ ? " memory=process-heap" : "";
}

}  // namespace agebloom::perf
