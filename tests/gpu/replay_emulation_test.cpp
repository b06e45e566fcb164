// The GPU's exact replay, run on the CPU: the batch planner and the three
// per-packet steps the kernels execute (gpu/portable/epoch_plan.hpp,
// gpu/portable/replay_steps.hpp), compiled by the host compiler and executed pass by
// pass with the packets of each pass in a scrambled order (a GPU runs them in
// any order, all at once), against the CPU filters' sequential
// test_and_insert. Needs no device, so it runs everywhere: the algorithm and
// the layouts' addressing are checked here; tests/gpu/gpu_replay_test.cpp
// checks the CUDA build of the same code on a device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "../core/owned_filter.hpp"
#include "cpu_reference.hpp"
#include "agebloom/agebloom.hpp"
#include "portable/apbf_replay.hpp"
#include "portable/epoch_plan.hpp"
#include "portable/line_replay.hpp"
#include "portable/replay_steps.hpp"

namespace {

using namespace agebloom;
using agebloom::gpu::BatchPlan;
using agebloom::gpu::EpochShape;
using agebloom::gpu::EpochState;

// A dedup-like stream: fresh keys, repeats from inside the window, and
// repeats from up to 4W back (mostly expired). flood: a quarter of the
// packets are one key instead (one source flooding a trace).
std::vector<KeyHash> stream(size_t n, uint64_t window, uint64_t seed, bool flood = false) {
  std::vector<KeyHash> out(n);
  const Hasher hasher(seed);
  std::mt19937_64 rng(seed);
  for (size_t i = 0; i < n; ++i) {
    uint64_t id = i;
    const uint64_t r = rng() % 4;
    if (i > 0 && r == 1) id = i - 1 - rng() % std::min<uint64_t>(i, window);
    if (i > 0 && r == 2) id = i - 1 - rng() % std::min<uint64_t>(i, 4 * window);
    if (flood && r == 3) id = ~uint64_t{0};
    out[i] = hasher(&id, sizeof id);
  }
  return out;
}

// The CPU reference: the filter's sequential verdicts (cpu_reference.hpp).
// Checks that the stream exercises both verdicts.
template <class Filter>
std::vector<char> cpu_verdicts(Filter& f, const std::vector<KeyHash>& keys, const uint64_t* now, bool on_miss) {
  std::vector<char> want(keys.size());
  size_t hits = 0;
  for (size_t i = 0; i < keys.size(); ++i)
    hits += want[i] = gpu_test::cpu_decide(f, keys[i], now != nullptr ? now + i : nullptr, on_miss);
  EXPECT_GT(hits, keys.size() / 8) << "the stream must exercise both verdicts";
  EXPECT_LT(hits, keys.size() - keys.size() / 8);
  return want;
}

// The device's memory, on the host: the arena image and the first-setter
// arrays. by_line: the one-line layout's verdicts line by line
// (line_replay.hpp) instead of by first setters.
struct Emulated {
  EpochShape shape;
  std::vector<unsigned char> memory;
  unsigned char* image = nullptr;
  EpochState state;
  uint64_t epoch_insertions = 0;  // the swept layout's: when the current epoch began
  std::vector<uint32_t> first;
  uint64_t batches = 0;
  bool by_line = false;
  std::vector<uint8_t> touched;  // by_line: one mark per line

  Emulated(const EpochShape& s, bool line)
      : shape(s), memory(s.bytes + 64, 0), by_line(line), touched(line ? s.ref.segment_words : 0, 0) {
    image = memory.data() + (64 - reinterpret_cast<uintptr_t>(memory.data()) % 64) % 64;
    state = shape.initial_state();
    first.assign(size_t{shape.segments} * shape.segment_bits(), gpu::kUnset);
  }

  // What the device's download() leaves in the image: the header, and for
  // the swept layout the spare's lines its sweep has cleared by now.
  void download() {
    if (!shape.swept) {
      std::memcpy(image, &state, sizeof state);
      return;
    }
    const SweptRingHeader h = gpu::swept_header(shape, state, epoch_insertions);
    shape.at(image).clear_lane_lines(gpu::spare_slot(shape, state), 0, h.swept);
    std::memcpy(image, &h, sizeof h);
  }

  // The device's line pass: packets keyed by line and sorted stably (the
  // device's radix sort is stable too), then each line's run replayed, runs
  // in a random order. seen[i]: packet i's verdict.
  static inline uint64_t long_runs = 0;  // runs replayed as the device's warps replay them, over all passes

  static void line_pass(const gpu::GuardedEpochRef& f, const BatchPlan& p, const KeyHash* k, const uint32_t* skip,
                        uint64_t skip_base, std::vector<uint8_t>& seen, std::mt19937_64& rng,
                        gpu::LineWriteBack wb = {}) {
    std::vector<uint32_t> idx(p.count);
    std::iota(idx.begin(), idx.end(), 0u);
    std::stable_sort(idx.begin(), idx.end(),
                     [&](uint32_t a, uint32_t b) { return gpu::line_key(f, k, a) < gpu::line_key(f, k, b); });
    std::vector<uint32_t> sorted(p.count);  // the sort's keys, as the device keeps them
    for (uint32_t j = 0; j < p.count; ++j) sorted[j] = gpu::line_key(f, k, idx[j]);
    std::vector<std::pair<uint32_t, uint32_t>> runs;  // start, length
    for (uint32_t at = 0; at < idx.size();) {
      uint32_t end = at + 1;
      while (end < idx.size() && sorted[end] == sorted[at]) ++end;
      runs.emplace_back(at, end - at);
      at = end;
    }
    std::shuffle(runs.begin(), runs.end(), rng);
    seen.assign(p.count, 2);
    for (auto [at, len] : runs) {
      // As the device splits them: long runs by a warp's chunks, the rest by one thread.
      if (len >= gpu::kLongRun) {
        gpu::replay_long_run_emulated(f, p, k, sorted.data(), idx.data(), at, skip, skip_base, seen.data(), wb);
        ++long_runs;
      } else {
        gpu::replay_line(f, p, k, idx.data() + at, len, skip, skip_base, seen.data(), wb);
      }
    }
    EXPECT_TRUE(std::none_of(seen.begin(), seen.end(), [](uint8_t v) { return v == 2; })) << "a packet without verdict";
  }

  // One call of the device's run_batches over keys[0..n) (time windows: at
  // clocks now[0..n)): verdicts into out (nullptr: a bulk insert), batches of
  // at most max_epochs epochs, every pass in its own random order.
  void run(const KeyHash* keys, const uint64_t* now, size_t n, std::vector<char>* out, uint32_t max_epochs,
           std::mt19937_64& rng) {
    const gpu::GuardedEpochRef f = shape.at(image);
    const uint64_t fbits = shape.segment_bits();
    for (uint64_t done = 0; done < n; ++batches) {
      const uint64_t before = state.insertions;
      const BatchPlan p = gpu::plan_for(shape, state, now != nullptr ? now + done : nullptr, nullptr, 0, n - done,
                                        max_epochs);
      gpu::note_epoch_start(p, before, epoch_insertions);
      ASSERT_GT(p.count, 0u);
      ASSERT_LE(p.epochs, std::min(max_epochs, shape.live));
      const KeyHash* k = keys + done;
      std::vector<uint64_t> order(p.count);
      std::iota(order.begin(), order.end(), 0);
      auto scramble = [&] { std::shuffle(order.begin(), order.end(), rng); };
      uint32_t* F = out != nullptr && !by_line ? first.data() : nullptr;
      if (out != nullptr && by_line) {
        // Verdicts and each touched line's final state in one pass, then the
        // clears on the lines nobody touched (in a random order too).
        const uint64_t cleared = p.cleared_slots(shape.segments);
        std::vector<uint8_t> seen;
        line_pass(f, p, k, nullptr, 0, seen, rng, {cleared, touched.data()});
        for (uint64_t i = 0; i < p.count; ++i) (*out)[done + i] = static_cast<char>(seen[i]);
        if (cleared != 0) {
          std::vector<uint64_t> lines(f.segment_words);
          std::iota(lines.begin(), lines.end(), 0);
          std::shuffle(lines.begin(), lines.end(), rng);
          for (uint64_t w : lines) gpu::clear_untouched(f, w, cleared, touched.data());
        }
        EXPECT_TRUE(std::all_of(touched.begin(), touched.end(), [](uint8_t t) { return t == 0; }))
            << "every mark reset";
        done += p.count;
        continue;
      }
      if (out != nullptr) {
        scramble();
        for (uint64_t i : order) gpu::stamp_first_setter(f, p, k, F, fbits, i);
        scramble();
        for (uint64_t i : order) (*out)[done + i] = gpu::replay_verdict(f, p, k, F, fbits, i);
      }
      for (uint32_t s = 0; s < shape.segments; ++s)
        if (p.keep_end[s] != BatchPlan::kNever)
          for (uint64_t w = 0; w < f.segment_words; ++w) *f.word(s, w) = 0;
      scramble();
      for (uint64_t i : order) gpu::insert_and_unstamp(f, p, k, F, fbits, i);
      done += p.count;
    }
  }

  // The same under insert-on-miss: per batch, rounds of stamp, verdict and
  // unstamp with the inserts the previous round's verdicts imply (the first
  // round: every packet inserts), until no verdict changes; then clear and
  // insert once. Returns the most rounds a batch took.
  uint32_t run_on_miss(const KeyHash* keys, const uint64_t* now, size_t n, std::vector<char>& out,
                       uint32_t max_epochs, std::mt19937_64& rng) {
    const gpu::GuardedEpochRef f = shape.at(image);
    const uint64_t fbits = shape.segment_bits();
    std::vector<uint32_t> seen((n + 31) / 32, 0);  // the verdict bits: the guess, then the answer
    uint32_t most = 0;
    for (uint64_t done = 0; done < n; ++batches) {
      EpochState st;
      BatchPlan p;
      uint32_t rounds = 0;
      for (bool changed = true; changed; ++rounds) {
        EXPECT_LT(rounds, 1000u) << "no fixed point";
        if (rounds >= 1000) return rounds;
        st = state;
        p = gpu::plan_for(shape, st, now != nullptr ? now + done : nullptr, seen.data(), done, n - done,
                          max_epochs);
        const KeyHash* k = keys + done;
        std::vector<uint64_t> order(p.count);
        std::iota(order.begin(), order.end(), 0);
        std::vector<char> v(p.count);
        if (by_line) {
          std::vector<uint8_t> line_seen;
          line_pass(f, p, k, seen.data(), done, line_seen, rng);
          std::copy(line_seen.begin(), line_seen.end(), v.begin());
        } else {
          std::shuffle(order.begin(), order.end(), rng);
          for (uint64_t i : order) gpu::stamp_first_setter(f, p, k, first.data(), fbits, i, seen.data(), done);
          std::shuffle(order.begin(), order.end(), rng);
          for (uint64_t i : order) v[i] = gpu::replay_verdict(f, p, k, first.data(), fbits, i);
          std::shuffle(order.begin(), order.end(), rng);
          for (uint64_t i : order)
            gpu::insert_and_unstamp(f, p, k, first.data(), fbits, i, seen.data(), done, /*insert=*/false);
        }
        changed = false;
        for (uint64_t i = 0; i < p.count; ++i) {
          const uint64_t at = done + i;
          const bool was = (seen[at / 32] >> (at % 32)) & 1u;
          if (was != static_cast<bool>(v[i])) {
            seen[at / 32] ^= 1u << (at % 32);
            changed = true;
          }
        }
      }
      most = std::max(most, rounds);
      for (uint32_t s = 0; s < shape.segments; ++s)
        if (p.keep_end[s] != BatchPlan::kNever)
          for (uint64_t w = 0; w < f.segment_words; ++w) *f.word(s, w) = 0;
      for (uint64_t i = 0; i < p.count; ++i)
        gpu::insert_and_unstamp(f, p, keys + done, nullptr, fbits, i, seen.data(), done);
      gpu::note_epoch_start(p, state.insertions, epoch_insertions);
      state = st;
      done += p.count;
    }
    for (size_t i = 0; i < n; ++i) out[i] = (seen[i / 32] >> (i % 32)) & 1u;
    return most;
  }
};

// The swept layout's header fields in two images (the GPU's, the CPU's).
void expect_same_sweep(const unsigned char* gpu_image, const unsigned char* cpu_image) {
  SweptRingHeader g, c;
  std::memcpy(&g, gpu_image, sizeof g);
  std::memcpy(&c, cpu_image, sizeof c);
  EXPECT_EQ(g.swept, c.swept) << "spare lines swept";
  EXPECT_EQ(g.epoch_insertions, c.epoch_insertions) << "insertions when the epoch began";
  EXPECT_EQ(g.schedule.fill, c.schedule.fill);
  EXPECT_EQ(g.schedule.epoch_start, c.schedule.epoch_start);
}

// The emulated replay against the CPU filter: verdicts, the final state, and
// contains() on the final bits; over whole-stream calls and chunked calls, with
// batches of every epoch count the device may choose.
// Time windows (times non-empty): the CPU advances to each packet's clock
// before its test_and_insert, as dedup_fwd and agebloom-replay do.
template <class Filter, class Config>
void check_replay(const Config& cfg, size_t n, uint64_t window, const std::string& what,
                  const std::vector<uint64_t>& times = {}, bool on_miss = false, bool flood = false) {
  SCOPED_TRACE(what);
  auto shape = gpu::shape_of(cfg);
  ASSERT_TRUE(shape) << shape.what();
  const std::vector<KeyHash> keys = stream(n, window, 0xE1u + n, flood);
  const uint64_t* now = times.empty() ? nullptr : times.data();

  OwnedFilter<Filter> cpu(cfg);
  // What a 64-aligned arena carves: the header, then the words (the arena
  // rounds each carve to a line; bytes_needed adds room to align any base).
  const size_t at = shape->words_offset;  // where the words begin
  const size_t used = at + shape->words_bytes();
  ASSERT_EQ(cpu.used, (used + 63) / 64 * 64) << "the shape's layout is the filter's";
  ASSERT_LE(used, shape->bytes);
  const std::vector<char> want = cpu_verdicts(cpu.filter, keys, now, on_miss);
  ASSERT_FALSE(::testing::Test::HasFailure());

  std::mt19937_64 rng(7);
  const bool lanes = shape->ref.layout == gpu::SegmentLayout::lanes;
  for (bool by_line : {false, true}) {
   if (by_line && !lanes) continue;
   for (uint32_t max_epochs : {shape->segments, 2u, 1u}) {
    for (size_t chunk : {n, size_t{4096}, size_t{777}}) {
      SCOPED_TRACE(std::string(by_line ? "by line" : "first setters") + ", max_epochs " +
                   std::to_string(max_epochs) + ", chunk " + std::to_string(chunk));
      Emulated gpu(*shape, by_line);
      std::vector<char> got(n);
      uint32_t rounds = 0;
      for (size_t at = 0; at < n; at += chunk) {
        std::vector<char> part(std::min(chunk, n - at));
        const uint64_t* t = now != nullptr ? now + at : nullptr;
        if (on_miss) rounds = std::max(rounds, gpu.run_on_miss(keys.data() + at, t, part.size(), part, max_epochs, rng));
        else gpu.run(keys.data() + at, t, part.size(), &part, max_epochs, rng);
        std::copy(part.begin(), part.end(), got.begin() + static_cast<std::ptrdiff_t>(at));
      }
      if (on_miss) std::printf("%s, max_epochs %u, chunk %zu: at most %u rounds per batch\n", what.c_str(),
                               max_epochs, chunk, rounds);
      for (size_t i = 0; i < n; ++i) ASSERT_EQ(got[i], want[i]) << "packet " << i;
      if (now == nullptr) {
        EXPECT_GT(gpu.batches, n / shape->epoch_length / max_epochs / 2);
      }
      // The state a download() hands back: header, then the words.
      gpu.download();
      const std::vector<unsigned char> cpu_state = cpu.state();
      EXPECT_EQ(gpu.state.insertions, cpu->insertions());
      EXPECT_EQ(gpu.state.current, cpu->current_segment());
      if (shape->swept) expect_same_sweep(gpu.image, cpu_state.data());
      ASSERT_EQ(std::memcmp(gpu.image + at, cpu_state.data() + at, used - at), 0) << "filter words differ";
      EXPECT_TRUE(std::all_of(gpu.first.begin(), gpu.first.end(), [](uint32_t v) { return v == gpu::kUnset; }))
          << "first-setter stamps must all be returned";
      gpu::GuardedEpochRef f = shape->at(gpu.image);
      if (shape->swept) f.spare = gpu::spare_slot(*shape, gpu.state);  // as the device's bulk query sets it
      for (uint64_t id = 0; id < 2000; ++id) {
        const KeyHash h = id % 2 ? keys[(id * 7919) % n] : Hasher(3)(&id, sizeof id);
        ASSERT_EQ(f.contains(h), cpu->contains(h)) << "key " << id;
      }
    }
   }
  }

  if (on_miss) return;
  // Bulk insert (no verdicts): the same state as the CPU's inserts.
  OwnedFilter<Filter> cpu_ins(cfg);
  for (size_t i = 0; i < n; ++i) {
    if (now != nullptr) {
      ASSERT_TRUE(cpu_ins->advance(now[i]).ok());
    }
    cpu_ins->insert(keys[i]);
  }
  Emulated ins(*shape, false);
  ins.run(keys.data(), now, n, nullptr, shape->segments, rng);
  ins.download();
  const std::vector<unsigned char> s = cpu_ins.state();
  if (shape->swept) expect_same_sweep(ins.image, s.data());
  EXPECT_EQ(std::memcmp(ins.image + at, s.data() + at, used - at), 0);
}

TEST(GpuReplayEmulation, GuardedEpochFlat) {
  for (uint64_t w : {1000u, 5000u}) {
    auto c = GuardedEpochConfig::for_fpr(Window::count(w), 0.01, {.r = 4});
    ASSERT_TRUE(c);
    check_replay<GuardedEpochFilter>(*c, 60000, w, "flat r=4 W=" + std::to_string(w));
  }
}

TEST(GpuReplayEmulation, GuardedEpochBlocked) {
  for (uint32_t block : {64u, 512u}) {
    auto c = GuardedEpochConfig::for_fpr(Window::count(3000), 0.01, {.r = 8, .block_bits = block});
    ASSERT_TRUE(c) << c.what();
    check_replay<GuardedEpochFilter>(*c, 60000, 3000, "blocked B=" + std::to_string(block));
  }
}

TEST(GpuReplayEmulation, RotatingRing) {
  auto c = RotatingRing::config(Window::count(4000), 5, 0.01);
  ASSERT_TRUE(c) << c.what();
  check_replay<GuardedEpochFilter>(*c, 60000, 4000, "ring N=5");
}

TEST(GpuReplayEmulation, InterleavedEpoch) {
  auto base = InterleavedEpochConfig::for_fpr(Window::count(3000), 0.01, {.lane_bits = 64});
  ASSERT_TRUE(base);
  for (uint32_t k : {2u, 4u, 8u, 16u}) {
    InterleavedEpochConfig c = *base;
    c.k = k;
    check_replay<InterleavedEpochFilter<uint64_t>>(c, 60000, 3000, "interleaved64 k=" + std::to_string(k));
  }
  InterleavedEpochConfig r3 = *base;
  r3.r = 3;  // fewer segments than lanes: lanes 4..7 stay empty
  check_replay<InterleavedEpochFilter<uint64_t>>(r3, 60000, 3000, "interleaved64 r=3");
}

// The swept layout (r + 2 lanes, the spare masked off, swept a few lines at
// a time on the CPU): verdicts, words and the sweep's header as the CPU's,
// count and time windows (idle gaps, and the capacity trigger), both
// policies, r = 6 (auto's) and a smaller r whose ring leaves lanes unused.
TEST(GpuReplayEmulation, InterleavedSwept) {
  for (uint32_t r : {6u, 3u}) {
    const std::string tag = " r=" + std::to_string(r);
    auto c = InterleavedSweptConfig::for_fpr(Window::count(3000), 0.01, r);
    ASSERT_TRUE(c) << c.what();
    using Swept = InterleavedEpochFilter<uint64_t, true>;
    check_replay<Swept>(*c, 60000, 3000, "swept" + tag);
    check_replay<Swept>(*c, 60000, 3000, "swept on-miss" + tag, {}, true);
    check_replay<Swept>(*c, 60000, 3000, "swept flood" + tag, {}, false, true);
    const uint64_t span = 4000;
    const std::vector<uint64_t> t = gpu_test::clocks(60000, span, 19, 20000, 4);
    auto tc = InterleavedSweptConfig::for_fpr(Window::time(span), 0.01, r, 3000);
    ASSERT_TRUE(tc) << tc.what();
    check_replay<Swept>(*tc, t.size(), 2700, "swept time" + tag, t);
    check_replay<Swept>(*tc, t.size(), 2700, "swept on-miss time" + tag, t, true);
    InterleavedSweptConfig capped = *tc;  // --on-flood keep-fpr: epochs also end at their design load
    capped.epoch_capacity = (3000 + r - 1) / r;
    check_replay<Swept>(capped, t.size(), 2700, "swept time, capacity trigger" + tag, t);
  }
}

// One key a quarter of the stream: its line's runs are long, and the line
// pass replays them by chunks of a warp (line_replay.hpp, kLongRun), both
// policies, both window kinds.
TEST(GpuReplayEmulation, OneKeyFloodingTheStream) {
  auto c = InterleavedEpochConfig::for_fpr(Window::count(3000), 0.01, {.lane_bits = 64});
  ASSERT_TRUE(c);
  const uint64_t before = Emulated::long_runs;
  check_replay<InterleavedEpochFilter<uint64_t>>(*c, 60000, 3000, "flood interleaved64", {}, false, true);
  check_replay<InterleavedEpochFilter<uint64_t>>(*c, 60000, 3000, "flood on-miss interleaved64", {}, true, true);
  const uint64_t span = 4000;
  const std::vector<uint64_t> t = gpu_test::clocks(60000, span, 17, 20000, 4);
  auto tc = InterleavedEpochConfig::for_fpr(Window::time(span), 0.01, {.lane_bits = 64, .capacity = 3000});
  ASSERT_TRUE(tc);
  check_replay<InterleavedEpochFilter<uint64_t>>(*tc, t.size(), 2700, "flood time interleaved64", t, false, true);
  check_replay<InterleavedEpochFilter<uint64_t>>(*tc, t.size(), 2700, "flood on-miss time interleaved64", t, true,
                                                  true);
  EXPECT_GT(Emulated::long_runs - before, 1000u) << "the flood's runs must take the chunked replay";
}

// ~60K packets per stream: an idle gap every ~20K, a half-span one every ~5K.
std::vector<uint64_t> clocks(size_t n, uint64_t span, uint64_t seed) {
  return gpu_test::clocks(n, span, seed, 20000, 4);
}

TEST(GpuReplayEmulation, TimeWindows) {
  const uint64_t span = 4000;  // ticks; ~2 packets per tick: ~2700 packets per window
  const std::vector<uint64_t> t = clocks(60000, span, 11);
  for (uint32_t block : {0u, 512u}) {
    auto c = GuardedEpochConfig::for_fpr(Window::time(span), 0.01, {.r = 6, .block_bits = block, .capacity = 3000});
    ASSERT_TRUE(c) << c.what();
    check_replay<GuardedEpochFilter>(*c, t.size(), 2700, "time window, B=" + std::to_string(block), t);
  }
  // The ring's capacity trigger: an epoch also ends after capacity/N insertions.
  auto ring = RotatingRing::config(Window::time(span), 5, 0.01, 0, 2000, true);
  ASSERT_TRUE(ring) << ring.what();
  ASSERT_GT(ring->epoch_capacity, 0u);
  check_replay<GuardedEpochFilter>(*ring, t.size(), 2700, "time window ring with capacity trigger", t);
  auto il = InterleavedEpochConfig::for_fpr(Window::time(span), 0.01, {.lane_bits = 64, .capacity = 3000});
  ASSERT_TRUE(il) << il.what();
  check_replay<InterleavedEpochFilter<uint64_t>>(*il, t.size(), 2700, "time window interleaved64", t);
}

// Insert-on-miss (the click-fraud default): the fixed point of the verdicts,
// over count and time windows, every layout.
TEST(GpuReplayEmulation, InsertOnMiss) {
  auto flat = GuardedEpochConfig::for_fpr(Window::count(3000), 0.01, {.r = 4});
  ASSERT_TRUE(flat);
  check_replay<GuardedEpochFilter>(*flat, 60000, 3000, "on-miss flat", {}, true);
  auto blocked = GuardedEpochConfig::for_fpr(Window::count(3000), 0.01, {.r = 8, .block_bits = 512});
  ASSERT_TRUE(blocked);
  check_replay<GuardedEpochFilter>(*blocked, 60000, 3000, "on-miss blocked", {}, true);
  auto il = InterleavedEpochConfig::for_fpr(Window::count(3000), 0.01, {.lane_bits = 64});
  ASSERT_TRUE(il);
  check_replay<InterleavedEpochFilter<uint64_t>>(*il, 60000, 3000, "on-miss interleaved64", {}, true);
  const uint64_t span = 4000;
  const std::vector<uint64_t> t = clocks(60000, span, 13);
  auto tflat = GuardedEpochConfig::for_fpr(Window::time(span), 0.01, {.r = 6, .capacity = 3000});
  ASSERT_TRUE(tflat);
  check_replay<GuardedEpochFilter>(*tflat, t.size(), 2700, "on-miss time window", t, true);
  auto ring = RotatingRing::config(Window::time(span), 5, 0.01, 0, 2000, true);
  ASSERT_TRUE(ring);
  check_replay<GuardedEpochFilter>(*ring, t.size(), 2700, "on-miss time ring, capacity trigger", t, true);
  auto til = InterleavedEpochConfig::for_fpr(Window::time(span), 0.01, {.lane_bits = 64, .capacity = 3000});
  ASSERT_TRUE(til);
  check_replay<InterleavedEpochFilter<uint64_t>>(*til, t.size(), 2700, "on-miss time interleaved64", t, true);
}

// apbf_plan_batch's shortcuts (a count window's generation at once, words of
// 32 guesses) plan what walking every packet plans: the batch and the state
// it leaves.
void expect_plan_is_walked(const BatchPlan& p, const EpochState& after, const EpochState& before,
                           const gpu::ApbfRef& f, const uint64_t* now, const uint32_t* skip, uint64_t skip_base,
                           uint64_t remaining) {
  EpochState walked = before;
  const BatchPlan w = gpu::apbf_plan_batch_walk(walked, f, now, skip, skip_base, remaining);
  ASSERT_EQ(p.count, w.count);
  ASSERT_EQ(p.epochs, w.epochs);
  for (uint32_t e = 0; e < p.epochs; ++e) {
    EXPECT_EQ(p.start[e], w.start[e]) << "epoch " << e;
    EXPECT_EQ(p.seen_from[e], w.seen_from[e]) << "epoch " << e;
    EXPECT_EQ(p.epoch_slot[e], w.epoch_slot[e]) << "epoch " << e;
  }
  for (uint32_t s = 0; s < f.slices; ++s) {
    EXPECT_EQ(p.keep_end[s], w.keep_end[s]) << "slice " << s;
    EXPECT_EQ(p.slot_epoch[s], w.slot_epoch[s]) << "slice " << s;
  }
  EXPECT_EQ(after.current, walked.current);
  EXPECT_EQ(after.insertions, walked.insertions);
  const EpochSchedule& a = after.schedule;
  const EpochSchedule& b = walked.schedule;
  EXPECT_TRUE(a.length == b.length && a.fill == b.fill && a.epoch_start == b.epoch_start &&
              a.last_now == b.last_now && a.fill_cap == b.fill_cap && a.kind == b.kind && a.started == b.started)
      << "the schedules differ (fill " << a.fill << " and " << b.fill << ")";
}

// APBF and APBBF: the planner and passes of gpu/portable/apbf_replay.hpp, run the same
// way (every pass in a scrambled order; insert-on-miss to the fixed point of
// its verdicts), against ApbfFilter's sequential calls.
void check_apbf(const ApbfConfig& cfg, size_t n, uint64_t window, const std::string& what,
                const std::vector<uint64_t>& times, bool on_miss) {
  SCOPED_TRACE(what + (on_miss ? ", insert-on-miss" : ", insert-always"));
  auto shape = gpu::shape_of(cfg);
  ASSERT_TRUE(shape) << shape.what();
  const std::vector<KeyHash> keys = stream(n, window, 0xAB0u + n);
  const uint64_t* now = times.empty() ? nullptr : times.data();
  OwnedFilter<ApbfFilter> cpu(cfg);
  const size_t used = gpu::kWordsOffset + shape->words_bytes();
  ASSERT_EQ(cpu.used, (used + 63) / 64 * 64) << "the shape's layout is the filter's";
  const std::vector<char> want = cpu_verdicts(cpu.filter, keys, now, on_miss);
  ASSERT_FALSE(::testing::Test::HasFailure());

  std::mt19937_64 rng(9);
  for (size_t chunk : {n, size_t{4096}, size_t{777}}) {
    SCOPED_TRACE("chunk " + std::to_string(chunk));
    std::vector<unsigned char> memory(shape->bytes + 64, 0);
    unsigned char* image = memory.data() + (64 - reinterpret_cast<uintptr_t>(memory.data()) % 64) % 64;
    EpochState state = shape->initial_state();
    const gpu::ApbfRef f = shape->at(image);
    const uint64_t fbits = shape->slice_bits();
    std::vector<uint32_t> first(size_t{f.slices} * fbits, gpu::kUnset);
    std::vector<uint32_t> seen((n + 31) / 32, 0);  // verdict bits (insert-on-miss: the guess, then the answer)
    uint64_t batches = 0;
    uint32_t most_rounds = 0;
    for (size_t at = 0; at < n; at += chunk) {
      const size_t len = std::min(chunk, n - at);
      const KeyHash* k = keys.data() + at;
      const uint64_t* t = now != nullptr ? now + at : nullptr;
      // Verdict bits of this call start at 0 (every packet inserts in the first round).
      std::vector<uint32_t> call((len + 31) / 32, 0);
      for (uint64_t done = 0; done < len; ++batches) {
        EpochState st;
        BatchPlan p;
        uint32_t rounds = 0;
        for (bool changed = true; changed; ++rounds) {
          ASSERT_LT(rounds, 1000u) << "no fixed point";
          st = state;
          const uint32_t* skip = on_miss ? call.data() : nullptr;
          p = gpu::apbf_plan_batch(st, f, t != nullptr ? t + done : nullptr, skip, done, len - done);
          ASSERT_GT(p.count, 0u);
          expect_plan_is_walked(p, st, state, f, t != nullptr ? t + done : nullptr, skip, done, len - done);
          std::vector<uint64_t> order(p.count);
          std::iota(order.begin(), order.end(), 0);
          std::shuffle(order.begin(), order.end(), rng);
          for (uint64_t i : order) gpu::apbf_stamp_first_setter(f, p, k + done, first.data(), fbits, i, skip, done);
          std::vector<char> v(p.count);
          std::shuffle(order.begin(), order.end(), rng);
          for (uint64_t i : order) v[i] = gpu::apbf_replay_verdict(f, p, k + done, first.data(), fbits, i);
          std::shuffle(order.begin(), order.end(), rng);
          for (uint64_t i : order)
            gpu::apbf_insert_and_unstamp(f, p, k + done, first.data(), fbits, i, skip, done, /*insert=*/false);
          changed = false;
          for (uint64_t i = 0; i < p.count; ++i) {
            const uint64_t b = done + i;
            if (static_cast<bool>((call[b / 32] >> (b % 32)) & 1u) != static_cast<bool>(v[i])) {
              call[b / 32] ^= 1u << (b % 32);
              changed = on_miss;  // insert-always: the first round is the answer
            }
          }
        }
        most_rounds = std::max(most_rounds, rounds);
        for (uint32_t s = 0; s < f.slices; ++s)
          if (p.keep_end[s] != BatchPlan::kNever)
            for (uint64_t w = 0; w < f.slice_words; ++w) f.slice(s)[w] = 0;
        std::vector<uint64_t> order(p.count);
        std::iota(order.begin(), order.end(), 0);
        std::shuffle(order.begin(), order.end(), rng);
        for (uint64_t i : order)
          gpu::apbf_insert_and_unstamp(f, p, k + done, nullptr, fbits, i, on_miss ? call.data() : nullptr, done);
        state = st;
        done += p.count;
      }
      for (size_t i = 0; i < len; ++i)
        if ((call[i / 32] >> (i % 32)) & 1u) seen[(at + i) / 32] |= 1u << ((at + i) % 32);
    }
    for (size_t i = 0; i < n; ++i)
      ASSERT_EQ(static_cast<bool>((seen[i / 32] >> (i % 32)) & 1u), static_cast<bool>(want[i])) << "packet " << i;
    if (on_miss) std::printf("%s: at most %u rounds per batch, %llu batches\n", what.c_str(), most_rounds,
                             static_cast<unsigned long long>(batches));
    EXPECT_EQ(state.insertions, cpu->insertions());
    const std::vector<unsigned char> cpu_state = cpu.state();
    ASSERT_EQ(std::memcmp(image + gpu::kWordsOffset, cpu_state.data() + gpu::kWordsOffset, used - gpu::kWordsOffset),
              0)
        << "slices differ";
    uint32_t cpu_head;  // ApbfFilter's header has EpochState's layout: head where current is
    std::memcpy(&cpu_head, cpu_state.data() + offsetof(EpochState, current), sizeof cpu_head);
    EXPECT_EQ(state.current, cpu_head) << "head differs";
    EXPECT_TRUE(std::all_of(first.begin(), first.end(), [](uint32_t x) { return x == gpu::kUnset; }));
    // The query (ApbfRef::contains, APBBF's by whole block words) over the
    // final state answers as the CPU filter does: the last window's keys and
    // as many never seen.
    size_t found = 0;
    for (size_t i = n > 2 * window ? n - 2 * window : 0; i < n; ++i) {
      for (const KeyHash h : {keys[i], KeyHash{keys[i].h1 ^ 0x5bd1e995u, keys[i].h2 + 1}}) {
        const bool want_hit = cpu->contains(h);
        ASSERT_EQ(f.contains(h, state.current), want_hit) << "query of packet " << i;
        found += want_hit;
      }
    }
    EXPECT_GT(found, 0u);
  }
}

// The planner's shortcuts against the walk over random shapes and states,
// beyond what the replays above reach: generations of 1 to 1000 packets
// (32 and 64 among them), any fill, any head, skip words of every density
// starting at any offset, batches cut short, the two policies mixed.
TEST(GpuReplayEmulation, ApbfPlanShortcutsEqualTheWalk) {
  std::mt19937_64 rng(0xab5eed);
  auto pick = [&](uint64_t lo, uint64_t hi) { return lo + rng() % (hi - lo + 1); };
  uint64_t batches = 0;
  for (int c = 0; c < 4000 && !::testing::Test::HasFailure(); ++c) {
    gpu::ApbfRef f;
    f.k = static_cast<uint32_t>(pick(1, 12));
    f.l = static_cast<uint32_t>(pick(0, c % 4 == 0 ? 64 - f.k : 12));
    f.slices = f.k + f.l;
    const uint64_t lengths[] = {pick(1, 3), pick(30, 34), pick(60, 70), pick(1, 1000)};
    EpochState st{};
    st.schedule = EpochSchedule::make(WindowKind::count, lengths[c % 4]);
    st.schedule.fill = c % 8 == 0 ? st.schedule.length : pick(0, st.schedule.length);
    st.current = static_cast<uint32_t>(pick(0, f.slices - 1));
    const uint64_t packets = pick(1, c % 4 == 0 ? 70 : 3000), base = pick(0, 100);
    const double density = static_cast<double>(pick(0, 100)) / 100;
    std::vector<uint32_t> skip((base + packets) / 32 + 1);
    for (uint32_t& w : skip)
      for (int b = 0; b < 32; ++b)
        if (static_cast<double>(rng() % 1000) < density * 1000) w |= 1u << b;
    SCOPED_TRACE("case " + std::to_string(c) + ": k " + std::to_string(f.k) + ", l " + std::to_string(f.l) +
                 ", generation " + std::to_string(st.schedule.length));
    for (uint64_t done = 0; done < packets && !::testing::Test::HasFailure(); ++batches) {
      const uint32_t* sk = rng() % 2 ? skip.data() : nullptr;
      const uint64_t remaining = rng() % 3 ? packets - done : pick(1, packets - done);
      EpochState after = st;
      const BatchPlan p = gpu::apbf_plan_batch(after, f, nullptr, sk, base + done, remaining);
      ASSERT_GT(p.count, 0u);
      expect_plan_is_walked(p, after, st, f, nullptr, sk, base + done, remaining);
      st = after;
      done += p.count;
    }
  }
  std::printf("%llu batches planned both ways\n", static_cast<unsigned long long>(batches));
}

TEST(GpuReplayEmulation, Apbf) {
  auto apbf = ApbfConfig::for_fpr(Window::count(3000), 0.01);  // k = 7, l = 4
  ASSERT_TRUE(apbf) << apbf.what();
  auto apbbf = ApbfConfig::blocked(Window::count(3000), 3, 16, 512, 4);
  ASSERT_TRUE(apbbf) << apbbf.what();
  auto small = ApbfConfig::blocked(Window::count(3000), 4, 6, 64, 8);
  ASSERT_TRUE(small) << small.what();
  const uint64_t span = 4000;
  const std::vector<uint64_t> t = clocks(60000, span, 21);
  auto timed = ApbfConfig::for_fpr(Window::time(span), 0.01, {.capacity = 3000});
  ASSERT_TRUE(timed) << timed.what();
  for (bool on_miss : {false, true}) {
    check_apbf(*apbf, 60000, 3000, "apbf k=7 l=4", {}, on_miss);
    check_apbf(*apbbf, 60000, 3000, "apbbf 3,16,512,4", {}, on_miss);
    check_apbf(*small, 60000, 3000, "apbbf 4,6,64,8", {}, on_miss);
    check_apbf(*timed, t.size(), 2700, "apbf time window", t, on_miss);
  }
}

TEST(GpuReplayEmulation, ShapesTheReplayDoesNotTake) {
  auto c32 = InterleavedEpochConfig::for_fpr(Window::count(3000), 0.01, {.lane_bits = 32});
  ASSERT_TRUE(c32);
  EXPECT_EQ(gpu::shape_of(*c32).code(), Errc::block_size_invalid);
  GuardedEpochConfig bad;
  EXPECT_FALSE(gpu::shape_of(bad));
}

}  // namespace
