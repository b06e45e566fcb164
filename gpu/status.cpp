// GpuStatus::message, shared by the CUDA build and the stub build.
#include <string>

#include "agebloom/gpu/replay.hpp"

namespace agebloom::gpu {

std::string GpuStatus::message() const {
  switch (code) {
    case GpuErrc::ok: return "ok";
    case GpuErrc::not_built: return "agebloom was built without the CUDA backend (no nvcc, or -Dgpu=disabled)";
    case GpuErrc::cuda:
      return std::string("CUDA error ") + (cuda_name ? cuda_name : "?") + " (" + std::to_string(cuda_error) +
             ") at " + (where ? where : "?");
    case GpuErrc::invalid_config: return std::string("invalid filter configuration: ") + agebloom::message(config_error);
    case GpuErrc::unsupported:
      return "not replayed by the CUDA backend (a structure it does not take, 32-bit lanes, or APBF over 64 slices or 64 bits per block: unsupported_reason says which)";
    case GpuErrc::bad_argument: return "bad argument (null pointer, arena image size, time window without clocks, or more than 2^31 keys per call)";
  }
  return "unknown error";
}

}  // namespace agebloom::gpu
