// Hasher::hash_bulk over bursts of keys, with each of its short-key bodies,
// and libxxhash's XXH3-128 beside them, in one process: what the bulk_hashed
// figures' hashing costs, and what the AES rounds buy over XXH3. Names:
// hash/bulk/len:<bytes>/body:<vaes|aes|portable|xxh3>; cycles_per_op is per
// key. The label names the body that ran: a case asks for the widest body it
// may use, and a CPU without it runs the next narrower one. Keys over 16
// bytes are XXH3-128's in every body (hash.hpp).
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "bench_common.hpp"

namespace agebloom::perf {
namespace {

using Body = Hasher::Body;

// kChunk keys laid end to end, as a parser's key buffer would hold them.
struct Keys {
  std::vector<uint8_t> bytes;
  std::vector<const void*> ptrs;
  std::vector<size_t> lengths;
  explicit Keys(size_t len) : bytes(kChunk * len), ptrs(kChunk), lengths(kChunk, len) {
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(key_of(i));
    for (size_t i = 0; i < kChunk; ++i) ptrs[i] = &bytes[i * len];
  }
};

// Times hash(i, out) over every burst of kChunk keys: cycles per key.
template <class HashBurst>
void time_bursts(benchmark::State& st, HashBurst hash) {
  std::vector<KeyHash> out(kChunk);
  uint64_t cycles = 0, keys = 0;
  for (auto _ : st) {
    const uint64_t t0 = ticks();
    for (size_t i = 0; i < kChunk; i += kBurst) hash(i, &out[i]);
    cycles += ticks() - t0;
    keys += kChunk;
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  st.SetItemsProcessed(static_cast<int64_t>(keys));
  st.counters["cycles_per_op"] = keys ? static_cast<double>(cycles) / static_cast<double>(keys) : 0.0;
}

void run_hash_bulk(benchmark::State& st, size_t len, Body widest) {
  Hasher hash(kHashSeed);
  hash.use_body(widest);
  const Keys k(len);
  time_bursts(st, [&](size_t i, KeyHash* out) { hash.hash_bulk(&k.ptrs[i], &k.lengths[i], kBurst, out); });
  st.SetLabel(short_key_hash::body_name(hash.body()));
}

// XXH3-128 under the same seed, key by key: the hash keys of every length
// took before the AES rounds.
[[gnu::noinline]] void run_xxh3(benchmark::State& st, size_t len) {
  const Keys k(len);
  time_bursts(st, [&](size_t i, KeyHash* out) {
    for (size_t j = 0; j < kBurst; ++j) {
      // The length read at run time, as hash_bulk reads it (a constant
      // would let the compiler specialise XXH3 for it).
      const XXH128_hash_t r = XXH3_128bits_withSeed(k.ptrs[i + j], k.lengths[i + j], kHashSeed);
      out[j] = KeyHash{r.low64, r.high64};
    }
  });
  st.SetLabel("xxh3");
}

}  // namespace

void register_hash() {
  static_assert(kChunk % kBurst == 0, "whole bursts");
  for (const size_t len : {size_t{4}, size_t{5}, size_t{8}, size_t{13}, size_t{14}, size_t{16}, size_t{32}}) {
    const std::string name = "hash/bulk/len:" + std::to_string(len) + "/body:";
    for (const Body body : {Body::vaes, Body::aes, Body::portable})
      benchmark::RegisterBenchmark((name + short_key_hash::body_name(body)).c_str(),
                                   [len, body](benchmark::State& st) { run_hash_bulk(st, len, body); });
    benchmark::RegisterBenchmark((name + "xxh3").c_str(), [len](benchmark::State& st) { run_xxh3(st, len); });
  }
}

}  // namespace agebloom::perf
