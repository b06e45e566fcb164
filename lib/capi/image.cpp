// Save and load: a filter's state as plain bytes. The arena holds all of a
// structure's mutable state and no pointers (core/arena.hpp), and a handle's
// arena starts on a cache line, so the bytes carved from it are the same
// layout in any handle of the same plan: an image is a header naming that
// plan, then those bytes.
#include <cstring>

#include "agebloom/registry/structure.hpp"
#include "handle.hpp"

using namespace agebloom;
using namespace agebloom::capi;

namespace {

struct ImageHeader {
  char magic[8];               // kMagic
  uint32_t format;             // kFormat: the layout of this header
  uint32_t byte_order;         // kByteOrder as written: an image of another byte order reads differently
  uint32_t header_bytes;       // sizeof(ImageHeader)
  uint32_t structure;          // Structure
  uint32_t window_kind;        // agebloom_window_kind
  uint32_t reserved;
  uint64_t window;             // insertions or ns
  uint64_t seed;               // keys hashed under another seed are other bits
  uint64_t state_bytes;        // what follows the header
  char parameters[224];        // the shape (DedupFilter::parameters), NUL-padded
};
constexpr char kMagic[8] = {'A', 'G', 'E', 'B', 'L', 'O', 'O', 'M'};
// The image format: this header's layout and the arena layouts of the
// structures. Raise it when either changes (a State or Header struct in
// filters/, or how a structure carves its arena), so that an older image is
// refused (EIMAGE) rather than misread: the header check cannot see it.
constexpr uint32_t kFormat = 1;
constexpr uint32_t kByteOrder = 0x01020304;

ImageHeader header_of(const Handle& h) {
  ImageHeader x;
  std::memset(&x, 0, sizeof x);
  std::memcpy(x.magic, kMagic, sizeof kMagic);
  x.format = kFormat;
  x.byte_order = kByteOrder;
  x.header_bytes = sizeof(ImageHeader);
  x.structure = static_cast<uint32_t>(h.filter.structure());
  const Window w = h.filter.config().window();
  x.window_kind = w.is_time() ? AGEBLOOM_WINDOW_TIME : AGEBLOOM_WINDOW_COUNT;
  x.window = w.span;
  x.seed = h.seed;
  x.state_bytes = h.state_bytes;
  std::memcpy(x.parameters, h.parameters, sizeof x.parameters);
  return x;
}

}  // namespace

extern "C" {

size_t agebloom_filter_save_bytes(const agebloom_filter* f) noexcept {
  return live(f) ? sizeof(ImageHeader) + handle(f)->state_bytes : 0;
}

int agebloom_filter_save(const agebloom_filter* f, void* buf, size_t len, size_t* written) noexcept {
  if (!live(f) || !buf) return AGEBLOOM_EINVAL;
  const Handle& h = *handle(f);
  const size_t total = sizeof(ImageHeader) + h.state_bytes;
  if (len < total) return AGEBLOOM_ERANGE;
  const ImageHeader x = header_of(h);
  std::memcpy(buf, &x, sizeof x);
  std::memcpy(static_cast<unsigned char*>(buf) + sizeof x, h.state, h.state_bytes);
  if (written) *written = total;
  return AGEBLOOM_OK;
}

int agebloom_filter_load(agebloom_filter* f, const void* buf, size_t len) noexcept {
  if (!live(f) || !buf) return AGEBLOOM_EINVAL;
  Handle& h = *handle(f);
  ImageHeader x;
  if (len < sizeof x) return AGEBLOOM_EIMAGE;
  std::memcpy(&x, buf, sizeof x);
  if (std::memcmp(x.magic, kMagic, sizeof kMagic) != 0 || x.format != kFormat || x.byte_order != kByteOrder ||
      x.header_bytes != sizeof x || x.state_bytes > len - sizeof x || len - sizeof x != x.state_bytes)
    return AGEBLOOM_EIMAGE;
  const ImageHeader mine = header_of(h);
  if (x.structure != mine.structure || x.window_kind != mine.window_kind || x.window != mine.window ||
      x.seed != mine.seed || x.state_bytes != mine.state_bytes ||
      std::memcmp(x.parameters, mine.parameters, sizeof x.parameters) != 0)
    return AGEBLOOM_EIMAGE_MISMATCH;
  std::memcpy(h.state, static_cast<const unsigned char*>(buf) + sizeof x, h.state_bytes);
  return AGEBLOOM_OK;
}

}  // extern "C"
