#include "agebloom/dedup/snapshot.hpp"

// The streaming state on the stack: saving and loading make no heap call
// (the C API promises it; tests/capi/no_alloc_test.cpp checks).
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include <cstring>

namespace agebloom::dedup {

namespace {

struct Header {
  char magic[8];           // kMagic
  uint32_t format;         // kFormat: this header's layout and the structures' arena layouts
  uint32_t byte_order;     // kByteOrder as written
  uint32_t header_bytes;   // sizeof(Header)
  uint32_t structure;      // Structure
  uint32_t window_kind;    // 0 count, 1 time
  uint32_t reserved;
  uint64_t window;         // insertions or ns
  uint64_t seed;           // keys hashed under another seed are other bits
  uint64_t state_bytes;    // what follows the header
  uint64_t filter_ns;      // SnapshotClock
  uint64_t wall_ns;
  uint64_t checksum;       // XXH64 of the header (this field 0) and the state
  char parameters[224];    // DedupFilter::parameters(), NUL-padded
};
constexpr char kMagic[8] = {'A', 'G', 'E', 'B', 'L', 'O', 'O', 'M'};
// Raise kFormat when this header or any structure's arena layout changes (a
// Header/State struct in filters/, or how create() carves), or where a key's
// bits go (core/hash.hpp's hash and probe, core/placement.hpp): an older
// image is then refused as foreign rather than misread (its keys would read
// as absent).
// 3: probe() mixed its positions with mix64 (one commit, never released);
// 4: probe() scatters them;
// 5: keys of at most 16 bytes hashed by AES rounds with L(len) in the input
//    (one commit, never released);
// 6: by AES rounds with L(len) in round 1's key, not XXH3-128.
constexpr uint32_t kFormat = 6;
constexpr uint32_t kByteOrder = 0x01020304;

Header header_of(const SnapshotId& id, size_t state_bytes) {
  const DedupFilter& f = *id.filter;
  Header h;
  std::memset(&h, 0, sizeof h);
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.format = kFormat;
  h.byte_order = kByteOrder;
  h.header_bytes = sizeof(Header);
  h.structure = static_cast<uint32_t>(f.structure());
  const Window w = f.config().window();
  h.window_kind = w.is_time() ? 1 : 0;
  h.window = w.span;
  h.seed = id.seed;
  h.state_bytes = state_bytes;
  const std::string_view p = id.parameters;
  std::memcpy(h.parameters, p.data(), p.size() < sizeof h.parameters ? p.size() : sizeof h.parameters - 1);
  return h;
}

uint64_t checksum(Header h, const void* state, size_t n) {
  h.checksum = 0;
  XXH64_state_t s;
  XXH64_reset(&s, 0x5eed'a6eb'100f'0001ULL);
  XXH64_update(&s, &h, sizeof h);
  XXH64_update(&s, state, n);
  return XXH64_digest(&s);
}

}  // namespace

const char* message(SnapshotErrc e) noexcept {
  switch (e) {
    case SnapshotErrc::ok: return "ok";
    case SnapshotErrc::not_a_snapshot: return "not an agebloom snapshot";
    case SnapshotErrc::foreign_format: return "a snapshot of another format version or byte order (another build)";
    case SnapshotErrc::damaged: return "a damaged snapshot (truncated, or its checksum does not match)";
    case SnapshotErrc::mismatch:
      return "a snapshot of another filter (structure, parameters, window or seed differ from this run's)";
    case SnapshotErrc::inconsistent:
      return "a snapshot whose filter state is impossible (an index, count or flag out of range: "
             "crafted past its checksum, or written by another program)";
  }
  return "unknown snapshot error";
}

size_t snapshot_bytes(size_t state_bytes) noexcept { return sizeof(Header) + state_bytes; }

void write_snapshot(const SnapshotId& id, const void* state, size_t state_bytes, SnapshotClock clock,
                    void* out) noexcept {
  Header h = header_of(id, state_bytes);
  h.filter_ns = clock.filter_ns;
  h.wall_ns = clock.wall_ns;
  h.checksum = checksum(h, state, state_bytes);
  std::memcpy(out, &h, sizeof h);
  std::memcpy(static_cast<unsigned char*>(out) + sizeof h, state, state_bytes);
}

namespace {

// The image's header, once the bytes are a whole, undamaged image of this
// format: what both readers below check before they look at any field.
SnapshotErrc whole_image(const void* image, size_t len, Header& h) noexcept {
  if (image == nullptr || len < sizeof h) return SnapshotErrc::not_a_snapshot;
  std::memcpy(&h, image, sizeof h);
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) return SnapshotErrc::not_a_snapshot;
  if (h.format != kFormat || h.byte_order != kByteOrder || h.header_bytes != sizeof h)
    return SnapshotErrc::foreign_format;
  if (h.state_bytes != len - sizeof h) return SnapshotErrc::damaged;
  if (checksum(h, static_cast<const unsigned char*>(image) + sizeof h, h.state_bytes) != h.checksum)
    return SnapshotErrc::damaged;
  return SnapshotErrc::ok;
}

}  // namespace

SnapshotErrc read_snapshot(const SnapshotId& id, void* state, size_t state_bytes, const void* image, size_t len,
                           SnapshotClock* clock) noexcept {
  Header h;
  if (SnapshotErrc e = whole_image(image, len, h); e != SnapshotErrc::ok) return e;
  Header mine = header_of(id, state_bytes);
  if (h.structure != mine.structure || h.window_kind != mine.window_kind || h.window != mine.window ||
      h.seed != mine.seed || h.state_bytes != mine.state_bytes ||
      std::memcmp(h.parameters, mine.parameters, sizeof h.parameters) != 0)
    return SnapshotErrc::mismatch;
  const unsigned char* saved = static_cast<const unsigned char*>(image) + sizeof h;
  if (id.arena == nullptr || !id.filter->accepts_state(ArenaImage(saved, id.arena, state_bytes)))
    return SnapshotErrc::inconsistent;
  std::memcpy(state, static_cast<const unsigned char*>(image) + sizeof h, state_bytes);
  if (clock) *clock = {h.filter_ns, h.wall_ns};
  return SnapshotErrc::ok;
}

SnapshotErrc snapshot_seed(const void* image, size_t len, uint64_t& seed) noexcept {
  Header h;
  if (SnapshotErrc e = whole_image(image, len, h); e != SnapshotErrc::ok) return e;
  seed = h.seed;
  return SnapshotErrc::ok;
}

}  // namespace agebloom::dedup
