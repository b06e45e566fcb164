#include "agebloom/dedup/dedup_filter.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <type_traits>

namespace agebloom::dedup {

const char* policy_name(Policy p) noexcept {
  return p == Policy::insert_always ? "insert-always" : "insert-on-miss";
}

bool parse_policy(std::string_view s, Policy& out) noexcept {
  if (s == "insert-always") out = Policy::insert_always;
  else if (s == "insert-on-miss") out = Policy::insert_on_miss;
  else return false;
  return true;
}

const char* filter_names() noexcept { return "auto, guarded-epoch, guarded-epoch-blocked, apbf"; }

namespace {
// The filter type that goes with each config type.
template <class Config>
struct FilterFor;
template <>
struct FilterFor<GuardedEpochConfig> {
  using type = GuardedEpochFilter;
};
template <>
struct FilterFor<ApbfConfig> {
  using type = ApbfFilter;
};
}  // namespace

std::variant<DedupFilter, std::string> DedupFilter::plan(const FilterSpec& spec) {
  DedupFilter d;
  // "auto" is the blocked guarded epoch filter for now: one cache line per
  // segment probe; the planner takes this choice over once it lands.
  d.name_ = spec.name == "auto" ? "guarded-epoch-blocked" : spec.name;
  if (d.name_ == "guarded-epoch" || d.name_ == "guarded-epoch-blocked") {
    const uint32_t r = spec.segments ? spec.segments : 8;
    const uint32_t block = d.name_ == "guarded-epoch-blocked" ? 512 : 0;
    auto cfg = GuardedEpochConfig::for_fpr(spec.window, spec.fpr, r, block, spec.capacity);
    if (!cfg) return std::string(cfg.what());
    d.config_ = *cfg;
  } else if (d.name_ == "apbf") {
    auto cfg = ApbfConfig::for_fpr(spec.window, spec.fpr, spec.capacity);
    if (!cfg) return std::string(cfg.what());
    d.config_ = *cfg;
  } else {
    return "unknown filter '" + spec.name + "' (choose from: " + filter_names() + ")";
  }
  return d;
}

size_t DedupFilter::bytes_needed() const noexcept {
  return std::visit(
      [](const auto& c) { return *FilterFor<std::decay_t<decltype(c)>>::type::bytes_needed(c); },
      config_);
}

std::string DedupFilter::create(Arena& arena) {
  return std::visit(
      [&](const auto& c) -> std::string {
        auto f = FilterFor<std::decay_t<decltype(c)>>::type::create(c, arena);
        if (!f) return f.what();
        filter_ = *f;
        return {};
      },
      config_);
}

Status DedupFilter::advance(uint64_t now) noexcept {
  return std::visit([&](auto& f) { return f.advance(now); }, filter_);
}

std::string DedupFilter::parameters() const {
  char buf[160];
  if (const auto* g = std::get_if<GuardedEpochConfig>(&config_)) {
    std::snprintf(buf, sizeof buf, "r=%u k=%u segment_bits=%llu block_bits=%u epoch=%llu", g->r, g->k,
                  static_cast<unsigned long long>(g->segment_bits), g->block_bits,
                  static_cast<unsigned long long>(g->epoch_length()));
  } else {
    const auto& a = std::get<ApbfConfig>(config_);
    std::snprintf(buf, sizeof buf, "k=%u l=%u slice_bits=%llu generation=%llu", a.k, a.l,
                  static_cast<unsigned long long>(a.slice_bits),
                  static_cast<unsigned long long>(a.generation_length()));
  }
  return buf;
}

double DedupFilter::model_fpr() const noexcept {
  return std::visit([](const auto& c) { return c.model_fpr(); }, config_);
}
double DedupFilter::bits_per_item() const noexcept {
  return std::visit([](const auto& c) { return c.bits_per_item(); }, config_);
}
double DedupFilter::fill_ratio() const noexcept {
  return std::visit([](const auto& f) { return f.fill_ratio(); }, filter_);
}

bool parse_duration_ns(std::string_view s, uint64_t& out) noexcept {
  size_t unit_at = 0;
  while (unit_at < s.size() && ((s[unit_at] >= '0' && s[unit_at] <= '9') || s[unit_at] == '.'))
    ++unit_at;
  if (unit_at == 0) return false;
  double value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + unit_at, value);
  if (ec != std::errc() || end != s.data() + unit_at || !(value > 0)) return false;
  const std::string_view unit = s.substr(unit_at);
  double scale;
  if (unit == "ns") scale = 1;
  else if (unit == "us") scale = 1e3;
  else if (unit == "ms") scale = 1e6;
  else if (unit == "s") scale = 1e9;
  else if (unit == "m") scale = 60e9;
  else if (unit == "h") scale = 3600e9;
  else return false;
  const double ns = std::round(value * scale);
  if (!(ns >= 1) || ns > 1.8e19) return false;
  out = static_cast<uint64_t>(ns);
  return true;
}

}  // namespace agebloom::dedup
