// agebloom-bench: our filters and DPDK's rte_member on the same keys, in one
// process. EAL is initialised before Google Benchmark parses its flags, and
// the seeds and the tick rate are printed and recorded in the JSON context.
#include <benchmark/benchmark.h>

#include <cinttypes>
#include <cstdio>
#include <string>

#include "bench_common.hpp"
#if AGEBLOOM_BENCH_DPDK
#include "rte_member_peers.hpp"
#endif

using namespace agebloom::perf;

static std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%016" PRIx64, v);
  return buf;
}

int main(int argc, char** argv) {
#if AGEBLOOM_BENCH_DPDK
  const bool peers = init_eal(argv[0]);
  if (!peers) std::fprintf(stderr, "agebloom-bench: running without the rte_member peers\n");
#endif
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;

  const double hz = tick_hz();
  std::printf("agebloom-bench: key seed %s, hash seed %s, repeat seed %s, rte_member seeds 0x%08x/0x%08x\n",
              hex(kKeySeed).c_str(), hex(kHashSeed).c_str(), hex(kRepeatSeed).c_str(), kDpdkPrimSeed,
              kDpdkSecSeed);
  std::printf("agebloom-bench: cycles_per_op are TSC ticks read around the timed operations; TSC %.4f GHz\n",
              hz / 1e9);
  std::fflush(stdout);
  benchmark::AddCustomContext("key_seed", hex(kKeySeed));
  benchmark::AddCustomContext("hash_seed", hex(kHashSeed));
  benchmark::AddCustomContext("repeat_seed", hex(kRepeatSeed));
  benchmark::AddCustomContext("tsc_ghz", std::to_string(hz / 1e9));
  benchmark::AddCustomContext("cycles_per_op", "TSC ticks around the timed operations / operations");
#if AGEBLOOM_BENCH_DPDK
  std::printf("agebloom-bench: EAL memory (rte_member peers, pipeline mbufs and filter%s): %s\n",
              eal_on_hugepages() ? ", our filters and memory floors" : "", eal_memory());
  benchmark::AddCustomContext("eal_memory", eal_memory());
#endif

  // Window by window, subject by subject: consecutive benchmarks share one
  // filled structure (see bench_common.hpp).
  for (uint64_t w : windows()) {
    register_filters(w);
    register_memory_floors(w);
    register_rotation(w);
#if AGEBLOOM_BENCH_DPDK
    if (peers) register_rte_member_peers(w);
#endif
  }
  register_rate_steps();
  register_inference();
  register_hash();
#if AGEBLOOM_BENCH_DPDK
  if (peers) register_pipeline();  // needs EAL's heap for its mempool
#endif
  // A --benchmark_filter that matches nothing ran nothing and exited 0: a
  // script could not tell it from a run (Google Benchmark says why on stderr).
  const size_t ran = benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  replace_live(nullptr, "");
#if AGEBLOOM_BENCH_DPDK
  if (peers) cleanup_eal();
#endif
  return ran ? 0 : 1;
}
