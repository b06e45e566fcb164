// Traps every heap allocation: malloc, calloc, realloc, the aligned forms and
// (through them) operator new. While armed, any call is counted; the data
// plane and create() must leave the count at zero.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "agebloom/agebloom.hpp"
#include "agebloom/registry/structure.hpp"

#include "../common/heap_trap.hpp"

namespace {
using Armed = agebloom::testing::HeapTrap;
}  // namespace

namespace ab = agebloom;

// The trap must be able to fail: an allocation while armed is counted.
TEST(NoAllocation, TrapCountsAnAllocation) {
  long n;
  {
    Armed armed;
    auto* p = new std::vector<int>(100);
    delete p;
    n = armed.count();
  }
  EXPECT_GE(n, 2);  // operator new + free, twice each
}

template <class Filter, class Config>
void run_filter_ops(const Config& cfg, long& allocations) {
  alignas(64) static unsigned char buf[8 << 20];
  const ab::Hasher hash(42);
  std::vector<ab::KeyHash> keys(4096);  // prepared before arming
  for (uint64_t i = 0; i < keys.size(); ++i) keys[i] = hash(&i, sizeof i);
  std::vector<char> out(keys.size());
  bool* verdicts = reinterpret_cast<bool*>(out.data());
  {
    Armed armed;
    ab::Arena arena(buf, sizeof buf);
    auto f = Filter::create(cfg, arena);
    if (f) {
      uint64_t now = 1;
      for (size_t i = 0; i < 1024; ++i) {
        (void)f->advance(now += 3);
        f->insert(keys[i]);
        (void)f->contains(keys[i]);
        (void)f->test_and_insert(keys[i + 1024]);
        uint64_t x = i;
        (void)hash(&x, sizeof x);
      }
      f->insert_bulk(keys.data(), 1024);
      f->contains_bulk(keys.data(), 2048, verdicts);
      f->test_and_insert_bulk(keys.data() + 2048, 2048, verdicts);
      (void)f->fill_ratio();
      (void)cfg.model_fpr();
    }
    allocations = armed.count();
    ASSERT_TRUE(f.has_value()) << f.what();
  }
}

TEST(NoAllocation, GuardedEpochFlatCountWindow) {
  auto cfg = ab::GuardedEpochConfig::for_fpr(ab::Window::count(2000), 0.01, {.r = 8});
  ASSERT_TRUE(cfg);
  long n = -1;
  run_filter_ops<ab::GuardedEpochFilter>(*cfg, n);
  EXPECT_EQ(n, 0);
}

TEST(NoAllocation, GuardedEpochBlockedTimeWindow) {
  auto cfg = ab::GuardedEpochConfig::for_fpr(ab::Window::time(500), 0.01, {.r = 4, .block_bits = 512, .capacity = 2000});
  ASSERT_TRUE(cfg);
  long n = -1;
  run_filter_ops<ab::GuardedEpochFilter>(*cfg, n);
  EXPECT_EQ(n, 0);
}

TEST(NoAllocation, ApbfAndApbbf) {
  for (auto cfg : {ab::ApbfConfig::for_fpr(ab::Window::count(2000), 0.01),
                   ab::ApbfConfig::blocked(ab::Window::time(700), 3, 8, 512, 4, 2000)}) {
    ASSERT_TRUE(cfg);
    long n = -1;
    run_filter_ops<ab::ApbfFilter>(*cfg, n);
    EXPECT_EQ(n, 0);
  }
}

TEST(NoAllocation, InterleavedEpoch) {
  auto cfg = ab::InterleavedEpochConfig::for_fpr(ab::Window::count(2000), 0.01, {.lane_bits = 64});
  ASSERT_TRUE(cfg);
  long n = -1;
  run_filter_ops<ab::InterleavedEpochFilter<uint64_t>>(*cfg, n);
  EXPECT_EQ(n, 0);
}

TEST(NoAllocation, InterleavedApbf) {
  auto cfg = ab::InterleavedApbfConfig::for_fpr(ab::Window::count(2000), 0.01, {.lane_bits = 32});
  ASSERT_TRUE(cfg);
  long n = -1;
  run_filter_ops<ab::InterleavedApbfFilter<uint32_t>>(*cfg, n);
  EXPECT_EQ(n, 0);
}

// Every registered structure, from the registry: its sizing hook, create()
// and every operation, armed, over a count window and a time window. A new
// structure is covered by being registered.
TEST(NoAllocation, EveryRegisteredStructure) {
  ab::for_each_structure([&]<ab::Structure S>() {
    using Traits = ab::StructureTraits<S>;
    for (ab::Window w : {ab::Window::count(2000), ab::Window::time(500)}) {
      if (!(ab::info(S).windows & (w.is_time() ? ab::kTimeWindows : ab::kCountWindows))) continue;
      ab::SizingRequest r;
      r.window = w;
      r.fpr = 0.01;
      r.capacity = w.is_time() ? 2000 : 0;
      typename Traits::Config cfg{};
      bool planned = false;
      long sizing = 0;
      {
        Armed armed;
        Traits::plan(r, [&](const typename Traits::Config& c) {
          if (!planned) cfg = c, planned = true;
        });
        sizing = armed.count();
      }
      ASSERT_TRUE(planned) << ab::name(S);
      EXPECT_EQ(sizing, 0) << ab::name(S) << ": sizing allocated";
      long allocations = -1;
      run_filter_ops<typename Traits::Filter>(cfg, allocations);
      EXPECT_EQ(allocations, 0) << ab::name(S) << (w.is_time() ? " (time window)" : " (count window)");
    }
  });
}

TEST(NoAllocation, SizingAllocatesNothing) {
  long n;
  {
    Armed armed;
    auto a = ab::GuardedEpochConfig::for_fpr(ab::Window::count(1'000'000), 0.001, {.r = 8, .block_bits = 512});
    auto b = ab::GuardedEpochConfig::for_bits_per_item(ab::Window::count(20'000), 14, 8);
    auto c = ab::ApbfConfig::for_fpr(ab::Window::count(1'000'000), 0.001);
    auto d = ab::InterleavedEpochConfig::for_fpr(ab::Window::count(1'000'000), 0.01);
    auto e = ab::RotatingRing::config(ab::Window::time(1000), 4, 0.01, 512, 100, true);
    (void)a;
    (void)b;
    (void)c;
    (void)d;
    (void)e;
    n = armed.count();
  }
  EXPECT_EQ(n, 0);
}

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
