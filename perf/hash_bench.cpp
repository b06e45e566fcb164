// Hasher::hash_bulk over bursts of short keys, with its AVX-512 body and
// with the scalar routine, in one process: what the bulk_hashed figures'
// hashing costs, and what the eight-at-a-time body buys. Names:
// hash/bulk/len:<bytes>/isa:<avx512|scalar>; cycles_per_op is per key. The
// isa:avx512 cases say "scalar (no AVX-512DQ)" in their label on CPUs that
// lack it, where both run the same code.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "bench_common.hpp"

namespace agebloom::perf {
namespace {

void run_hash_bulk(benchmark::State& st, size_t len, bool avx512) {
  Hasher hash(kHashSeed);
  hash.use_avx512(avx512);
  // kChunk keys laid end to end, as a parser's key buffer would hold them.
  std::vector<uint8_t> bytes(kChunk * len);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(key_of(i));
  std::vector<const void*> ptrs(kChunk);
  std::vector<size_t> lengths(kChunk, len);
  for (size_t i = 0; i < kChunk; ++i) ptrs[i] = &bytes[i * len];
  std::vector<KeyHash> out(kChunk);
  uint64_t cycles = 0, keys = 0;
  for (auto _ : st) {
    const uint64_t t0 = ticks();
    for (size_t i = 0; i < kChunk; i += kBurst) hash.hash_bulk(&ptrs[i], &lengths[i], kBurst, &out[i]);
    cycles += ticks() - t0;
    keys += kChunk;
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  st.SetItemsProcessed(static_cast<int64_t>(keys));
  st.counters["cycles_per_op"] = keys ? static_cast<double>(cycles) / static_cast<double>(keys) : 0.0;
  st.SetLabel(hash.uses_avx512() ? "avx512" : avx512 ? "scalar (no AVX-512DQ)" : "scalar");
}

}  // namespace

void register_hash() {
  static_assert(kChunk % kBurst == 0, "whole bursts");
  for (const size_t len : {size_t{4}, size_t{5}, size_t{8}, size_t{13}, size_t{16}, size_t{32}})
    for (const bool avx512 : {true, false})
      benchmark::RegisterBenchmark(
          ("hash/bulk/len:" + std::to_string(len) + "/isa:" + (avx512 ? "avx512" : "scalar")).c_str(),
          [len, avx512](benchmark::State& st) { run_hash_bulk(st, len, avx512); });
}

}  // namespace agebloom::perf
