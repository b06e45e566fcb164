/* Resealing a snapshot image, as anyone who can write one could: the
 * checksum of lib/dedup/snapshot.cpp is an unkeyed XXH64, so a crafted image
 * can carry a valid one. The tests (C and C++) and the snapshot_load fuzzer
 * use this to reach past the checksum to the state checks behind it (each
 * structure's accepts_image()). The layout below is the snapshot header's; a
 * caller checks it against a real image (resealing a valid one changes
 * nothing). */
#ifndef AGEBLOOM_TESTS_SNAPSHOT_RESEAL_H
#define AGEBLOOM_TESTS_SNAPSHOT_RESEAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <xxhash.h>

/* The header's size, where its checksum and state_bytes lie, and the
 * checksum's seed. The checksum is XXH64 of the whole image with its own
 * field zero; the filter's state follows the header. */
enum { SNAPSHOT_HEADER_BYTES = 304, SNAPSHOT_CHECKSUM_AT = 72, SNAPSHOT_STATE_BYTES_AT = 48 };
#define SNAPSHOT_CHECKSUM_SEED 0x5eeda6eb100f0001ULL

/* Reseals the image of `bytes` bytes at `image` in place (one shorter than a
 * header is left as it is). */
static inline void reseal_snapshot(unsigned char* image, size_t bytes) {
  uint64_t sum;
  if (bytes < SNAPSHOT_HEADER_BYTES) return;
  memset(image + SNAPSHOT_CHECKSUM_AT, 0, sizeof sum);
  sum = XXH64(image, bytes, SNAPSHOT_CHECKSUM_SEED);
  memcpy(image + SNAPSHOT_CHECKSUM_AT, &sum, sizeof sum);
}

#endif
