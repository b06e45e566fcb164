#include "agebloom/dedup/key_mode.hpp"

namespace agebloom::dedup {

bool parse_key_mode(std::string_view s, packet::KeyMode& out) noexcept {
  using packet::KeyMode;
  if (s == "src-ip") out = KeyMode::src_ip;
  else if (s == "dst-ip") out = KeyMode::dst_ip;
  else if (s == "flow") out = KeyMode::flow;
  else if (s == "click") out = KeyMode::click;
  else if (s == "packet") out = KeyMode::packet;
  else return false;
  return true;
}

const char* key_mode_name(packet::KeyMode m) noexcept {
  switch (m) {
    case packet::KeyMode::src_ip: return "src-ip";
    case packet::KeyMode::dst_ip: return "dst-ip";
    case packet::KeyMode::flow: return "flow";
    case packet::KeyMode::click: return "click";
    case packet::KeyMode::packet: return "packet";
  }
  return "?";
}

}  // namespace agebloom::dedup
