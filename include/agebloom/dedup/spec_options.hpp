// The command-line options that pick and size the filter, shared by dedup_fwd
// and agebloom-replay so that both accept exactly the same parameters, with
// the same checks and the same messages ("any filter and parameters that
// dedup_fwd accepts"). Each parse_* returns an empty string on success, else
// the message to show (naming the option and the value given).
#pragma once

#include <cstdint>
#include <string>

#include "agebloom/core/window.hpp"

namespace agebloom::dedup {

// A whole unsigned number in `base`: no sign, no blanks, no trailing bytes,
// no overflow.
bool parse_u64(const std::string& s, uint64_t& out, int base = 10) noexcept;

std::string parse_window_option(const std::string& arg, Window& window);    // --window N
std::string parse_ttl_option(const std::string& arg, Window& window);       // --ttl 500ms
std::string parse_capacity_option(const std::string& arg, uint64_t& capacity);  // --capacity N
std::string parse_fpr_option(const std::string& arg, double& fpr);           // --fpr 0.01
std::string parse_seed_option(const std::string& arg, uint64_t& seed);       // --seed HEX

}  // namespace agebloom::dedup
