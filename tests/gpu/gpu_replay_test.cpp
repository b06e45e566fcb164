// The CUDA guarded epoch filter must give the CPU filter's answers bit for
// bit: exact replay (test_and_insert in order), bulk contains, bulk insert,
// and a state snapshot moved CPU -> GPU -> CPU in the middle of a stream.
// Streams have live duplicates, expired ones and fresh keys, over windows with
// few long epochs and many short ones (thousands of batches).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "agebloom/agebloom.hpp"
#include "cpu_reference.hpp"
#include "agebloom/gpu/replay.hpp"

namespace {

using namespace agebloom;

struct AlignedFree {
  void operator()(unsigned char* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<unsigned char, AlignedFree>;

// A 64-aligned arena image, so CPU and GPU carve the same offsets, zeroed:
// bytes no filter writes (the header's padding, the arena's unused tail)
// start equal on both sides, so any difference left is state. (The first
// run on an H100 compared aligned_alloc's leftovers there: verdicts equal,
// images different at bytes 42-47, 60-63 and the last line.)
Buffer image_for(size_t bytes) {
  const size_t rounded = (bytes + 63) / 64 * 64;
  Buffer b(static_cast<unsigned char*>(std::aligned_alloc(64, rounded)));
  std::memset(b.get(), 0, rounded);
  return b;
}

// Keys of a dedup-like stream: half fresh, a quarter repeats inside the
// window, a quarter repeats from up to 4W back (mostly expired). flood: a
// quarter of the packets are one key instead (one source flooding a trace).
std::vector<KeyHash> stream(size_t n, uint64_t window, uint64_t seed, bool flood = false) {
  std::vector<KeyHash> out(n);
  const Hasher hasher(seed);
  uint64_t x = seed | 1;
  for (size_t i = 0; i < n; ++i) {
    x = mix64(x + 0x9e3779b97f4a7c15ULL);
    uint64_t id = i;
    const uint64_t back = 1 + (x >> 8) % (x & 1 ? window : 4 * window);
    if ((x >> 1) & 1 && back <= i) id = i - back;
    if (flood && (x >> 2) % 4 == 0) id = ~uint64_t{0};
    out[i] = hasher(&id, sizeof id);
  }
  return out;
}


// Where two arena images differ: empty when they are equal, else the first
// differing byte, whether it lies in the header (the image's first `header`
// bytes: the line the ring header takes, two for the swept layout's) or in
// the filter's words, and how many bytes differ.
std::string state_difference(const unsigned char* cpu, const unsigned char* gpu, size_t bytes, size_t header = 64) {
  size_t first = bytes, count = 0;
  for (size_t i = 0; i < bytes; ++i)
    if (cpu[i] != gpu[i]) {
      if (first == bytes) first = i;
      ++count;
    }
  if (count == 0) return {};
  char buf[200];
  std::snprintf(buf, sizeof buf, "%zu of %zu bytes differ, the first at byte %zu (%s): cpu 0x%02x, gpu 0x%02x", count,
                bytes, first, first < header ? "header" : "filter words", cpu[first], gpu[first]);
  return buf;
}

// Index of the first differing verdict, or -1.
long long first_difference(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (((a[i / 8] >> (i % 8)) & 1) != ((b[i / 8] >> (i % 8)) & 1)) return static_cast<long long>(i);
  return -1;
}

// A typed config as the registry's FilterConfig, which the host API takes.
FilterConfig fc(const GuardedEpochConfig& c) {
  return {c.block_bits ? Structure::guarded_epoch_blocked : Structure::guarded_epoch, c};
}
FilterConfig fc(const InterleavedEpochConfig& c) { return {Structure::interleaved, c}; }
FilterConfig fc(const InterleavedSweptConfig& c) { return {Structure::interleaved_swept, c}; }
// The bytes of an arena image before its words (the swept layout's header takes two lines).
template <class Config>
size_t header_bytes(const Config&) {
  return std::is_same_v<Config, InterleavedSweptConfig> ? 128 : 64;
}
FilterConfig fc(const ApbfConfig& c) { return {c.block_bits ? Structure::apbbf : Structure::apbf, c}; }

template <class Config>
gpu::GpuStatus replay(const Config& c, const KeyHash* k, size_t n, const gpu::ReplayOptions& o, uint8_t* bits,
                      void* image, size_t bytes, gpu::ReplayStats* stats = nullptr) {
  return gpu::replay(fc(c), k, n, o, bits, image, bytes, stats);
}

// The CPU's verdicts as a bit array (cpu_reference.hpp): now != nullptr, a
// time window, advanced to now[i] before key i; on_miss, insert-on-miss.
template <class Filter>
std::vector<uint8_t> cpu_verdicts(Filter& f, const KeyHash* k, size_t n, const uint64_t* now = nullptr,
                                  bool on_miss = false) {
  std::vector<uint8_t> bits((n + 7) / 8, 0);
  for (size_t i = 0; i < n; ++i)
    if (gpu_test::cpu_decide(f, k[i], now != nullptr ? now + i : nullptr, on_miss))
      bits[i / 8] |= static_cast<uint8_t>(1u << (i % 8));
  return bits;
}

// 10M-key streams: an idle gap every ~200K keys, a half-span one every ~4K.
std::vector<uint64_t> clocks(size_t n, uint64_t span, uint64_t seed) {
  return gpu_test::clocks(n, span, seed, 200'000, 49);
}

// Replays n keys on both, from a fresh filter; GPU in chunks of `chunk`:
// every verdict and the final state the same.
template <class Filter, class Config>
void expect_same_replay(const Config& c, const std::string& what, uint64_t window, size_t n, size_t chunk,
                        const std::vector<uint64_t>& times = {}, bool on_miss = false, bool by_line = true,
                        bool flood = false) {
  const uint64_t* now = times.empty() ? nullptr : times.data();
  const size_t bytes = gpu::arena_image_bytes(fc(c));
  Buffer mem = image_for(bytes), gpu_image = image_for(bytes);
  Arena arena(mem.get(), bytes), fresh(gpu_image.get(), bytes);
  auto f = Filter::create(c, arena);
  ASSERT_TRUE(f.has_value()) << f.what();
  ASSERT_TRUE(Filter::create(c, fresh).has_value());  // an empty image to start from
  const auto keys = stream(n, window, 0x5eed0000 + window, flood);
  const auto want = cpu_verdicts(*f, keys.data(), n, now, on_miss);
  std::vector<uint8_t> got((n + 7) / 8, 0);
  gpu::ReplayOptions opt;
  opt.chunk_keys = chunk;
  opt.times = now;
  opt.by_line = by_line;
  if (on_miss) opt.policy = gpu::ReplayPolicy::insert_on_miss;
  gpu::ReplayStats stats;
  const gpu::GpuStatus s = replay(c, keys.data(), n, opt, got.data(), gpu_image.get(), bytes, &stats);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(first_difference(want, got, n), -1) << what << " W=" << window;
  EXPECT_EQ(state_difference(mem.get(), gpu_image.get(), bytes, header_bytes(c)), "") << "final filter state differs";
  std::printf("%s W=%llu: %zu keys, %llu chunks, %llu batches, %llu rounds, %.3f s on device\n", what.c_str(),
              static_cast<unsigned long long>(window), n, static_cast<unsigned long long>(stats.chunks),
              static_cast<unsigned long long>(stats.batches), static_cast<unsigned long long>(stats.rounds),
              stats.device_seconds);
}

// Bulk insert of half the keys on both (same state), then bulk contains of all.
template <class Filter, class Config>
void expect_same_bulk(const Config& c, uint64_t window, size_t n, uint64_t seed) {
  const size_t bytes = gpu::arena_image_bytes(fc(c));
  const auto keys = stream(n, window, seed);
  Buffer cpu_mem = image_for(bytes), gpu_mem = image_for(bytes);
  Arena a(cpu_mem.get(), bytes), b(gpu_mem.get(), bytes);
  auto f = Filter::create(c, a);
  ASSERT_TRUE(f.has_value());
  ASSERT_TRUE(Filter::create(c, b).has_value());
  f->insert_bulk(keys.data(), n / 2);
  const gpu::GpuStatus si = gpu::insert_bulk(fc(c), gpu_mem.get(), bytes, keys.data(), n / 2);
  ASSERT_TRUE(si.ok()) << si.message();
  EXPECT_EQ(state_difference(cpu_mem.get(), gpu_mem.get(), bytes, header_bytes(c)), "") << "bulk insert state differs";
  std::vector<uint8_t> got((n + 7) / 8, 0), want((n + 7) / 8, 0);
  for (size_t i = 0; i < n; ++i)
    if (f->contains(keys[i])) want[i / 8] |= static_cast<uint8_t>(1u << (i % 8));
  const gpu::GpuStatus sc = gpu::contains_bulk(fc(c), cpu_mem.get(), bytes, keys.data(), n, got.data());
  ASSERT_TRUE(sc.ok()) << sc.message();
  EXPECT_EQ(first_difference(want, got, n), -1);
}

class GpuVsCpu : public ::testing::TestWithParam<uint32_t> {
 protected:
  void SetUp() override {
    std::string why;
    if (!gpu::gpu_available(why)) GTEST_SKIP() << "no CUDA device: " << why;
    std::printf("device: %s\n", gpu::gpu_description().c_str());
  }

  static GuardedEpochConfig config(uint64_t window) {
    auto c = GuardedEpochConfig::for_fpr(Window::count(window), 0.01, {.r = 8, .block_bits = GetParam()});
    EXPECT_TRUE(c.has_value()) << c.what();
    return *c;
  }

  static void expect_same_replay(uint64_t window, size_t n, size_t chunk) {
    ::expect_same_replay<GuardedEpochFilter>(config(window), "B=" + std::to_string(GetParam()), window, n, chunk);
  }
};

TEST_P(GpuVsCpu, ReplayTenMillionKeysLongEpochs) { expect_same_replay(1'000'000, 10'000'000, 3'000'000); }

TEST_P(GpuVsCpu, ReplayManyShortEpochs) { expect_same_replay(1'000, 1'000'000, 0); }

TEST_P(GpuVsCpu, ReplayEpochNotMultipleOfChunk) { expect_same_replay(100'003, 2'000'000, 65'536); }

// CPU replays the first half, the GPU continues from its arena image, the CPU
// then continues from the GPU's image: verdicts and states all agree.
TEST_P(GpuVsCpu, SnapshotMovesBothWays) {
  const uint64_t window = 200'000;
  const size_t n = 3'000'000, half = 1'234'567;
  const GuardedEpochConfig c = config(window);
  const size_t bytes = gpu::arena_image_bytes(fc(c));
  const auto keys = stream(n, window, 42);

  Buffer ref_mem = image_for(bytes);
  Arena ref_arena(ref_mem.get(), bytes);
  auto ref = GuardedEpochFilter::create(c, ref_arena);
  ASSERT_TRUE(ref.has_value());
  const auto want = cpu_verdicts(*ref, keys.data(), n);

  Buffer mem = image_for(bytes);
  Arena arena(mem.get(), bytes);
  auto f = GuardedEpochFilter::create(c, arena);
  ASSERT_TRUE(f.has_value());
  auto first = cpu_verdicts(*f, keys.data(), half);
  std::vector<uint8_t> second((n - half + 7) / 8, 0);
  const gpu::GpuStatus s =
      gpu::replay(fc(c), keys.data() + half, n - half, {}, second.data(), mem.get(), bytes);
  ASSERT_TRUE(s.ok()) << s.message();
  for (size_t i = 0; i < n - half; ++i) {
    const bool w = (want[(half + i) / 8] >> ((half + i) % 8)) & 1;
    const bool g = (second[i / 8] >> (i % 8)) & 1;
    ASSERT_EQ(w, g) << "packet " << half + i;
  }
  // The CPU handle on `mem` sees the GPU's state: header and bits.
  EXPECT_EQ(f->insertions(), ref->insertions());
  EXPECT_EQ(f->current_segment(), ref->current_segment());
  EXPECT_EQ(state_difference(ref_mem.get(), mem.get(), bytes), "");
}

TEST_P(GpuVsCpu, BulkContainsAndInsert) { expect_same_bulk<GuardedEpochFilter>(config(500'000), 500'000, 4'000'000, 7); }

INSTANTIATE_TEST_SUITE_P(Layouts, GpuVsCpu, ::testing::Values(0u, 64u, 256u, 512u),
                         [](const auto& info) { return info.param ? "blocked" + std::to_string(info.param) : std::string("flat"); });

// The one-line layout (InterleavedEpochFilter, 64-bit lanes): dedup_fwd's and
// the planner's default, and the layout of the GPU targets.
class GpuVsCpuInterleaved : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!gpu::gpu_available(why)) GTEST_SKIP() << "no CUDA device: " << why;
  }
  static InterleavedEpochConfig config(uint64_t window) {
    auto c = InterleavedEpochConfig::for_fpr(Window::count(window), 0.01, {.lane_bits = 64});
    EXPECT_TRUE(c.has_value()) << c.what();
    return *c;
  }
  using Filter = InterleavedEpochFilter<uint64_t>;
};

TEST_F(GpuVsCpuInterleaved, ReplayTenMillionKeysLongEpochs) {
  expect_same_replay<Filter>(config(1'000'000), "interleaved64", 1'000'000, 10'000'000, 3'000'000);
}

TEST_F(GpuVsCpuInterleaved, ReplayManyShortEpochs) {
  expect_same_replay<Filter>(config(1'000), "interleaved64", 1'000, 1'000'000, 0);
}

// The one-line layout replays line by line by default; its first-setter
// method (the other layouts') must still agree, both policies.
TEST_F(GpuVsCpuInterleaved, ReplayByFirstSettersToo) {
  expect_same_replay<Filter>(config(100'003), "interleaved64 stamps", 100'003, 2'000'000, 65'536, {}, false, false);
  expect_same_replay<Filter>(config(100'003), "interleaved64 stamps on-miss", 100'003, 2'000'000, 0, {}, true, false);
}

// One key a quarter of the stream: its line's runs are long, replayed by a
// warp each (long_run_kernel), both policies, a count and a time window.
TEST_F(GpuVsCpuInterleaved, ReplayOneKeyFloodingTheStream) {
  expect_same_replay<Filter>(config(100'003), "interleaved64 flood", 100'003, 4'000'000, 0, {}, false, true, true);
  expect_same_replay<Filter>(config(100'003), "interleaved64 flood on-miss", 100'003, 2'000'000, 0, {}, true, true,
                             true);
  const size_t n = 2'000'000;
  const uint64_t span = 150'000;  // ticks: ~100K keys per window at 1.5 ticks per key
  const std::vector<uint64_t> t = clocks(n, span, 77);
  auto c = InterleavedEpochConfig::for_fpr(Window::time(span), 0.01, {.lane_bits = 64, .capacity = 120'000});
  ASSERT_TRUE(c.has_value()) << c.what();
  expect_same_replay<Filter>(*c, "time interleaved64 flood", 100'003, n, 0, t, false, true, true);
}

TEST_F(GpuVsCpuInterleaved, BulkContainsAndInsert) { expect_same_bulk<Filter>(config(500'000), 500'000, 4'000'000, 9); }

// The swept layout (--filter auto's past 4 MiB: r + 2 lanes, the spare
// masked off and swept a few lines at a time on the CPU): verdicts and the
// final image, header and partly swept spare included, as the CPU's; both
// methods and policies, count and time windows (with the capacity trigger),
// a flood, bulk forms, and a snapshot moved CPU -> GPU -> CPU.
TEST(GpuVsCpuSwept, ReplayBulkAndSnapshot) {
  std::string why;
  if (!gpu::gpu_available(why)) GTEST_SKIP() << "no CUDA device: " << why;
  using Swept = InterleavedEpochFilter<uint64_t, true>;
  auto count = [](uint64_t window) {
    auto c = InterleavedSweptConfig::for_fpr(Window::count(window), 0.01);
    EXPECT_TRUE(c.has_value()) << c.what();
    return *c;
  };
  expect_same_replay<Swept>(count(1'000'000), "swept", 1'000'000, 10'000'000, 3'000'000);
  expect_same_replay<Swept>(count(1'000), "swept short epochs", 1'000, 1'000'000, 0);
  expect_same_replay<Swept>(count(100'003), "swept stamps", 100'003, 2'000'000, 65'536, {}, false, false);
  expect_same_replay<Swept>(count(1'000'000), "swept on-miss", 1'000'000, 10'000'000, 0, {}, true);
  expect_same_replay<Swept>(count(100'003), "swept flood", 100'003, 4'000'000, 0, {}, false, true, true);
  const uint64_t span = 1'000'000;
  const auto t = clocks(10'000'000, span, 23);
  auto tc = InterleavedSweptConfig::for_fpr(Window::time(span), 0.01, 0, 700'000);
  ASSERT_TRUE(tc.has_value()) << tc.what();
  expect_same_replay<Swept>(*tc, "time swept", 670'000, t.size(), 3'000'000, t);
  expect_same_replay<Swept>(*tc, "on-miss time swept", 670'000, t.size(), 3'000'000, t, true);
  InterleavedSweptConfig capped = *tc;  // --on-flood keep-fpr
  capped.epoch_capacity = 700'000 / capped.r;
  expect_same_replay<Swept>(capped, "time swept, capacity trigger", 670'000, t.size(), 3'000'000, t);
  expect_same_bulk<Swept>(count(500'000), 500'000, 4'000'000, 11);

  // The CPU replays the first part, the GPU continues from its image, and the
  // CPU handle then sees the GPU's state: the same as one CPU run throughout.
  const InterleavedSweptConfig c = count(200'000);
  const size_t n = 3'000'000, half = 1'234'567;
  const size_t bytes = gpu::arena_image_bytes(fc(c));
  const auto keys = stream(n, 200'000, 43);
  Buffer ref_mem = image_for(bytes), mem = image_for(bytes);
  Arena ref_arena(ref_mem.get(), bytes), arena(mem.get(), bytes);
  auto ref = Swept::create(c, ref_arena);
  auto f = Swept::create(c, arena);
  ASSERT_TRUE(ref.has_value() && f.has_value());
  const auto want = cpu_verdicts(*ref, keys.data(), n);
  (void)cpu_verdicts(*f, keys.data(), half);
  std::vector<uint8_t> second((n - half + 7) / 8, 0);
  const gpu::GpuStatus s = gpu::replay(fc(c), keys.data() + half, n - half, {}, second.data(), mem.get(), bytes);
  ASSERT_TRUE(s.ok()) << s.message();
  for (size_t i = 0; i < n - half; ++i)
    ASSERT_EQ((want[(half + i) / 8] >> ((half + i) % 8)) & 1, (second[i / 8] >> (i % 8)) & 1) << "packet " << half + i;
  EXPECT_EQ(f->spare_lines_swept(), ref->spare_lines_swept());
  EXPECT_EQ(state_difference(ref_mem.get(), mem.get(), bytes, header_bytes(c)), "");
}

// Time windows: every layout, 10M keys with idle gaps (epochs that end by
// time, several at once, and everything expiring), chunked.
TEST(GpuVsCpuTime, ReplayTenMillionKeys) {
  std::string why;
  if (!gpu::gpu_available(why)) GTEST_SKIP() << "no CUDA device: " << why;
  const uint64_t span = 1'000'000;  // ticks: ~670K keys per window at 1.5 ticks per key
  const size_t n = 10'000'000;
  const auto t = clocks(n, span, 5);
  for (uint32_t block : {0u, 512u}) {
    auto c = GuardedEpochConfig::for_fpr(Window::time(span), 0.01, {.r = 8, .block_bits = block, .capacity = 700'000});
    ASSERT_TRUE(c.has_value()) << c.what();
    expect_same_replay<GuardedEpochFilter>(*c, "time B=" + std::to_string(block), 670'000, n, 3'000'000, t);
  }
  auto ring = RotatingRing::config(Window::time(span), 4, 0.01, 0, 500'000, true);
  ASSERT_TRUE(ring.has_value()) << ring.what();
  expect_same_replay<GuardedEpochFilter>(*ring, "time ring, capacity trigger", 670'000, n, 3'000'000, t);
  auto il = InterleavedEpochConfig::for_fpr(Window::time(span), 0.01, {.lane_bits = 64, .capacity = 700'000});
  ASSERT_TRUE(il.has_value()) << il.what();
  expect_same_replay<InterleavedEpochFilter<uint64_t>>(*il, "time interleaved64", 670'000, n, 3'000'000, t);

  // Bulk insert over the time window: as advance(t[i]) then insert(key i).
  auto c = GuardedEpochConfig::for_fpr(Window::time(span), 0.01, {.r = 8, .block_bits = 512, .capacity = 700'000});
  ASSERT_TRUE(c.has_value());
  const size_t m = 2'000'000;
  const auto keys = stream(m, 670'000, 77);
  const size_t bytes = gpu::arena_image_bytes(fc(*c));
  Buffer cpu_mem = image_for(bytes), gpu_mem = image_for(bytes);
  Arena a(cpu_mem.get(), bytes), b(gpu_mem.get(), bytes);
  auto f = GuardedEpochFilter::create(*c, a);
  ASSERT_TRUE(f.has_value());
  ASSERT_TRUE(GuardedEpochFilter::create(*c, b).has_value());
  for (size_t i = 0; i < m; ++i) {
    ASSERT_TRUE(f->advance(t[i]).ok());
    f->insert(keys[i]);
  }
  const gpu::GpuStatus si = gpu::insert_bulk(fc(*c), gpu_mem.get(), bytes, keys.data(), m, t.data());
  ASSERT_TRUE(si.ok()) << si.message();
  EXPECT_EQ(state_difference(cpu_mem.get(), gpu_mem.get(), bytes), "") << "time-window bulk insert state differs";
}

// Insert-on-miss, the click-fraud default: the fixed point of the verdicts.
TEST(GpuVsCpuOnMiss, ReplayEveryLayoutBothWindowKinds) {
  std::string why;
  if (!gpu::gpu_available(why)) GTEST_SKIP() << "no CUDA device: " << why;
  const size_t n = 10'000'000;
  for (uint32_t block : {0u, 512u}) {
    auto c = GuardedEpochConfig::for_fpr(Window::count(1'000'000), 0.01, {.r = 8, .block_bits = block});
    ASSERT_TRUE(c.has_value());
    expect_same_replay<GuardedEpochFilter>(*c, "on-miss B=" + std::to_string(block), 1'000'000, n, 4'000'000, {}, true);
  }
  auto il = InterleavedEpochConfig::for_fpr(Window::count(1'000'000), 0.01, {.lane_bits = 64});
  ASSERT_TRUE(il.has_value());
  expect_same_replay<InterleavedEpochFilter<uint64_t>>(*il, "on-miss interleaved64", 1'000'000, n, 0, {}, true);
  const uint64_t span = 1'000'000;
  const auto t = clocks(n, span, 17);
  auto ring = RotatingRing::config(Window::time(span), 4, 0.01, 0, 500'000, true);
  ASSERT_TRUE(ring.has_value());
  expect_same_replay<GuardedEpochFilter>(*ring, "on-miss time ring", 670'000, n, 3'000'000, t, true);
  auto til = InterleavedEpochConfig::for_fpr(Window::time(span), 0.01, {.lane_bits = 64, .capacity = 700'000});
  ASSERT_TRUE(til.has_value());
  expect_same_replay<InterleavedEpochFilter<uint64_t>>(*til, "on-miss time interleaved64", 670'000, n, 3'000'000, t,
                                                        true);
}

// APBF and APBBF: 10M keys, both policies, count and time windows; bulk query and insert.
TEST(GpuVsCpuApbf, ReplayBothPoliciesBothWindowKinds) {
  std::string why;
  if (!gpu::gpu_available(why)) GTEST_SKIP() << "no CUDA device: " << why;
  const size_t n = 10'000'000;
  auto apbf = ApbfConfig::for_fpr(Window::count(1'000'000), 0.01);
  ASSERT_TRUE(apbf.has_value());
  auto apbbf = ApbfConfig::blocked(Window::count(1'000'000), 3, 16, 512, 4);
  ASSERT_TRUE(apbbf.has_value());
  const uint64_t span = 1'000'000;
  const auto t = clocks(n, span, 23);
  auto timed = ApbfConfig::for_fpr(Window::time(span), 0.01, {.capacity = 700'000});
  ASSERT_TRUE(timed.has_value());
  for (bool on_miss : {false, true}) {
    const std::string p = on_miss ? " on-miss" : "";
    expect_same_replay<ApbfFilter>(*apbf, "apbf" + p, 1'000'000, n, 4'000'000, {}, on_miss);
    expect_same_replay<ApbfFilter>(*apbbf, "apbbf" + p, 1'000'000, n, 0, {}, on_miss);
    expect_same_replay<ApbfFilter>(*timed, "apbf time" + p, 670'000, n, 3'000'000, t, on_miss);
  }
  expect_same_bulk<ApbfFilter>(*apbf, 500'000, 4'000'000, 31);
  expect_same_bulk<ApbfFilter>(*apbbf, 500'000, 4'000'000, 37);  // its query compares block words
}

// Runs everywhere: the probe answers, with a reason when it says no.
TEST(GpuProbe, ReportsAReason) {
  std::string why;
  const bool ok = gpu::gpu_available(why);
  if (!ok) {
    EXPECT_FALSE(why.empty());
  }
  std::printf("gpu_available: %s%s\n", ok ? "yes" : "no: ", why.c_str());
}

TEST(GpuErrors, InvalidConfigAndPolicyAreValues) {
  std::string why;
  if (!gpu::gpu_available(why)) GTEST_SKIP() << "no CUDA device: " << why;
  GuardedEpochConfig bad;  // k = 0, window 0
  uint8_t bits = 0;
  KeyHash k{1, 2};
  EXPECT_EQ(gpu::replay(fc(bad), &k, 1, {}, &bits, nullptr, 0).code, gpu::GpuErrc::invalid_config);
  auto c = GuardedEpochConfig::for_fpr(Window::count(1000), 0.01);
  ASSERT_TRUE(c.has_value());
  auto c32 = InterleavedEpochConfig::for_fpr(Window::count(1000), 0.01, {.lane_bits = 32});
  ASSERT_TRUE(c32.has_value());
  EXPECT_EQ(gpu::replay(fc(*c32), &k, 1, {}, &bits, nullptr, 0).code, gpu::GpuErrc::unsupported);
  auto t = GuardedEpochConfig::for_fpr(Window::time(1000), 0.01, {.r = 8, .capacity = 1000});
  ASSERT_TRUE(t.has_value());
  // A time window needs each key's clock.
  EXPECT_EQ(gpu::replay(fc(*t), &k, 1, {}, &bits, nullptr, 0).code, gpu::GpuErrc::bad_argument);
  std::vector<uint8_t> image(gpu::arena_image_bytes(fc(*t)));
  EXPECT_EQ(gpu::insert_bulk(fc(*t), image.data(), image.size(), &k, 1).code, gpu::GpuErrc::bad_argument);
}

// Without a device too: a structure the backend does not take is named; the
// one-line layouts, auto's choices, replay (the swept one past 4 MiB too).
TEST(GpuErrors, UnsupportedSaysWhy) {
  auto swept = InterleavedSweptConfig::for_fpr(Window::count(100000), 0.01);
  ASSERT_TRUE(swept.has_value());
  EXPECT_EQ(gpu::unsupported_reason(fc(*swept)), "");
  auto plain = InterleavedEpochConfig::for_fpr(Window::count(100000), 0.01);
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(gpu::unsupported_reason(fc(*plain)), "");
  auto tlbf = TimeLimitedConfig::for_fpr(Window::count(100000), 0.01);
  ASSERT_TRUE(tlbf.has_value()) << tlbf.what();
  EXPECT_EQ(gpu::unsupported_reason({Structure::tlbf, *tlbf}), "the GPU backend does not replay tlbf");
}

}  // namespace

// meson reports exit 77 as SKIP: without a device every GPU case skipped.
int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const int rc = RUN_ALL_TESTS();
  std::string why;
  if (rc == 0 && !agebloom::gpu::gpu_available(why)) {
    std::printf("SKIP: no CUDA device: %s\n", why.c_str());
    return 77;
  }
  return rc;
}
