// The harness's out-of-line parts: key stream, tick source, the one live
// subject, benchmark names.
#include "bench_common.hpp"

#include <time.h>

#include <chrono>
#include <thread>

namespace agebloom::perf {

uint64_t ticks() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  return __rdtsc();
#else
  return static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
#endif
}

uint64_t thread_cpu_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.tv_nsec);
}

double tick_hz() {
  static const double hz = [] {
    // 200 ms against steady_clock: the TSC is invariant (constant_tsc,
    // nonstop_tsc) on the machines this runs on, so one measurement holds.
    const auto c0 = std::chrono::steady_clock::now();
    const uint64_t t0 = ticks();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const uint64_t t1 = ticks();
    const auto c1 = std::chrono::steady_clock::now();
    return static_cast<double>(t1 - t0) / std::chrono::duration<double>(c1 - c0).count();
  }();
  return hz;
}

static uint64_t ceil_pow2(uint64_t x) {
  uint64_t p = 1;
  while (p < x) p <<= 1;
  return p;
}

Stream::Stream(uint64_t window) : window_(window), ring_(ceil_pow2(window)), mask_(ring_.size() - 1) {}

uint64_t& Stream::begin(uint64_t ordinal) {
  // 2^40 fresh ids per benchmark: far more than any run inserts.
  const auto it = resume_.try_emplace(ordinal, Resume{ordinal << 40, kRepeatSeed ^ mix64(ordinal), 0}).first;
  active_ = &it->second;
  fresh_ = active_->fresh;
  rng_ = active_->rng;
  return active_->chunks;
}

void Stream::end() {
  if (!active_) return;
  active_->fresh = fresh_;
  active_->rng = rng_;
  active_ = nullptr;
}

void Stream::next_insertions(Chunk& c, size_t n, unsigned hit_pct) {
  // Repeat when the draw falls below hit_pct% of 2^64.
  const uint64_t threshold = hit_pct >= 100 ? ~uint64_t{0} : (~uint64_t{0} / 100) * hit_pct;
  for (size_t i = 0; i < n; ++i) {
    uint64_t key;
    const uint64_t live = pos_ < window_ ? pos_ : window_;
    if (hit_pct != 0 && live != 0 && rand() < threshold) {
      key = ring_[(pos_ - 1 - reduce(rand(), live)) & mask_];
    } else {
      key = key_of(fresh_++);
    }
    c.keys[i] = key;
    ring_[pos_++ & mask_] = key;
  }
  c.size = n;
}

void Stream::live_sample(Chunk& c, size_t n, uint64_t salt) {
  const uint64_t live = pos_ < window_ ? pos_ : window_;
  uint64_t r = mix64(salt ^ kRepeatSeed);
  for (size_t i = 0; i < n; ++i) c.keys[i] = ring_[(pos_ - 1 - reduce(mix64(r += 0x9e3779b97f4a7c15ULL), live)) & mask_];
  c.size = n;
}

void Stream::negatives(Chunk& c, size_t n, uint64_t salt) {
  // Negatives are ids with the top bit set (positive ids never reach it);
  // each salt starts a run of n ids at a random offset.
  const uint64_t base = mix64(salt ^ kKeySeed);
  for (size_t i = 0; i < n; ++i) c.keys[i] = key_of(kNegativeBit | ((base + i) & (kNegativeBit - 1)));
  c.size = n;
}

namespace {
std::unique_ptr<Live> g_live;
std::string g_live_key;
uint64_t g_ordinal = 1;  // 0 is the fill
}  // namespace

void replace_live(std::unique_ptr<Live> next, std::string key) {
  g_live.reset();  // the old subject's memory is released before the new one keeps its own
  g_live = std::move(next);
  g_live_key = std::move(key);
}

Live* current_live(const std::string& key) { return g_live && key == g_live_key ? g_live.get() : nullptr; }

std::vector<uint64_t> windows() {
  return {uint64_t{1} << 16, uint64_t{1} << 20, uint64_t{1} << 24, uint64_t{1} << 26};
}

uint64_t next_ordinal() { return g_ordinal++; }

std::string bench_name(const char* subject, Op op, Form form, uint64_t w, unsigned hit) {
  static const char* const ops[] = {"insert", "contains", "test_and_insert"};
  static const char* const forms[] = {"scalar", "bulk", "bulk_hashed"};
  return std::string(ops[static_cast<int>(op)]) + "/" + subject + "/" + forms[static_cast<int>(form)] +
         "/W:" + std::to_string(w) + "/hit:" + std::to_string(hit);
}

}  // namespace agebloom::perf
