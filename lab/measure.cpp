#include "measure.hpp"

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <memory>
#include <random>
#include <unordered_map>

namespace agebloom::lab {

namespace {
using Clock = std::chrono::steady_clock;
double ns_since(Clock::time_point t0, uint64_t n) {
  return n ? std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / static_cast<double>(n) : 0.0;
}
}  // namespace

WindowMetrics measure_count_window(const FilterConfig& config, const std::vector<uint64_t>& stream, uint64_t w,
                                   uint64_t queries, uint64_t seed) {
  dedup::DedupFilter filter(config);
  const size_t bytes = filter.bytes_needed();
  std::unique_ptr<unsigned char, decltype(&std::free)> memory(
      static_cast<unsigned char*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64)), &std::free);
  Arena arena(memory.get(), bytes);
  if (!memory || !filter.create(arena).empty()) return {};
  const Hasher hash(seed ^ 0x1ab0'1ab0);
  auto h = [&](uint64_t id) { return hash(&id, sizeof id); };
  WindowMetrics out = measure_count_window([&](uint64_t id) { (void)filter.is_duplicate(h(id), dedup::Policy::insert_always); },
                                           [&](uint64_t id) { return filter.contains(h(id)); }, stream, w, queries, seed);
  out.bits_per_item = filter.bits_per_item();
  out.model_fpr = filter.model_fpr();
  return out;
}

WindowMetrics measure_count_window(const std::function<void(uint64_t)>& insert,
                                   const std::function<bool(uint64_t)>& contains, const std::vector<uint64_t>& stream,
                                   uint64_t w, uint64_t queries, uint64_t seed) {
  WindowMetrics out;
  std::unordered_map<uint64_t, uint64_t> last;  // id -> index of its last insertion
  last.reserve(stream.size());
  const auto t0 = Clock::now();
  for (uint64_t i = 0; i < stream.size(); ++i) {
    insert(stream[i]);
    last[stream[i]] = i;
  }
  out.ns_per_insert = ns_since(t0, stream.size());

  const uint64_t n = stream.size();
  std::vector<uint64_t> live, expired;
  for (const auto& [id, at] : last) {
    if (n - at <= w) live.push_back(id);
    else if (n - at <= 2 * w) expired.push_back(id);
  }
  std::sort(live.begin(), live.end());  // unordered_map order is not reproducible across libraries
  std::sort(expired.begin(), expired.end());
  const size_t slack_keys = expired.size();
  std::mt19937_64 rng(seed);
  std::shuffle(live.begin(), live.end(), rng);
  std::shuffle(expired.begin(), expired.end(), rng);
  live.resize(std::min<size_t>(live.size(), queries));
  expired.resize(std::min<size_t>(expired.size(), queries));

  const auto q0 = Clock::now();
  uint64_t misses = 0;
  for (uint64_t id : live) misses += !contains(id);
  uint64_t stale = 0;
  for (uint64_t id : expired) stale += contains(id);
  uint64_t fp = 0, fresh = 0;
  for (uint64_t i = 0; fresh < queries; ++i) {
    const uint64_t id = (uint64_t{0xf5} << 56) ^ (seed << 32) ^ i;  // never a stream id (checked)
    if (last.count(id)) continue;
    fp += contains(id);
    ++fresh;
  }
  out.ns_per_query = ns_since(q0, live.size() + expired.size() + fresh);
  out.live = live.size();
  out.expired = expired.size();
  out.fresh = fresh;
  out.live_fnr = live.empty() ? 0.0 : static_cast<double>(misses) / static_cast<double>(live.size());
  out.expired_positive = expired.empty() ? 0.0 : static_cast<double>(stale) / static_cast<double>(expired.size());
  out.fpr = fresh ? static_cast<double>(fp) / static_cast<double>(fresh) : 0.0;
  out.npws = out.expired_positive * static_cast<double>(slack_keys) / static_cast<double>(w ? w : 1);
  return out;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace agebloom::lab
