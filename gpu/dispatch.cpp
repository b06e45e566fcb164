// Which registered structures this backend replays, in every build (with
// nvcc or the stub): the registry row's gpu flag, then the backend's limits.
#include "agebloom/gpu/replay.hpp"

namespace agebloom::gpu {

std::string unsupported_reason(const FilterConfig& config) {
  if (!config.info().gpu) return std::string("the GPU backend does not replay ") + config.info().name;
  if (const auto* i = std::get_if<InterleavedEpochConfig>(&config.config); i && i->lane_bits != 64)
    return "the GPU backend replays the one-line layout with 64-bit lanes only";
  if (const auto* a = std::get_if<ApbfConfig>(&config.config); a && (a->slices() > 64 || a->bits_per_block > 64))
    return "the GPU backend replays APBF/APBBF with at most 64 slices and 64 bits per block";
  return {};
}

}  // namespace agebloom::gpu
