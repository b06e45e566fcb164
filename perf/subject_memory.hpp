// The arena a benchmark subject's state lives in, on the same kind of memory
// as the rte_member peers it is compared with: EAL's heap (rte_malloc) when
// init_eal put that heap on 2 MB hugepages (AGEBLOOM_BENCH_MEMORY=huge, as
// dedup_fwd keeps its filters in production), the process heap otherwise.
// Without that, a hugepage run would time rte_member on 2 MB pages against
// our filters on 4 KB ones, where every random line probed at W = 64M can
// pay a page walk on one side only.
#pragma once

#include <cstddef>

namespace agebloom::perf {

class SubjectMemory {
 public:
  // Cache-line aligned, `bytes` rounded up to whole lines; data() ==
  // nullptr if no heap had room. A subject too large for EAL's 1 GiB
  // hugepage heap (tbf and counting at W = 64M take 1.4-2.3 GB) falls back
  // to the process heap, says so on stderr, and label() names it, so its
  // figures are not read as hugepage ones.
  explicit SubjectMemory(size_t bytes);
  ~SubjectMemory();
  SubjectMemory(const SubjectMemory&) = delete;
  SubjectMemory& operator=(const SubjectMemory&) = delete;

  void* data() const noexcept { return data_; }
  // "2 MB hugepages (EAL heap)" or "process heap": where data() lies.
  const char* where() const noexcept;
  // For a benchmark's label: "" on a default run (every subject on the
  // process heap), " memory=hugepages" or " memory=process-heap" when
  // EAL's heap is on hugepages.
  const char* label() const noexcept;

 private:
  void* data_ = nullptr;
  bool eal_ = false;       // data() is on EAL's hugepage heap
  bool fell_back_ = false;  // EAL's heap is on hugepages, data() is not
};

}  // namespace agebloom::perf
