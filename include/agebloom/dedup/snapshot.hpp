// Snapshots: a filter's state as bytes that survive a restart. The arena
// holds all of a structure's mutable state and no pointers (core/arena.hpp),
// and arenas start on a cache line, so the bytes of one plan are the same
// layout in any process of the same build: an image is a header naming the
// plan, then those bytes, sealed by a checksum.
//
//   header  magic "AGEBLOOM", format, byte order, structure, window kind and span,
//           seed, parameters (DedupFilter::parameters), state size, the filter's
//           clock and the wall clock when it was taken, xxh64 checksum
//   state   the arena bytes
//
// Loading refuses, each with its own code and message: bytes that are not an
// image (magic, size), another format or byte order, a damaged image
// (truncated, checksum), an image of another filter (structure,
// parameters, window or seed), and an image whose state the filter cannot
// be in (indices, counts, flags out of range: DedupFilter::accepts_state).
// The checksum is unkeyed: it catches damage, and the last check is what
// stands between a crafted, resealed image and the filter's memory. A
// refused load leaves the target untouched.
// Used by the C API (agebloom_filter_save/load) and dedup_fwd --snapshot.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "agebloom/dedup/dedup_filter.hpp"

namespace agebloom::dedup {

// Why a snapshot was refused (ok: it loaded).
enum class SnapshotErrc : uint8_t {
  ok = 0,
  not_a_snapshot,  // no magic, or shorter than a header
  foreign_format,  // another image format version or byte order (another build)
  damaged,         // truncated, or the checksum does not match: the bytes changed after saving
  mismatch,        // an image of another filter: structure, parameters, window or seed differ
  inconsistent,    // whole and of this filter, but a state it cannot be in (DedupFilter::accepts_state):
                   // crafted and resealed, or changed by a writer other than this library
};
// The reason, in words, for the messages of dedup_fwd and the C API.
const char* message(SnapshotErrc e) noexcept;

// What a snapshot says besides the state.
struct SnapshotClock {
  uint64_t filter_ns = 0;  // the filter's clock when it was taken (time windows; 0 otherwise)
  uint64_t wall_ns = 0;    // CLOCK_REALTIME then: restore time windows against the time that passed
};

// Bytes of the image of a filter whose state is `state_bytes` long.
size_t snapshot_bytes(size_t state_bytes) noexcept;

// Which filter an image is of: its plan and seed. `parameters` is the
// filter's parameters(), computed once by the caller (it builds a string;
// saving and loading themselves make no heap call).
struct SnapshotId {
  const DedupFilter* filter = nullptr;  // the plan: structure, shape, window
  uint64_t seed = 0;                    // the hash secret its keys were hashed under
  std::string_view parameters;          // filter->parameters(), computed once
  const void* arena = nullptr;          // the base of the arena the filter lives in: the image's
                                        // state is read through the filter's pointers into it
};

// Writes the image of the filter (its arena: state[0..state_bytes)) to out,
// which holds snapshot_bytes(state_bytes).
void write_snapshot(const SnapshotId& id, const void* state, size_t state_bytes, SnapshotClock clock,
                    void* out) noexcept;

// Checks `image` against the filter (built from the same plan and seed, in
// the arena at id.arena) and only then copies its state into
// state[0..state_bytes): the arena itself, or a scratch copy the caller
// moves there once every image it restores has passed. `clock` (optional)
// receives the clocks it was taken at.
SnapshotErrc read_snapshot(const SnapshotId& id, void* state, size_t state_bytes, const void* image, size_t len,
                           SnapshotClock* clock = nullptr) noexcept;

// The seed a whole, undamaged image was taken under, before any filter is
// checked against it: a process whose seed was drawn at random (its secret)
// takes its predecessor's from the snapshot, so a restart can restore what
// it could not otherwise hash to the same bits. The seed is as secret as
// the snapshot file.
SnapshotErrc snapshot_seed(const void* image, size_t len, uint64_t& seed) noexcept;

}  // namespace agebloom::dedup
