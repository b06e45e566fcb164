// The registry-level entry points of replay.hpp: a FilterConfig in, the
// typed call for its config out. Built with and without nvcc (the typed
// calls are the CUDA ones or the stubs), so callers never name a structure.
#include "agebloom/gpu/replay.hpp"

namespace agebloom::gpu {

namespace {
GpuStatus unsupported() {
  GpuStatus s;
  s.code = GpuErrc::unsupported;
  return s;
}

GpuStatus replay_typed(const GuardedEpochConfig& c, const KeyHash* keys, size_t n, const ReplayOptions& opt,
                       uint8_t* bits, void* image, size_t bytes, ReplayStats* stats) {
  return replay_guarded_epoch(c, keys, n, opt, bits, image, bytes, stats);
}
GpuStatus replay_typed(const InterleavedEpochConfig& c, const KeyHash* keys, size_t n, const ReplayOptions& opt,
                       uint8_t* bits, void* image, size_t bytes, ReplayStats* stats) {
  return replay_interleaved_epoch(c, keys, n, opt, bits, image, bytes, stats);
}
GpuStatus replay_typed(const ApbfConfig& c, const KeyHash* keys, size_t n, const ReplayOptions& opt, uint8_t* bits,
                       void* image, size_t bytes, ReplayStats* stats) {
  return replay_apbf(c, keys, n, opt, bits, image, bytes, stats);
}
template <class Config>
GpuStatus replay_typed(const Config&, const KeyHash*, size_t, const ReplayOptions&, uint8_t*, void*, size_t,
                       ReplayStats*) {
  return unsupported();
}
}  // namespace

std::string unsupported_reason(const FilterConfig& config) {
  if (!config.info().gpu) return std::string("the GPU backend does not replay ") + config.info().name;
  if (const auto* i = std::get_if<InterleavedEpochConfig>(&config.config); i && i->lane_bits != 64)
    return "the GPU backend replays the one-line layout with 64-bit lanes only";
  if (const auto* a = std::get_if<ApbfConfig>(&config.config); a && (a->slices() > 64 || a->bits_per_block > 64))
    return "the GPU backend replays APBF/APBBF with at most 64 slices and 64 bits per block";
  return {};
}

GpuStatus replay(const FilterConfig& config, const KeyHash* keys, size_t n, const ReplayOptions& opt,
                 uint8_t* verdict_bits, void* arena_image, size_t arena_bytes, ReplayStats* stats) {
  if (!unsupported_reason(config).empty()) return unsupported();
  return config.visit([&](const auto& c) {
    return replay_typed(c, keys, n, opt, verdict_bits, arena_image, arena_bytes, stats);
  });
}

}  // namespace agebloom::gpu
