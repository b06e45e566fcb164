// Line requests, compiled as the library's users compile them, for
// tests/core/line_requests_kept.py to find in the machine code. Requests
// change no result, so no functional test can miss them. g++ 12 took them
// out twice without a test failing (core/bits.hpp says how): from a helper
// of the AVX-512 locate (the two-line layout at W = 64M twice as slow), and
// from the bulk forms of the guarded epoch filters (blocked at W = 64M three
// times as slow), whose per-key prefetch() calls were deleted whole
// (docs/PERFORMANCE.md, 2026-11-27). The blocked APBF's requests (four times
// as fast at W = 16M and 64M) are checked beside them.
#include "agebloom/agebloom.hpp"

// Out of line and unused, so the object keeps each body whatever is inlined.
#if AGEBLOOM_INTRINSICS_DISPATCH
extern "C" size_t agebloom_check_locate_and_request(const uint64_t* pairs, size_t n, uint64_t count,
                                                    const void* base, void** at) {
  return agebloom::lane_lines_avx512::locate_and_request(pairs, n, count, base, at);
}
#endif

extern "C" void agebloom_check_guarded_epoch_bulk(agebloom::GuardedEpochFilter& f, const agebloom::KeyHash* h,
                                                  size_t n, bool* out) {
  f.test_and_insert_bulk(h, n, out);
}

extern "C" void agebloom_check_apbf_bulk(agebloom::ApbfFilter& f, const agebloom::KeyHash* h, size_t n, bool* out) {
  f.test_and_insert_bulk(h, n, out);
}
