// The inferential query (Dautrich & Ravishankar, Sec. 4.4): what a
// penalty-aware decision costs beside the Block Timing filter's own yes/no,
// on the same filter and the same keys.
//
//   inference/btbf/contains/W:w         the standard query (k timer reads)
//   inference/btbf/observe/W:w          λ_x, c_x, r_x (the same reads, plus the bookkeeping)
//   inference/btbf/decide/W:w           observe + posterior (Theorems 2-5) + Sec. 2.6's decision,
//                                       with a per-query prior and per-query penalties
//
// Keys: half live (inserted within the window), half never inserted, in a
// fixed shuffled order; cycles_per_op are TSC ticks around the operations.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "agebloom/agebloom.hpp"
#include "bench_common.hpp"

namespace agebloom::perf {

namespace {

enum class Query { contains, observe, decide };

void run_inference(benchmark::State& st, Query q, uint64_t w) {
  auto cfg = BlockTimingConfig::for_fpr(Window::count(w), 0.01);
  auto need = cfg ? BlockTimingFilter::bytes_needed(*cfg) : Expected<size_t>(cfg.error());
  if (!cfg || !need) {
    st.SkipWithError("btbf: cannot size");
    return;
  }
  void* memory = std::aligned_alloc(64, (*need + 63) / 64 * 64);
  Arena arena(memory, *need);
  auto f = BlockTimingFilter::create(*cfg, arena);
  auto post = inference::BlockTimingPosterior::make(*cfg);
  const Hasher hash(kHashSeed);
  std::vector<KeyHash> keys(kChunk);
  std::vector<float> fp(kChunk), fn(kChunk), prior(kChunk);
  std::mt19937_64 rng(kRepeatSeed);
  for (uint64_t i = 0; i < 2 * w; ++i) f->insert(hash(&i, sizeof i));
  for (size_t i = 0; i < kChunk; ++i) {
    const uint64_t id = i % 2 ? w + rng() % w : (uint64_t{1} << 63) + i;  // live (the last w) or never inserted
    keys[i] = hash(&id, sizeof id);
    fp[i] = 1.0f + static_cast<float>(rng() % 900) / 100.0f;
    fn[i] = 1.0f + static_cast<float>(rng() % 900) / 100.0f;
    prior[i] = static_cast<float>(inference::neutral_prior(w) * (0.5 + static_cast<double>(rng() % 100) / 100.0));
  }
  uint64_t cycles = 0, items = 0, yes = 0;
  for (auto _ : st) {
    const uint64_t t0 = ticks();
    switch (q) {
      case Query::contains:
        for (size_t i = 0; i < kChunk; ++i) yes += f->contains(keys[i]);
        break;
      case Query::observe:
        for (size_t i = 0; i < kChunk; ++i) yes += f->observe(keys[i]).oldest;
        break;
      case Query::decide:
        for (size_t i = 0; i < kChunk; ++i) {
          const double p = post->posterior(f->observe(keys[i]), prior[i]);
          yes += inference::decide(p, {fp[i], fn[i]}).seen;
        }
        break;
    }
    cycles += ticks() - t0;
    items += kChunk;
  }
  st.SetItemsProcessed(static_cast<int64_t>(items));
  st.counters["cycles_per_op"] = items ? static_cast<double>(cycles) / static_cast<double>(items) : 0.0;
  st.counters["bits_per_item"] = cfg->bits_per_item();
  st.counters["true_rate"] = items ? static_cast<double>(yes) / static_cast<double>(items) : 0.0;
  st.SetLabel("k=" + std::to_string(cfg->k) + " bpt=" + std::to_string(cfg->bpt) + " B=" + std::to_string(cfg->block));
  std::free(memory);
}

}  // namespace

void register_inference() {
  for (uint64_t w : {uint64_t{1} << 16, uint64_t{1} << 20})
    for (auto [q, name] : {std::pair{Query::contains, "contains"}, std::pair{Query::observe, "observe"},
                           std::pair{Query::decide, "decide"}})
      benchmark::RegisterBenchmark(("inference/btbf/" + std::string(name) + "/W:" + std::to_string(w)).c_str(),
                                   [q = q, w](benchmark::State& st) { run_inference(st, q, w); });
}

}  // namespace agebloom::perf
