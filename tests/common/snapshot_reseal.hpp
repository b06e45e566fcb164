// Resealing a snapshot image, as anyone who can write one could: the
// checksum of lib/dedup/snapshot.cpp is an unkeyed XXH64, so a crafted image
// can carry a valid one. The tests and the snapshot_load fuzzer use this to
// reach past the checksum to the state checks behind it (each structure's
// accepts_image()). The layout below is the snapshot header's; a caller
// checks it against a real image (resealing a valid image changes nothing).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include <xxhash.h>

namespace agebloom::testing {

// The header's size, where its checksum lies, where state_bytes lies, and
// the checksum's seed. The checksum is XXH64 of the whole image with its
// own field zero.
constexpr size_t kSnapshotHeaderBytes = 304, kSnapshotChecksumAt = 72, kSnapshotStateBytesAt = 48;
constexpr uint64_t kSnapshotChecksumSeed = 0x5eed'a6eb'100f'0001ULL;

// Reseals the image of `bytes` bytes at `image` in place (shorter than a
// header: left as it is).
inline void reseal_snapshot(unsigned char* image, size_t bytes) {
  if (bytes < kSnapshotHeaderBytes) return;
  std::memset(image + kSnapshotChecksumAt, 0, sizeof(uint64_t));
  const uint64_t sum = XXH64(image, bytes, kSnapshotChecksumSeed);
  std::memcpy(image + kSnapshotChecksumAt, &sum, sizeof sum);
}

}  // namespace agebloom::testing
