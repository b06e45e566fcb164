// How long one burst can take: a structure's epoch or generation ends inside
// some burst, and whatever the rotation does at once (clearing a segment, or
// one lane of every line) is paid by that burst while the NIC's Rx ring
// fills. Throughput figures average it away; a dataplane at line rate loses
// the packets that arrive meanwhile. Per structure and window, bursts of 32
// fresh keys through DedupFilter::decide_burst (dedup_fwd's call) for 2.5 W
// insertions, each burst timed alone: the median and 99.9th percentile in
// cycles, the worst burst that rotated and the worst that did not (the
// machine's own noise) in microseconds, and the frames a 1024-descriptor Rx
// ring fed at 14.88 Mpps (10 Gb/s of 64-byte frames) would have dropped during
// the worst rotation. Names: rotation/<structure>/W:<window>/iterations:1.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "agebloom/dedup/dedup_filter.hpp"
#include "agebloom/dedup/filter_options.hpp"
#include "bench_common.hpp"

namespace agebloom::perf {
namespace {

constexpr size_t kBurstKeys = 32;
constexpr double kLineRatePps = 14.88e6;  // 10 Gb/s, 64-byte frames
constexpr double kRxRing = 1024;          // dedup_fwd's Rx descriptors per queue

void run_rotation(benchmark::State& st, const std::string& structure, uint64_t w) {
  dedup::FilterSpec spec;
  if (std::string err = dedup::parse_filter_option(structure, spec); !err.empty()) {
    st.SkipWithError(err.c_str());
    return;
  }
  spec.window = Window::count(w);
  spec.fpr = 0.01;
  auto planned = dedup::DedupFilter::plan(spec);
  if (auto* err = std::get_if<std::string>(&planned)) {
    st.SkipWithError(err->c_str());
    return;
  }
  dedup::DedupFilter f = std::get<dedup::DedupFilter>(planned);
  const size_t bytes = f.bytes_needed();
  void* memory = std::aligned_alloc(kCacheLine, align_up(bytes, kCacheLine));
  if (memory == nullptr) {
    st.SkipWithError("cannot allocate the filter");
    return;
  }
  // Touched before it is timed, as dedup_fwd's rte_zmalloc'd arena is: a
  // first touch's page faults are not a rotation's.
  std::memset(memory, 0, bytes);
  const double hz = tick_hz();
  for (auto _ : st) {
    Arena arena(memory, bytes);
    if (std::string err = f.create(arena); !err.empty()) {
      st.SkipWithError(err.c_str());
      break;
    }
    // A burst that rotates is one after which the epoch holds fewer than 32
    // more insertions than before it; the others show what the machine's own
    // noise (a preempted vCPU) does to a burst.
    std::vector<uint64_t> cycles;
    cycles.reserve((5 * w / 2) / kBurstKeys + 1);
    uint64_t worst_rotating = 0, worst_other = 0, rotations = 0;
    KeyHash h[kBurstKeys];
    bool dup[kBurstKeys];
    uint64_t id = 0;
    for (uint64_t done = 0; done < 5 * w / 2; done += kBurstKeys) {
      for (KeyHash& k : h) {
        const uint64_t x = key_of(id++);
        k = KeyHash{x, mix64(x ^ kKeySeed)};
      }
      const uint64_t fill_before = f.epoch_fill();
      const uint64_t t0 = ticks();
      f.decide_burst(h, nullptr, kBurstKeys, dedup::Policy::insert_always, dup);
      const uint64_t t = ticks() - t0;
      benchmark::DoNotOptimize(dup);
      cycles.push_back(t);
      if (f.epoch_fill() < fill_before + kBurstKeys) {
        ++rotations;
        worst_rotating = std::max(worst_rotating, t);
      } else {
        worst_other = std::max(worst_other, t);
      }
    }
    std::sort(cycles.begin(), cycles.end());
    const auto at = [&](double q) { return static_cast<double>(cycles[static_cast<size_t>(q * (cycles.size() - 1))]); };
    const double rotating_s = static_cast<double>(worst_rotating) / hz;
    st.counters["p50_burst_cycles"] = at(0.5);
    st.counters["p999_burst_cycles"] = at(0.999);
    st.counters["rotations"] = static_cast<double>(rotations);
    st.counters["worst_rotating_burst_us"] = rotating_s * 1e6;
    st.counters["worst_other_burst_us"] = static_cast<double>(worst_other) / hz * 1e6;
    // Frames arriving during the worst rotating burst beyond what the Rx ring holds.
    st.counters["lost_at_line_rate"] = std::max(0.0, rotating_s * kLineRatePps - kRxRing);
    st.counters["filter_MiB"] = static_cast<double>(bytes) / (1 << 20);
  }
  std::free(memory);
}

}  // namespace

void register_rotation(uint64_t w) {
  for (const char* s : {"interleaved", "interleaved-swept", "two-line", "guarded-epoch-blocked", "guarded-epoch"}) {
    // The flat guarded epoch filter probes ~16 lines a key: 2.5 W of them at
    // 16M and up would take minutes, for the same memset per rotation.
    if (std::string(s) == "guarded-epoch" && w > (uint64_t{1} << 20)) continue;
    benchmark::RegisterBenchmark(("rotation/" + std::string(s) + "/W:" + std::to_string(w)).c_str(),
                                 [s, w](benchmark::State& st) { run_rotation(st, s, w); })
        ->Iterations(1)
        ->Unit(benchmark::kMillisecond);
  }
}

}  // namespace agebloom::perf
