// The dedup decision shared by dedup_fwd and agebloom-replay: a filter chosen
// by name over a count or time window, and the policy that turns its answer
// into a verdict.
//
//   insert-always:  every keyed packet is inserted; a packet is a duplicate if
//                   its key was inserted within the window ("suppress repeats
//                   within the window of the previous sighting").
//   insert-on-miss: only packets that pass are inserted ("pass at most one
//                   per window", the click-fraud default).
//
// Hosted code (lib/): it names filters with strings and reports with them, but
// the filter itself lives in the caller's arena as everywhere else.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "agebloom/agebloom.hpp"

namespace agebloom::dedup {

enum class Policy : uint8_t { insert_always, insert_on_miss };

const char* policy_name(Policy p) noexcept;
bool parse_policy(std::string_view s, Policy& out) noexcept;

// What the user asks for. `name` is one of filter_names(); "auto" asks the
// planner (lib/model) for the structure with the fewest bits per item that
// meets `fpr` over the window (for a time window: over `capacity` insertions)
// among those that read one cache line per query: a dataplane's cost.
struct FilterSpec {
  std::string name = "auto";
  Window window = Window::count(0);
  double fpr = 0.01;
  uint64_t capacity = 0;  // expected insertions per time window (required for --ttl)
  uint32_t segments = 0;  // r for the guarded epoch filter; 0 = the structure's default
};

// Comma-separated list of accepted names, for --help and error messages.
const char* filter_names() noexcept;

class DedupFilter {
 public:
  // Chooses parameters for `spec`; on error returns a message naming the problem.
  static std::variant<DedupFilter, std::string> plan(const FilterSpec& spec);

  size_t bytes_needed() const noexcept;
  // Creates the filter in `arena` (at least bytes_needed()). Message on error.
  std::string create(Arena& arena);

  // Time windows: expire what ended by `now`. Count windows: no-op.
  Status advance(uint64_t now) noexcept;

  // The verdict for one keyed packet: true = duplicate (suppress).
  bool is_duplicate(KeyHash h, Policy policy) noexcept {
    return std::visit(
        [&](auto& f) {
          if (policy == Policy::insert_always) return f.test_and_insert(h);
          if (f.contains(h)) return true;
          f.insert(h);
          return false;
        },
        filter_);
  }
  // The verdicts of n keyed packets in arrival order: exactly those of n calls
  // of advance(now[i]) then is_duplicate(h[i], policy), with the filter lines of
  // later keys prefetched while earlier ones are probed (lib/dedup/dedup_burst.cpp).
  // now == nullptr: the caller advanced the filter already (one clock per burst);
  // otherwise now[0..n) must not decrease.
  void decide_burst(const KeyHash* h, const uint64_t* now, size_t n, Policy policy, bool* dup) noexcept;
  bool contains(KeyHash h) const noexcept {
    return std::visit([&](const auto& f) { return f.contains(h); }, filter_);
  }

  // The guarded epoch configuration when that is the structure (the GPU
  // backend replays it), else nullptr.
  const GuardedEpochConfig* guarded_epoch_config() const noexcept {
    return std::get_if<GuardedEpochConfig>(&config_);
  }
  // The APBF / APBBF configuration when that is the structure, else nullptr.
  const ApbfConfig* apbf_config() const noexcept { return std::get_if<ApbfConfig>(&config_); }
  // The one-line guarded epoch configuration when that is the structure, else nullptr.
  const InterleavedEpochConfig* interleaved_epoch_config() const noexcept {
    return std::get_if<InterleavedEpochConfig>(&config_);
  }

  const std::string& name() const noexcept { return name_; }
  // One line of parameters, e.g. "r=8 k=10 segment_bits=1803999".
  std::string parameters() const;
  double model_fpr() const noexcept;
  double bits_per_item() const noexcept;
  double fill_ratio() const noexcept;

 private:
  std::string name_;
  std::variant<GuardedEpochConfig, ApbfConfig, InterleavedEpochConfig> config_;
  std::variant<GuardedEpochFilter, ApbfFilter, InterleavedEpochFilter<uint64_t>> filter_;
};

// "500ms", "60s", "10m", "1h", "250us", "100ns", "1.5s" → nanoseconds.
// False on anything else (empty, negative, unknown unit, overflow).
bool parse_duration_ns(std::string_view s, uint64_t& out) noexcept;

}  // namespace agebloom::dedup
