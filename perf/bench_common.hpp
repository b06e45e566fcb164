// The benchmark harness shared by our filters and the rte_member peers.
//
// What is measured, and how:
//   - A *subject* is one structure at one window W (GuardedEpochFilter flat,
//     APBF, rte_member HT cache, ...). It is created once, filled to steady
//     state (2W + W/16 fresh insertions: every segment has rotated),
//     probed for FPR and live FNR, and then kept alive while every benchmark
//     of the same (subject, W) runs; the benchmarks are registered in that
//     order so each 64M-item structure is filled only once. FPR and live FNR
//     are measured at set-up (2^20 probes each, over four rotation phases)
//     and reported as counters of every benchmark of that subject.
//   - Each benchmark iteration processes one chunk of kChunk operations.
//     Keys for insertions are generated (and, for our filters, hashed) while
//     the timer is paused; only the operations are timed. Cycles are read
//     with rdtsc around the operations alone, so cycles_per_op are *TSC*
//     cycles of wall time (constant rate; with turbo they differ from core
//     cycles). cpu_cycles_per_op is the thread's CPU time over the same
//     region times the measured TSC rate: the same unit, minus the time the
//     thread was descheduled, so it holds up better on a shared machine.
//   - Keys are 8-byte integers, key(id) = mix64(id ^ kKeySeed): a bijection,
//     so distinct ids are distinct keys and a fresh id is a key never seen.
//     Benchmark number b draws fresh ids from [b << 40, ...), so every
//     subject sees exactly the same fresh keys in the same order; negatives
//     (never inserted) have the top bit set.
//   - Repeats (the hit-ratio axis) are keys drawn uniformly from the last W
//     positions of the subject's own insertion history: live by definition.
#pragma once

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "agebloom/core/hash.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace agebloom::perf {

// Fixed seeds, printed by main() and recorded in the JSON context, so a run
// reproduces exactly.
inline constexpr uint64_t kKeySeed = 0x6167'6562'0000'0001ULL;     // key(id)
inline constexpr uint64_t kHashSeed = 0x6167'6562'0000'0002ULL;    // our Hasher
inline constexpr uint64_t kRepeatSeed = 0x6167'6562'0000'0003ULL;  // which keys repeat
inline constexpr uint32_t kDpdkPrimSeed = 0x9e37'79b9;              // rte_member's two hash seeds
inline constexpr uint32_t kDpdkSecSeed = 0x85eb'ca6b;

// Operations per benchmark iteration: large enough that pausing the timer
// once per chunk costs nothing measurable, small enough (1.5 MiB of keys and
// hashes) not to evict a 64K-item filter from L2 more than packets would.
inline constexpr size_t kChunk = size_t{1} << 16;
// Keys per bulk call: DPDK's RTE_MEMBER_LOOKUP_BULK_MAX, and the usual rx
// burst is 32 to 64 packets.
inline constexpr size_t kBurst = 64;
// Probes for the measured FPR and live FNR: at least 10^6 (enough for a 10% relative error at FPR 1e-4).
inline constexpr size_t kProbes = size_t{1} << 20;

inline constexpr uint64_t kNegativeBit = uint64_t{1} << 63;

constexpr uint64_t key_of(uint64_t id) noexcept { return mix64(id ^ kKeySeed); }

// Time stamp counter; steady_clock nanoseconds where there is none.
uint64_t ticks() noexcept;
// This thread's CPU time in nanoseconds: excludes time spent descheduled,
// which on a shared 2-CPU machine otherwise dominates the noise.
uint64_t thread_cpu_ns() noexcept;
// Ticks per second, measured once against steady_clock (main prints it).
double tick_hz();

// One chunk of operations: keys, their hashes (our filters' input), pointers
// to the key bytes (rte_member's input) and lengths (Hasher::hash_bulk's).
struct Chunk {
  std::vector<uint64_t> keys;
  std::vector<KeyHash> hashes;
  std::vector<const void*> ptrs;
  std::vector<size_t> lengths;
  size_t size = 0;

  explicit Chunk(size_t n = kChunk) : keys(n), hashes(n), ptrs(n), lengths(n, sizeof(uint64_t)) {
    for (size_t i = 0; i < n; ++i) ptrs[i] = &keys[i];
  }
  void hash_all() {
    const Hasher hash(kHashSeed);
    for (size_t i = 0; i < size; ++i) hashes[i] = hash(&keys[i], sizeof(uint64_t));
  }
};

// A subject's insertion history: the key at every one of the last W
// positions (a ring), for repeats and for the live-FNR probes.
class Stream {
 public:
  explicit Stream(uint64_t window);

  // Starts (or, when Google Benchmark runs it again with more iterations,
  // resumes) benchmark number `ordinal`: its own fresh ids and repeat draws,
  // so a re-run never replays keys it already inserted. Returns a counter of
  // the chunks this benchmark has drawn so far (salt for query samples).
  uint64_t& begin(uint64_t ordinal);
  // The next `n` insertions: fresh keys, or with probability hit_pct/100 a
  // key from the last W positions. Records them as inserted.
  void end();  // saves the running benchmark's resume point
  void next_insertions(Chunk& c, size_t n, unsigned hit_pct);
  // `n` keys uniformly from the last W positions (live keys), or `n` keys
  // never inserted (negatives), without recording anything.
  void live_sample(Chunk& c, size_t n, uint64_t salt);
  void negatives(Chunk& c, size_t n, uint64_t salt);

  uint64_t window() const noexcept { return window_; }
  uint64_t position() const noexcept { return pos_; }

 private:
  uint64_t rand() noexcept { return mix64(rng_ += 0x9e3779b97f4a7c15ULL); }

  uint64_t window_;
  std::vector<uint64_t> ring_;  // power-of-two capacity >= window_
  uint64_t mask_;
  uint64_t pos_ = 0;    // insertions so far
  uint64_t fresh_ = 0;  // next fresh id
  uint64_t rng_ = kRepeatSeed;
  struct Resume {
    uint64_t fresh, rng, chunks;
  };
  std::unordered_map<uint64_t, Resume> resume_;
  Resume* active_ = nullptr;
};

enum class Op { insert, contains, test_and_insert };
enum class Form { scalar, bulk, bulk_hashed };

// The subject concept (duck-typed; the loops are templates so our filters'
// scalar calls inline exactly as in an application):
//   explicit S(uint64_t window);
//   static constexpr const char* kName; static constexpr bool kHashesKeys;
//   void insert(const Chunk&, size_t i);        bool contains(const Chunk&, size_t i);
//   bool test_and_insert(const Chunk&, size_t i);
//   void insert_bulk(const Chunk&, size_t i, size_t n);
//   void contains_bulk(const Chunk&, size_t i, size_t n, bool* out);
//   void test_and_insert_bulk(const Chunk&, size_t i, size_t n, bool* out);
//   double bits_per_item() const;  double model_fpr() const (NaN: no model);
//   std::string describe() const;
// kHashesKeys: the subject hashes key bytes itself (rte_member), so its bulk
// figure is already end to end and it has no bulk_hashed form.

struct Accuracy {
  double fpr = 0;       // fresh negatives answered true
  double live_fnr = 0;  // keys of the last W insertions answered false
};

// One live subject at a time (the 64M ones take up to a few hundred MiB).
class Live {
 public:
  virtual ~Live() = default;
};
void replace_live(std::unique_ptr<Live> next, std::string key);
Live* current_live(const std::string& key);

template <class S>
struct Instance final : Live {
  S subject;
  Stream stream;
  Accuracy accuracy;
  explicit Instance(uint64_t w) : subject(w), stream(w) {}
};

// Inserts `n` fresh keys through the bulk path (set-up, untimed).
template <class S>
void insert_fresh(Instance<S>& in, uint64_t n) {
  Chunk c;
  for (uint64_t done = 0; done < n; done += kChunk) {
    const size_t m = static_cast<size_t>(n - done < kChunk ? n - done : kChunk);
    in.stream.next_insertions(c, m, 0);
    if constexpr (!S::kHashesKeys) c.hash_all();
    for (size_t i = 0; i < m; i += kBurst) in.subject.insert_bulk(c, i, m - i < kBurst ? m - i : kBurst);
  }
}

// `probes` live keys and `probes` negatives through contains_bulk; adds the
// true answers to *live_true and *negative_true.
template <class S>
void probe(Instance<S>& in, size_t probes, uint64_t salt, uint64_t* live_true, uint64_t* negative_true) {
  Chunk c;
  bool out[kBurst];
  for (size_t done = 0; done < probes; done += kChunk) {
    for (int negative = 0; negative < 2; ++negative) {
      if (negative) in.stream.negatives(c, kChunk, salt + done);
      else in.stream.live_sample(c, kChunk, salt + done);
      if constexpr (!S::kHashesKeys) c.hash_all();
      uint64_t yes = 0;
      for (size_t i = 0; i < kChunk; i += kBurst) {
        in.subject.contains_bulk(c, i, kBurst, out);
        for (size_t j = 0; j < kBurst; ++j) yes += out[j];
      }
      *(negative ? negative_true : live_true) += yes;
    }
  }
}

// The subject of type S at window w, filled and measured; reused while
// consecutive benchmarks ask for the same one.
//
// Accuracy depends on where in its rotation cycle a structure stands (the
// vBF pair remembers all W keys just before a reset and only W/2 just after;
// a guarded epoch filter's FP peaks as an epoch ends), so the probes are
// split over four points W/8 insertions apart, at W/16 + j·W/8 past 2W: the
// midpoints of a W/2 cycle, which is the longest any subject here has.
template <class S>
Instance<S>& instance(uint64_t w) {
  const std::string key = std::string(S::kName) + "/" + std::to_string(w);
  if (Live* l = current_live(key)) return *static_cast<Instance<S>*>(l);
  replace_live(nullptr, "");  // free the previous subject before allocating
  auto in = std::make_unique<Instance<S>>(w);
  in->stream.begin(0);
  insert_fresh(*in, 2 * w + w / 16);
  constexpr int kPhases = 4;
  uint64_t live_true = 0, negative_true = 0;
  for (int j = 0; j < kPhases; ++j) {
    if (j) insert_fresh(*in, w / 8);
    probe(*in, kProbes / kPhases, uint64_t{1} << 32 | static_cast<uint64_t>(j) << 24, &live_true, &negative_true);
  }
  in->stream.end();
  in->accuracy.live_fnr = 1.0 - static_cast<double>(live_true) / kProbes;
  in->accuracy.fpr = static_cast<double>(negative_true) / kProbes;
  Instance<S>& ref = *in;
  replace_live(std::move(in), key);
  return ref;
}

// Runs one chunk of `op` in `form`; returns how many verdicts were true.
template <class S>
size_t run_chunk(S& s, Op op, Form form, const Chunk& c, bool* out) {
  const size_t n = c.size;
  size_t yes = 0;
  if (form == Form::scalar) {
    switch (op) {
      case Op::insert:
        for (size_t i = 0; i < n; ++i) s.insert(c, i);
        return 0;
      case Op::contains:
        for (size_t i = 0; i < n; ++i) yes += s.contains(c, i);
        return yes;
      case Op::test_and_insert:
        for (size_t i = 0; i < n; ++i) yes += s.test_and_insert(c, i);
        return yes;
    }
  }
  for (size_t i = 0; i < n; i += kBurst) {
    const size_t m = n - i < kBurst ? n - i : kBurst;
    switch (op) {
      case Op::insert: s.insert_bulk(c, i, m); break;
      case Op::contains: s.contains_bulk(c, i, m, out + i); break;
      case Op::test_and_insert:
        if constexpr (!S::kHashesKeys) {
          if (form == Form::bulk_hashed) {
            s.test_and_insert_bulk_hashed(c, i, m, out + i);
            break;
          }
        }
        s.test_and_insert_bulk(c, i, m, out + i);
        break;
    }
  }
  if (op == Op::insert) return 0;
  for (size_t i = 0; i < n; ++i) yes += out[i];  // vectorised: ~0.1 cycle/op, inside the timer
  return yes;
}

struct Spec {
  Op op;
  Form form;
  uint64_t window;
  unsigned hit_pct;  // insert-type ops: share of repeats; contains: 100 = live keys, 0 = negatives
  uint64_t ordinal;  // this benchmark's number: its fresh-id range
};

template <class S>
void run_benchmark(benchmark::State& st, Spec spec) {
  Instance<S>& in = instance<S>(spec.window);
  Chunk c;
  std::unique_ptr<bool[]> out(new bool[kChunk]);
  uint64_t& chunk_no = in.stream.begin(spec.ordinal);
  const bool hashed_inside = spec.form == Form::bulk_hashed || S::kHashesKeys;
  uint64_t cycles = 0, cpu_ns = 0, items = 0, yes = 0;
  for (auto _ : st) {
    st.PauseTiming();
    if (spec.op == Op::contains) {
      // The filter does not change: a fresh sample each chunk keeps the
      // probes from being cache-resident across iterations.
      if (spec.hit_pct == 100) in.stream.live_sample(c, kChunk, spec.ordinal << 32 | chunk_no);
      else in.stream.negatives(c, kChunk, spec.ordinal << 32 | chunk_no);
    } else {
      in.stream.next_insertions(c, kChunk, spec.hit_pct);
    }
    if (!hashed_inside) c.hash_all();
    ++chunk_no;
    st.ResumeTiming();
    const uint64_t c0 = thread_cpu_ns();
    const uint64_t t0 = ticks();
    yes += run_chunk(in.subject, spec.op, spec.form, c, out.get());
    cycles += ticks() - t0;
    cpu_ns += thread_cpu_ns() - c0;
    items += c.size;
  }
  in.stream.end();
  // `yes` is used below, so nothing needs benchmark::DoNotOptimize: Google
  // Benchmark 1.7's DoNotOptimize(T&) ("+m,r") made GCC 12 report a wrong
  // count here (tests/perf/bench_counters.py).
  st.SetItemsProcessed(static_cast<int64_t>(items));
  st.counters["cycles_per_op"] = items ? static_cast<double>(cycles) / items : 0.0;
  st.counters["cpu_cycles_per_op"] = items ? static_cast<double>(cpu_ns) * tick_hz() / 1e9 / items : 0.0;
  st.counters["bits_per_item"] = in.subject.bits_per_item();
  st.counters["fpr"] = in.accuracy.fpr;
  st.counters["live_fnr"] = in.accuracy.live_fnr;
  st.counters["model_fpr"] = in.subject.model_fpr();
  if (spec.op != Op::insert) st.counters["true_rate"] = items ? static_cast<double>(yes) / items : 0.0;
  st.SetLabel(in.subject.describe());
}

// Registers every operation of subject S at every window, in the order that
// lets consecutive benchmarks share one filled instance.
std::vector<uint64_t> windows();
uint64_t next_ordinal();
std::string bench_name(const char* subject, Op op, Form form, uint64_t w, unsigned hit);

template <class S>
void register_subject(uint64_t w) {
  struct Case { Op op; Form form; unsigned hit; };
  const Case cases[] = {
      {Op::insert, Form::scalar, 0},          {Op::insert, Form::bulk, 0},
      {Op::contains, Form::scalar, 100},      {Op::contains, Form::bulk, 100},
      {Op::contains, Form::scalar, 0},        {Op::contains, Form::bulk, 0},
      {Op::test_and_insert, Form::scalar, 0}, {Op::test_and_insert, Form::bulk, 0},
      {Op::test_and_insert, Form::bulk, 50},  {Op::test_and_insert, Form::bulk_hashed, 0},
  };
  for (const Case& k : cases) {
    if (k.form == Form::bulk_hashed && S::kHashesKeys) continue;  // its bulk already hashes
    const Spec spec{k.op, k.form, w, k.hit, next_ordinal()};
    benchmark::RegisterBenchmark(bench_name(S::kName, k.op, k.form, w, k.hit).c_str(),
                                 [spec](benchmark::State& st) { run_benchmark<S>(st, spec); })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
}

// Registration hooks, called by main() once per window in this order.
void register_filters(uint64_t w);
// What touching a layout's lines costs with nothing else done: the one-line
// and two-line layouts' memory floors (perf/memory_floor_bench.cpp).
void register_memory_floors(uint64_t w);
// The time-limited filter under rate steps (perf/rate_step_bench.cpp).
void register_rate_steps();
void register_rotation(uint64_t w);  // rotation_bench.cpp
void register_inference();  // inference_bench.cpp
void register_hash();       // hash_bench.cpp
#if AGEBLOOM_BENCH_DPDK
void register_rte_member_peers(uint64_t w);
// dedup_fwd's burst code over mbufs in memory beside testpmd's 5tswap work
// (pipeline_bench.cpp); once, after the windows.
void register_pipeline();
#endif

}  // namespace agebloom::perf
