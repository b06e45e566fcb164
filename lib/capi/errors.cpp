// The C API's error names and version queries.
#include "handle.hpp"

#ifndef AGEBLOOM_VERSION_STRING
#error "lib/capi/meson.build defines AGEBLOOM_VERSION_STRING from the project version"
#endif

extern "C" {

const char* agebloom_strerror(int status) noexcept {
  switch (status) {
    case AGEBLOOM_OK: return "success";
    case AGEBLOOM_EINVAL: return "invalid argument";
    case AGEBLOOM_ENOSTRUCT: return "no such structure in the registry";
    case AGEBLOOM_ENOPLAN: return "no filter shape meets the spec (agebloom_plan_error() says why)";
    case AGEBLOOM_ENOMEM: return "not enough memory";
    case AGEBLOOM_EALIGN: return "memory not aligned to AGEBLOOM_ALIGN";
    case AGEBLOOM_ETIME: return "time went backwards";
    case AGEBLOOM_EIMAGE: return "not a saved filter image, or a damaged one (bad magic, version, length or checksum)";
    case AGEBLOOM_EIMAGE_MISMATCH: return "the image is of another filter (structure, shape, window or seed differ)";
    case AGEBLOOM_EVERSION: return "struct size field too small (not set, or a header older than the library knows)";
    case AGEBLOOM_ENOKEY: return "the frame has no key";
    case AGEBLOOM_ERANGE: return "output buffer too small";
    case AGEBLOOM_EINTERNAL: return "internal error";
  }
  return "unknown status";
}

const char* agebloom_version(void) noexcept { return AGEBLOOM_VERSION_STRING; }

unsigned agebloom_abi_version(void) noexcept { return AGEBLOOM_ABI_VERSION; }

}  // extern "C"
