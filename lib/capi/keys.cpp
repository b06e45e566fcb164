// The C API's key extraction: packet::extract_key with C types, so a C
// program keys its frames exactly as dedup_fwd and agebloom-replay do.
#include <cstdint>
#include <cstring>

#include "agebloom/dedup/key_mode.hpp"
#include "agebloom/packet/key_extract.hpp"
#include "handle.hpp"

using namespace agebloom;
namespace pk = agebloom::packet;

static_assert(AGEBLOOM_KEY_MAX == pk::kMaxKeyBytes);
static_assert(static_cast<int>(pk::KeyMode::src_ip) == AGEBLOOM_KEY_SRC_IP &&
              static_cast<int>(pk::KeyMode::dst_ip) == AGEBLOOM_KEY_DST_IP &&
              static_cast<int>(pk::KeyMode::flow) == AGEBLOOM_KEY_FLOW &&
              static_cast<int>(pk::KeyMode::click) == AGEBLOOM_KEY_CLICK &&
              static_cast<int>(pk::KeyMode::packet) == AGEBLOOM_KEY_PACKET);
static_assert(AGEBLOOM_LINKTYPE_ETHERNET == pk::linktype::en10mb && AGEBLOOM_LINKTYPE_RAW == pk::linktype::raw);

extern "C" {

namespace {

// The click options of the C struct, in the library's form.
int read_click(const agebloom_click_options* click, pk::ClickOptions& co) noexcept {
  agebloom_click_options c;
  if (int st = capi::read_in(click, c); st != AGEBLOOM_OK) return st;
  if (c.port_count > pk::ClickOptions::kMaxPorts) return AGEBLOOM_EINVAL;  // never a silently shorter list
  co.port_count = static_cast<uint8_t>(c.port_count);
  for (size_t i = 0; i < co.port_count; ++i) co.ports[i] = c.ports[i];
  co.any_port = c.any_port != 0;
  co.include_host = c.include_host != 0;
  co.param = c.param;
  return AGEBLOOM_OK;
}

int extract(uint32_t linktype, const void* frame, size_t frame_len, agebloom_key_mode mode,
            const pk::KeyOptions& options, size_t wire_len, void* key, size_t key_cap, size_t* key_len,
            unsigned* reason) noexcept {
  // The key is built in a buffer of the longest size and copied out: the
  // caller's may be shorter (a src-ip key is 5 or 17 bytes).
  pk::Key k;
  const pk::Result r = pk::extract_key(linktype, static_cast<const uint8_t*>(frame), frame_len,
                                       static_cast<pk::KeyMode>(mode), options, k, wire_len);
  if (reason) *reason = static_cast<unsigned>(r.reason);
  if (!r.ok()) {
    *key_len = 0;
    return AGEBLOOM_ENOKEY;
  }
  *key_len = k.length;
  if (key_cap < k.length) return AGEBLOOM_ERANGE;
  std::memcpy(key, k.bytes, k.length);
  return AGEBLOOM_OK;
}

}  // namespace

int agebloom_extract_key(uint32_t linktype, const void* frame, size_t frame_len, agebloom_key_mode mode,
                         const agebloom_click_options* click, void* key, size_t key_cap, size_t* key_len,
                         unsigned* reason) noexcept {
  if ((!frame && frame_len) || !key || !key_len || static_cast<unsigned>(mode) > AGEBLOOM_KEY_PACKET)
    return AGEBLOOM_EINVAL;
  pk::KeyOptions options;  // packet: the tools' defaults (TTL and checksum masked, MACs and VLAN IDs kept)
  if (click)
    if (int st = read_click(click, options.click); st != AGEBLOOM_OK) return st;
  return extract(linktype, frame, frame_len, mode, options, 0, key, key_cap, key_len, reason);
}

int agebloom_extract_key_with(uint32_t linktype, const void* frame, size_t frame_len, agebloom_key_mode mode,
                              const agebloom_key_options* options, void* key, size_t key_cap, size_t* key_len,
                              unsigned* reason) noexcept {
  if ((!frame && frame_len) || !key || !key_len || static_cast<unsigned>(mode) > AGEBLOOM_KEY_PACKET)
    return AGEBLOOM_EINVAL;
  if (!options) return agebloom_extract_key(linktype, frame, frame_len, mode, nullptr, key, key_cap, key_len, reason);
  agebloom_key_options o;
  if (int st = capi::read_in(options, o); st != AGEBLOOM_OK) return st;
  pk::KeyOptions ko;
  if (int st = read_click(&o.click, ko.click); st != AGEBLOOM_OK) return st;
  // The combinations the tools refuse (filter_options.cpp) are refused here
  // too: an option that would be silently ignored is a caller's mistake.
  const bool packet = mode == AGEBLOOM_KEY_PACKET;
  if (!packet && (o.ignore_vlan || o.ignore_l2 || o.packet_bytes)) return AGEBLOOM_EINVAL;
  if (packet && o.vlan_in_key) return AGEBLOOM_EINVAL;
  if (o.packet_bytes && (o.packet_bytes < 20 || o.packet_bytes > pk::kMaxPacketKeyIpBytes)) return AGEBLOOM_EINVAL;
  if (o.wire_len && o.wire_len < frame_len) return AGEBLOOM_EINVAL;
  ko.vlan_in_key = o.vlan_in_key != 0;
  ko.packet.ignore_vlan = o.ignore_vlan != 0;
  ko.packet.ignore_l2 = o.ignore_l2 != 0;
  ko.packet.max_bytes = o.packet_bytes;
  const size_t wire = o.wire_len > SIZE_MAX ? SIZE_MAX : static_cast<size_t>(o.wire_len);
  return extract(linktype, frame, frame_len, mode, ko, wire, key, key_cap, key_len, reason);
}

const char* agebloom_key_reason_name(unsigned reason) noexcept {
  return reason < pk::kReasonCount ? pk::reason_name(static_cast<pk::Reason>(reason)) : "unknown";
}

agebloom_policy agebloom_default_policy(agebloom_key_mode mode) noexcept {
  return mode == AGEBLOOM_KEY_CLICK ? AGEBLOOM_INSERT_ON_MISS : AGEBLOOM_INSERT_ALWAYS;
}
static_assert(dedup::default_policy(pk::KeyMode::click) == dedup::Policy::insert_on_miss &&
              dedup::default_policy(pk::KeyMode::src_ip) == dedup::Policy::insert_always);

const char* agebloom_key_mode_name(agebloom_key_mode mode) noexcept {
  return static_cast<unsigned>(mode) <= AGEBLOOM_KEY_PACKET ? dedup::key_mode_name(static_cast<pk::KeyMode>(mode))
                                                           : nullptr;
}

}  // extern "C"
