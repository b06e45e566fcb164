// Key-mode names as the command lines spell them ("src-ip", "dst-ip", "flow",
// "click", "packet"), shared by agebloom-replay and dedup_fwd so both accept and print
// the same words, and the per-mode default policy.
#pragma once

#include <string_view>

#include "agebloom/dedup/dedup_filter.hpp"
#include "agebloom/packet/key_extract.hpp"

// Compiled in libagebloom: exported from the shared library, which hides
// everything else (core/export.h).
#pragma GCC visibility push(default)

namespace agebloom::dedup {

// "src-ip" → KeyMode::src_ip, ... False (out untouched) on anything else.
bool parse_key_mode(std::string_view s, packet::KeyMode& out) noexcept;
// "src-ip", "dst-ip", "flow", "click" or "packet": the word --key takes.
const char* key_mode_name(packet::KeyMode m) noexcept;

// Click fraud wants "pass at most one per window" (insert-on-miss); every
// other mode suppresses repeats within the window of the previous sighting.
constexpr Policy default_policy(packet::KeyMode m) noexcept {
  return m == packet::KeyMode::click ? Policy::insert_on_miss : Policy::insert_always;
}

}  // namespace agebloom::dedup

#pragma GCC visibility pop
