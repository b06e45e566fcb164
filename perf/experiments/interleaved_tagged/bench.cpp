#include <x86intrin.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "interleaved_tagged.hpp"
using namespace agebloom;
static uint64_t sm(uint64_t& s) { uint64_t z = (s += 0x9E3779B97F4A7C15ull); z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull; z = (z ^ (z >> 27)) * 0x94D049BB133111EBull; return z ^ (z >> 31); }
template <class F> struct Sub { void* mem; F f; };
template <class F> Sub<F> make(const InterleavedEpochConfig& c) {
  size_t b = *F::bytes_needed(c); void* m = std::aligned_alloc(64, (b + 63) / 64 * 64); Arena a(m, b);
  auto f = F::create(c, a); if (!f) { std::puts("create"); std::exit(1); } return {m, *f};
}
// cycles per key over `keys` fresh keys (test_and_insert_bulk in bursts of 64)
template <class F> double drive(F& f, uint64_t keys, uint64_t seed, bool time_it) {
  constexpr size_t kBlock = 65536; static std::vector<KeyHash> h(kBlock); static bool out[64];
  uint64_t s = seed, cyc = 0, done = 0, sink = 0;
  while (done < keys) {
    for (auto& k : h) k = KeyHash{sm(s), sm(s)};
    uint64_t t0 = __rdtsc();
    for (size_t i = 0; i < kBlock; i += 64) { f.test_and_insert_bulk(&h[i], 64, out); sink += out[0]; }
    cyc += __rdtsc() - t0; done += kBlock;
  }
  if (sink == ~0ull) std::puts("");
  return time_it ? double(cyc) / done : 0;
}
int main(int argc, char** argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 3;
  for (uint64_t w : {uint64_t{1} << 20, uint64_t{1} << 26}) {
    auto c = *InterleavedEpochConfig::for_fpr(Window::count(w), 0.01, {.lane_bits = 64});
    std::printf("W=%llu r=%u k=%u lines=%llu bits/item=%.2f (+%.2f tag)\n", (unsigned long long)w, c.r, c.k, (unsigned long long)c.lines, c.bits_per_item(), 8.0 * c.lines / w);
    auto cn = c; cn.window = Window::count(uint64_t{1} << 40); auto norot = make<InterleavedEpochFilter<>>(cn);
    auto avx = make<InterleavedEpochFilter<>>(c); auto base = make<InterleavedEpochFilter<>>(c); base.f.use_isa(Isa::baseline);
    auto tag = make<InterleavedTaggedFilter>(c); auto tagb = make<InterleavedTaggedFilter>(c); tagb.f.use_isa(Isa::baseline);
    std::printf("  isa avx=%d base=%d\n", (int)avx.f.isa(), (int)base.f.isa());
    drive(avx.f, w, 1, false); drive(base.f, w, 1, false); drive(tag.f, w, 1, false); drive(tagb.f, w, 1, false);  // fill a window
    std::vector<double> ra, rb, rt, rtb, rn; drive(norot.f, w, 1, false);
    for (int r = 0; r < rounds; ++r) {
      uint64_t seed = 100 + r; rn.push_back(drive(norot.f, w, seed, true));
      if (r % 2 == 0) { ra.push_back(drive(avx.f, w, seed, true)); rb.push_back(drive(base.f, w, seed, true)); rt.push_back(drive(tag.f, w, seed, true)); rtb.push_back(drive(tagb.f, w, seed, true)); }
      else { rtb.push_back(drive(tagb.f, w, seed, true)); rt.push_back(drive(tag.f, w, seed, true)); rb.push_back(drive(base.f, w, seed, true)); ra.push_back(drive(avx.f, w, seed, true)); }
      std::printf("  round %d: interleaved avx2 %.1f base %.1f | tagged avx2 %.1f base %.1f | ratio avx2 %.3f base %.3f | no rotation avx2 %.1f\n", r, ra.back(), rb.back(), rt.back(), rtb.back(), rt.back() / ra.back(), rtb.back() / rb.back(), rn.back());
    }
    std::free(avx.mem); std::free(base.mem); std::free(tag.mem); std::free(tagb.mem);
  }
}
