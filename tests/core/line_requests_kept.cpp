// The AVX-512 locate's line requests, compiled as the library's users compile
// them, for tests/core/line_requests_kept.py to find in the machine code. The
// requests change no result, so no functional test can miss them; g++ 12
// once deleted every one of them after a refactor (a helper whose only effect
// was a prefetch, taken for dead code), which left the tests green and the
// two-line layout at W = 64M twice as slow (docs/PERFORMANCE.md, 2026-11-27).
#include "agebloom/filters/lane_lines.hpp"

#if AGEBLOOM_INTRINSICS_DISPATCH
// Out of line and unused, so the object keeps the body whatever is inlined.
extern "C" size_t agebloom_check_locate_and_request(const uint64_t* pairs, size_t n, uint64_t count,
                                                    const void* base, void** at) {
  return agebloom::lane_lines_avx512::locate_and_request(pairs, n, count, base, at);
}
#endif
