#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>
#include "interleaved_tagged.hpp"
using namespace agebloom;
static int fails = 0;
template <class F> struct Own { std::vector<unsigned char> mem; F f; };
int run(Window win, uint32_t r, uint64_t keys, uint64_t universe, int seed, bool bulk) {
  auto c = InterleavedEpochConfig::for_fpr(win, 0.01, {.lane_bits = 64, .r = r, .capacity = win.is_time() ? 2000 : 0});
  if (!c) { std::printf("cfg fail\n"); return 1; }
  c->lines = c->lines / DIV + 1; if (getenv("LINES") && win.span == 64) c->lines = atoi(getenv("LINES"));  // small: collisions and stale lanes often
  size_t b1 = *InterleavedEpochFilter<>::bytes_needed(*c), b2 = *InterleavedTaggedFilter::bytes_needed(*c);
  void* m1 = std::aligned_alloc(64, (b1 + 63) / 64 * 64); void* m2 = std::aligned_alloc(64, (b2 + 63) / 64 * 64);
  Arena a1(m1, b1), a2(m2, b2);
  auto p = InterleavedEpochFilter<>::create(*c, a1); auto t = InterleavedTaggedFilter::create(*c, a2);
  if (!p || !t) { std::printf("create fail\n"); return 1; }
  if (getenv("TAGBASE")) t->use_isa(Isa::baseline); if (getenv("PBASE")) p->use_isa(Isa::baseline);
  if (seed == 3) std::printf("isa p=%d t=%d\n", (int)p->isa(), (int)t->isa());
  std::mt19937_64 rng(seed);
  uint64_t now = 0; uint64_t diffs = 0, hits = 0;
  std::vector<KeyHash> burst; 
  for (uint64_t i = 0; i < keys;) {
    if (win.is_time()) {
      uint64_t step = rng() % 100 == 0 ? rng() % (win.span * 3) : rng() % 4;
      now += step; p->advance(now); t->advance(now);
    }
    size_t n = 1 + rng() % 64; burst.clear();
    for (size_t j = 0; j < n; ++j) { uint64_t k = rng() % universe; burst.push_back(KeyHash{k * 0x9E3779B97F4A7C15ull ^ seed, (k + 7) * 0xC2B2AE3D27D4EB4Full}); }
    int op = rng() % 4;
    if (op == 0) { for (auto& h : burst) { bool a = p->contains(h), b = t->contains(h); diffs += a != b; } }
    else if (op == 1 && !bulk) { for (auto& h : burst) { p->insert(h); t->insert(h); } }
    else if (bulk) { bool o1[64], o2[64]; p->test_and_insert_bulk(burst.data(), n, o1); t->test_and_insert_bulk(burst.data(), n, o2); for (size_t j = 0; j < n; ++j) { diffs += o1[j] != o2[j]; hits += o1[j]; } }
    else { for (auto& h : burst) { bool a = p->test_and_insert(h), b = t->test_and_insert(h); diffs += a != b; hits += a; } }
    i += n;
  }
  std::printf("%s span=%llu r=%u lines=%llu bulk=%d: hits=%llu diffs=%llu\n", win.is_time() ? "time" : "count", (unsigned long long)win.span, r, (unsigned long long)c->lines, bulk, (unsigned long long)hits, (unsigned long long)diffs);
  std::free(m1); std::free(m2);
  return diffs != 0;
}
int main() {
  for (uint32_t r : {7u, 3u, 1u, 5u})
    for (bool bulk : {false, true}) {
      fails += run(Window::count(20000), r, 400000, 30000, r * 3 + bulk, bulk);
      fails += run(Window::time(1000), r, 400000, 30000, r * 5 + bulk, bulk);
    }
  fails += run(Window::count(64), 7, 3000000, 100000, 13, true);
  fails += run(Window::count(64), 7, 3000000, 100000, 14, false);
  // many epochs (tag wrap): short window, long run
  fails += run(Window::count(700), 7, 3000000, 3000, 11, true);
  fails += run(Window::count(700), 7, 3000000, 3000, 12, false);
  std::printf(fails ? "FAIL\n" : "ALL EQUAL\n");
  return fails != 0;
}
