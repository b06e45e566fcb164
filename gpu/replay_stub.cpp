// The host API of replay.hpp in a build without nvcc: every call reports
// GpuErrc::not_built, so callers link and fall back to the CPU path.
#include "agebloom/gpu/replay.hpp"

namespace agebloom::gpu {

namespace {
GpuStatus not_built() {
  GpuStatus s;
  s.code = GpuErrc::not_built;
  return s;
}
}  // namespace

bool gpu_available(std::string& why) {
  why = "built without the CUDA backend (no nvcc, or -Dgpu=disabled)";
  return false;
}

std::string gpu_description() { return "none (built without CUDA)"; }

GpuStatus replay(const FilterConfig&, const KeyHash*, size_t, const ReplayOptions&, uint8_t*, void*, size_t,
                 ReplayStats*) {
  return not_built();
}
GpuStatus contains_bulk(const FilterConfig&, const void*, size_t, const KeyHash*, size_t, uint8_t*) {
  return not_built();
}
GpuStatus insert_bulk(const FilterConfig&, void*, size_t, const KeyHash*, size_t, const uint64_t*) {
  return not_built();
}

}  // namespace agebloom::gpu
