#include "agebloom/packet/click_value.hpp"

#include <charconv>
#include <cmath>

namespace agebloom::packet {

bool click_param_number(uint32_t linktype, const uint8_t* data, std::size_t len, const ClickOptions& click,
                        const char* name, double& out) noexcept {
  ClickOptions by_param = click;
  by_param.param = name;
  by_param.include_host = false;
  Key key;
  if (!extract_key(linktype, data, len, KeyMode::click, by_param, key).ok()) return false;
  // Layout 0x5v (key_extract.hpp): tag, client[A], mlen[1], method, vlen[2], value.
  const uint8_t* k = key.bytes;
  const std::size_t n = key.length;
  const std::size_t addr = (k[0] & 0x0f) == 6 ? 16 : 4;
  std::size_t at = 1 + addr;
  if (at >= n) return false;
  at += 1 + k[at];  // method
  if (at + 2 > n) return false;
  const std::size_t vlen = (std::size_t{k[at]} << 8) | k[at + 1];
  at += 2;
  if (vlen == 0 || at + vlen != n) return false;
  const char* first = reinterpret_cast<const char*>(k + at);
  double v = 0;
  const auto [end, ec] = std::from_chars(first, first + vlen, v);
  if (ec != std::errc{} || end != first + vlen || !std::isfinite(v) || !(v > 0)) return false;
  out = v;
  return true;
}

}  // namespace agebloom::packet
