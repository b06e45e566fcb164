// A number carried by a click's HTTP request: the value of one query
// parameter (e.g. the bid of an ad click), read by the same bounds-checked
// walk that keys the click (key_extract.hpp). Penalty-aware dedup takes a
// click's $FN from it (--penalty-param).
#pragma once

#include <cstddef>
#include <cstdint>

#include "agebloom/packet/key_extract.hpp"

namespace agebloom::packet {

// The value of query parameter `name` in the click request of the frame, as a
// finite number > 0 ("2.5", "17", "1e3"). False when the frame has no click
// request to a port of `click`, no such parameter, or a value that is not such
// a number. Pure, allocation-free (one Key on the stack).
bool click_param_number(uint32_t linktype, const uint8_t* data, std::size_t len, const ClickOptions& click,
                        const char* name, double& out) noexcept;

}  // namespace agebloom::packet
