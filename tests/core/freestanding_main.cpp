// Compiled with -ffreestanding -fno-exceptions -fno-rtti and linked without
// libstdc++ (-nostdlib++ under clang; -nodefaultlibs -lc -lgcc under g++ 12,
// which lacks the flag): if any core header needed the C++ runtime
// (exceptions, RTTI, operator new, iostreams), this program would not build.
// It also runs the core end to end over a static arena and returns non-zero
// on a wrong answer, so the build alone is not the whole check.
#include "agebloom/agebloom.hpp"

namespace {
alignas(64) unsigned char g_arena[1 << 20];
}

extern "C" int main() {  // extern "C": under -ffreestanding clang does not treat main as special
  using namespace agebloom;
  Arena arena(g_arena, sizeof g_arena);
  auto cfg = GuardedEpochConfig::for_fpr(Window::count(1000), 0.01, {.r = 4});
  if (!cfg) return 10;
  auto need = GuardedEpochFilter::bytes_needed(*cfg);
  if (!need || *need > sizeof g_arena) return 11;
  auto f = GuardedEpochFilter::create(*cfg, arena);
  if (!f) return 12;
  const Hasher hash(0x5eed);
  for (uint64_t i = 0; i < 5000; ++i) {
    const KeyHash h = hash(&i, sizeof i);
    if (f->test_and_insert(h) && i >= 4000) {
      // Fresh keys may be false positives; not an error by itself.
    }
  }
  // The last 1000 insertions must all be present (Guarded Epoch Bloom Filters, Lemma 1).
  for (uint64_t i = 4000; i < 5000; ++i)
    if (!f->contains(hash(&i, sizeof i))) return 13;
  // The other structures, through the same arena, freestanding too.
  auto apbf = ApbfConfig::blocked(Window::count(1000), 3, 8, 512, 4);
  auto il = InterleavedEpochConfig::for_fpr(Window::count(1000), 0.01);
  auto wide = Interleaved128Config::for_fpr(Window::count(1000), 0.01);
  auto pocket = PocketEpochConfig::for_fpr(Window::count(1000), 0.01);
  auto queue = QueueEpochConfig::for_fpr(Window::count(1000), 0.01);
  if (!apbf || !il || !wide || !pocket || !queue) return 15;
  auto a = ApbfFilter::create(*apbf, arena);
  auto b = InterleavedEpochFilter<uint64_t>::create(*il, arena);
  auto c = InterleavedEpochFilter<bits::Word128>::create(*wide, arena);
  auto d = PocketEpochFilter::create(*pocket, arena);
  auto e = QueueEpochFilter::create(*queue, arena);
  if (!a || !b || !c || !d || !e) return 16;
  for (uint64_t i = 0; i < 3000; ++i) {
    const KeyHash h = hash(&i, sizeof i);
    a->insert(h);
    b->insert(h);
    c->insert(h);
    d->insert(h);
    e->insert(h);
  }
  for (uint64_t i = 2000; i < 3000; ++i)
    if (!a->contains(hash(&i, sizeof i)) || !b->contains(hash(&i, sizeof i)) || !c->contains(hash(&i, sizeof i)) ||
        !d->contains(hash(&i, sizeof i)) || !e->contains(hash(&i, sizeof i)))
      return 17;
  // The inferential BTBF: posteriors of keys in the window are high, of an
  // expired key exactly 0 (Theorem 2), all without libm or libstdc++.
  auto bt = BlockTimingConfig::for_fpr(Window::count(1000), 0.01);
  if (!bt) return 18;
  auto t = BlockTimingFilter::create(*bt, arena);
  auto post = inference::BlockTimingPosterior::make(*bt, *inference::DistinctItems::uniform(1 << 16));
  if (!t || !post) return 19;
  for (uint64_t i = 0; i < 3000; ++i) t->insert(hash(&i, sizeof i));
  const double prior = inference::neutral_prior(1000);
  for (uint64_t i = 2500; i < 3000; ++i) {
    const double p = post->posterior(t->observe(hash(&i, sizeof i)), prior);
    if (!(p > 0.5 && p <= 1.0)) return 20;
  }
  uint64_t old = 0;
  const TimerObservation gone = t->observe(hash(&old, sizeof old));
  if (gone.expired() != !t->contains(hash(&old, sizeof old))) return 21;
  if (gone.expired() && post->posterior(gone, prior) != 0.0) return 22;
  Arena tiny(g_arena, 16);
  if (GuardedEpochFilter::create(*cfg, tiny).code() != Errc::arena_too_small) return 14;
  return 0;
}
