// Hasher::hash_bulk over bursts of short keys, with each of its bodies, in
// one process: what the bulk_hashed figures' hashing costs, and what the
// eight- and four-at-a-time bodies buy. Names:
// hash/bulk/len:<bytes>/isa:<avx512|avx2|scalar>; cycles_per_op is per key.
// The label names the body that ran: a case asks for the widest body it may
// use, and a CPU without it runs the next narrower one.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "bench_common.hpp"

namespace agebloom::perf {
namespace {

void run_hash_bulk(benchmark::State& st, size_t len, Isa widest) {
  Hasher hash(kHashSeed);
  hash.use_isa(widest);
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
  st.SetLabel(hash.isa() == Isa::baseline ? "scalar" : isa_name(hash.isa()));
}

}  // namespace

void register_hash() {
  static_assert(kChunk % kBurst == 0, "whole bursts");
  for (const size_t len : {size_t{4}, size_t{5}, size_t{8}, size_t{13}, size_t{16}, size_t{32}})
    for (const Isa isa : {Isa::avx512, Isa::avx2, Isa::baseline})
      benchmark::RegisterBenchmark(
          ("hash/bulk/len:" + std::to_string(len) + "/isa:" + (isa == Isa::baseline ? "scalar" : isa_name(isa))).c_str(),
          [len, isa](benchmark::State& st) { run_hash_bulk(st, len, isa); });
}

}  // namespace agebloom::perf
