// Save and load: a filter's state as plain bytes, in the library's snapshot
// format (dedup/snapshot.hpp: a header naming the plan, the arena bytes, a
// checksum), so a C application's images and dedup_fwd's are one format.
#include "agebloom/dedup/snapshot.hpp"
#include "handle.hpp"

using namespace agebloom;
using namespace agebloom::capi;

namespace {
// The handle keeps its parameters' text from creation: no string is built here.
dedup::SnapshotId id_of(const Handle& h) { return {&h.filter, h.seed, h.parameters, h.state}; }
}  // namespace

extern "C" {

size_t agebloom_filter_save_bytes(const agebloom_filter* f) noexcept {
  return live(f) ? dedup::snapshot_bytes(handle(f)->state_bytes) : 0;
}

int agebloom_filter_save(const agebloom_filter* f, void* buf, size_t len, size_t* written) noexcept {
  if (!live(f) || !buf) return AGEBLOOM_EINVAL;
  const Handle& h = *handle(f);
  const size_t total = dedup::snapshot_bytes(h.state_bytes);
  if (len < total) return AGEBLOOM_ERANGE;
  dedup::write_snapshot(id_of(h), h.state, h.state_bytes, {}, buf);
  if (written) *written = total;
  return AGEBLOOM_OK;
}

int agebloom_filter_load(agebloom_filter* f, const void* buf, size_t len) noexcept {
  if (!live(f) || !buf) return AGEBLOOM_EINVAL;
  Handle& h = *handle(f);
  switch (dedup::read_snapshot(id_of(h), h.state, h.state_bytes, buf, len)) {
    case dedup::SnapshotErrc::ok: return AGEBLOOM_OK;
    case dedup::SnapshotErrc::mismatch: return AGEBLOOM_EIMAGE_MISMATCH;
    default: return AGEBLOOM_EIMAGE;  // not an image, another format, damaged, an impossible state
  }
}

}  // extern "C"
