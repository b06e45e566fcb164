// The filter options dedup_fwd and agebloom-replay share (spec_options.hpp).
#include "agebloom/dedup/spec_options.hpp"

#include <cerrno>
#include <cstdlib>

#include "agebloom/dedup/dedup_filter.hpp"

namespace agebloom::dedup {

bool parse_u64(const std::string& s, uint64_t& out, int base) noexcept {
  if (s.empty() || s[0] == '-' || s[0] == '+' || s[0] == ' ') return false;
  char* end = nullptr;
  errno = 0;
  out = std::strtoull(s.c_str(), &end, base);
  return errno == 0 && end != nullptr && *end == '\0';
}

std::string parse_window_option(const std::string& arg, Window& window) {
  uint64_t w;
  if (!parse_u64(arg, w) || w == 0) return "--window needs a positive count, not '" + arg + "'";
  window = Window::count(w);
  return {};
}

std::string parse_ttl_option(const std::string& arg, Window& window) {
  uint64_t ns;
  if (!parse_duration_ns(arg, ns) || ns == 0) return "--ttl needs a duration like 500ms, 60s or 10m, not '" + arg + "'";
  window = Window::time(ns);
  return {};
}

std::string parse_capacity_option(const std::string& arg, uint64_t& capacity) {
  if (!parse_u64(arg, capacity) || capacity == 0) return "--capacity needs a positive count, not '" + arg + "'";
  return {};
}

std::string parse_fpr_option(const std::string& arg, double& fpr) {
  char* end = nullptr;
  fpr = std::strtod(arg.c_str(), &end);
  if (arg.empty() || end == nullptr || *end != '\0' || !(fpr > 0 && fpr < 1))
    return "--fpr must lie strictly between 0 and 1, not '" + arg + "'";
  return {};
}

std::string parse_seed_option(const std::string& arg, uint64_t& seed) {
  if (!parse_u64(arg, seed, 16)) return "--seed needs a hexadecimal number, not '" + arg + "'";
  return {};
}

}  // namespace agebloom::dedup
