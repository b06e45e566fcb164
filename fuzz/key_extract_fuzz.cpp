// Fuzz target: key extraction over arbitrary frame bytes, in every key mode
// and for every link type it knows, plus the click penalty parameter reader.
// The contract under test (key_extract.hpp): every read bounds-checked, a
// reason or a key for any input, a key never longer than kMaxKeyBytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "agebloom/packet/click_value.hpp"
#include "agebloom/packet/key_extract.hpp"

namespace pk = agebloom::packet;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  // Byte 0 picks the link type and the click options; the rest is the frame.
  static constexpr uint32_t kLinks[] = {pk::linktype::en10mb, pk::linktype::null, pk::linktype::ppp,
                                        pk::linktype::raw,    pk::linktype::linux_sll, pk::linktype::linux_sll2,
                                        pk::linktype::ppi,    pk::linktype::loop,  pk::linktype::c_hdlc,
                                        pk::linktype::ipv4,   pk::linktype::ipv6,  pk::linktype::linktype_raw};
  const uint32_t link = kLinks[data[0] % (sizeof kLinks / sizeof kLinks[0])];
  pk::ClickOptions click;
  click.any_port = data[0] & 0x08;
  click.include_host = data[0] & 0x10;
  click.param = (data[0] & 0x20) ? "id" : nullptr;
  const uint8_t* frame = data + 1;
  const size_t len = size - 1;
  static pk::Key key;
  for (pk::KeyMode mode : {pk::KeyMode::src_ip, pk::KeyMode::dst_ip, pk::KeyMode::flow, pk::KeyMode::click}) {
    const pk::Result r = pk::extract_key(link, frame, len, mode, click, key);
    if (r.ok() && (key.length == 0 || key.length > pk::kMaxKeyBytes)) std::abort();
    // The general walk must agree with the fast path wherever the fast path answers.
    pk::Key walk;
    const pk::Result w = pk::detail::extract_key_walk(link, frame, len, mode, click, walk);
    if (w.ok() != r.ok()) std::abort();
    if (w.ok() && (w.reason != r.reason || walk.length != key.length || std::memcmp(walk.bytes, key.bytes, key.length)))
      std::abort();
    // As if a snap length had cut the frame (byte 0's top bits: by how much):
    // still bounded by the captured bytes, and a key kept from the whole
    // frame stays the same key.
    const size_t wire = len + (data[0] >> 6) * 700;
    pk::Key snapped;
    const pk::Result c = pk::extract_key(link, frame, len, mode, click, snapped, wire);
    if (c.ok() && (snapped.length == 0 || snapped.length > pk::kMaxKeyBytes)) std::abort();
    if (r.ok() &&
        !(c.ok() && snapped.length == key.length && !std::memcmp(snapped.bytes, key.bytes, key.length)))
      std::abort();
  }
  double fn = 0;
  if (pk::click_param_number(link, frame, len, click, "bid", fn) && !(fn > 0)) std::abort();
  return 0;
}
