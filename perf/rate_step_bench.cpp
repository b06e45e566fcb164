// The time-limited filter under rate steps (its reason to exist): a stream
// planned at 100,000 keys per second of a 1 s window steps x10 up, back, and
// x0.1 down, on a clock the benchmark drives (no sleeps). Reported per phase:
// cycles per test_and_insert, the largest slice count and memory, memory at
// the end, FPR on fresh keys, live false negatives over the keys of the last
// second, and budget saturations. Names: rate_step/tlbf/<phase>.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <deque>
#include <string>
#include <vector>

#include "agebloom/filters/time_limited.hpp"
#include "bench_common.hpp"

namespace agebloom::perf {
namespace {

constexpr uint64_t kSecond = 1'000'000'000;
constexpr uint64_t kPlanned = 100'000;  // keys per second (the capacity of the 1 s window)

struct Phase {
  const char* name;
  uint64_t per_second;
};
constexpr Phase kPhases[] = {{"steady", kPlanned}, {"x10", 10 * kPlanned}, {"back", kPlanned},
                             {"x0.1", kPlanned / 10}, {"again", kPlanned}};

void run_rate_steps(benchmark::State& st, size_t upto) {
  auto cfg = TimeLimitedConfig::for_fpr(Window::time(kSecond), 0.01, {.capacity = kPlanned});
  if (!cfg) {
    st.SkipWithError(cfg.what());
    return;
  }
  const size_t bytes = *TimeLimitedFilter::bytes_needed(*cfg);
  void* memory = std::aligned_alloc(kCacheLine, align_up(bytes, kCacheLine));
  const Hasher hash(kHashSeed);
  for (auto _ : st) {
    st.PauseTiming();
    Arena arena(memory, bytes);
    TimeLimitedFilter f = *TimeLimitedFilter::create(*cfg, arena);
    uint64_t now = kSecond, next = 0, cycles = 0, ops = 0;
    uint32_t max_slices = 0;
    uint64_t max_bits = 0;
    std::deque<std::pair<uint64_t, uint64_t>> live;
    // Earlier phases untimed: they only bring the filter to this phase's start.
    for (size_t p = 0; p <= upto; ++p) {
      const uint64_t step = kSecond / kPhases[p].per_second, n = 2 * kPhases[p].per_second;  // two seconds each
      for (uint64_t i = 0; i < n; ++i) {
        now += step;
        (void)f.advance(now);
        const KeyHash h = hash(&next, sizeof next);
        if (p == upto) {
          const uint64_t t0 = ticks();
          benchmark::DoNotOptimize(f.test_and_insert(h));
          cycles += ticks() - t0;
          ++ops;
          live.emplace_back(next, now);
          while (now - live.front().second > kSecond) live.pop_front();
          if (f.slices() > max_slices) max_slices = f.slices();
          if (f.bits_in_use() > max_bits) max_bits = f.bits_in_use();
        } else {
          f.insert(h);
        }
        ++next;
      }
    }
    uint64_t misses = 0, fp = 0;
    for (const auto& [k, t] : live) misses += !f.contains(hash(&k, sizeof k));
    for (uint64_t i = 0; i < 200'000; ++i) {
      const uint64_t q = (uint64_t{1} << 60) + i;
      fp += f.contains(hash(&q, sizeof q));
    }
    const double window_keys = static_cast<double>(kPhases[upto].per_second);  // keys in the last second
    st.counters["cycles_per_op"] = static_cast<double>(cycles) / static_cast<double>(ops);
    st.counters["max_slices"] = max_slices;
    st.counters["end_slices"] = f.slices();
    st.counters["max_bits_per_window_key"] = static_cast<double>(max_bits) / window_keys;
    st.counters["end_bits_per_window_key"] = static_cast<double>(f.bits_in_use()) / window_keys;
    st.counters["fpr"] = static_cast<double>(fp) / 200'000.0;
    st.counters["live_fnr"] = live.empty() ? 0.0 : static_cast<double>(misses) / live.size();
    st.counters["saturations"] = static_cast<double>(f.saturations());
    st.counters["generation_target"] = static_cast<double>(f.generation_target());
    st.ResumeTiming();
  }
  std::free(memory);
}

}  // namespace

void register_rate_steps() {
  for (size_t p = 0; p < sizeof kPhases / sizeof kPhases[0]; ++p)
    benchmark::RegisterBenchmark((std::string("rate_step/tlbf/") + kPhases[p].name).c_str(),
                                 [p](benchmark::State& st) { run_rate_steps(st, p); })
        ->Iterations(1)
        ->Unit(benchmark::kMillisecond);
}

}  // namespace agebloom::perf
