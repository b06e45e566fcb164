// The memory floor: what touching a layout's lines costs on this machine
// with nothing else done, beside the filters in the same run.
//
// Issue [fastpath] bounds test_and_insert at 0.15 of rte_member HT cache's
// cycles. Whether a one-access layout can meet that on a given machine
// depends first on what one random read-modify-write of its line(s) costs
// there: at W = 64M every key's line is a cache miss and, on a VM whose host
// maps guest memory with 4 KB pages, a TLB miss with a two-dimensional page
// walk. These subjects do exactly that work and nothing more, through the
// same harness as the filters (same keys, same bursts of 64, the same
// prefetch-the-burst-then-probe schedule, the same arena size), so a filter's
// figure over the floor's says how much of its cost is its own code, and the
// floor's ratio to HT cache says what the bound leaves for that code.
//
// Per key: the line the filter would use (LaneLines, from h1), one bit of one
// word in it (from h2) tested and set; with two lines, the same in line x + 1
// (wrapping), as the two-line layout touches. The verdict is
// whether both bits were set: not a filter (no FPR model), only the work.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "agebloom/agebloom.hpp"
#include "agebloom/filters/lane_lines.hpp"
#include "bench_common.hpp"
#include "planned_config.hpp"
#include "subject_memory.hpp"

namespace agebloom::perf {
namespace {

// kLines = 1: sized and placed as the one-line interleaved layout;
// kLines = 2: as the two-line layout (17.9 bits per item at 1%). The lines
// are the layouts' own storage (LaneLines: the same line and pair per key).
template <unsigned kLines>
class MemoryFloor {
  static_assert(kLines == 1 || kLines == 2);
  static constexpr Structure kLike = kLines == 1 ? Structure::interleaved : Structure::two_line;
  using Lines = LaneLines<uint64_t>;
  using Line = Lines::Line;
  using Pair = Lines::Pair;

 public:
  static constexpr const char* kName = kLines == 1 ? "floor-one-line" : "floor-two-lines";
  static constexpr bool kHashesKeys = false;

  explicit MemoryFloor(uint64_t w) : window_(w), bytes_(arena_bytes(w)), memory_(bytes_) {
    if (!memory_.data()) die((std::string("no room for the floor's lines on the ") + memory_.where()).c_str());
    Arena arena(memory_.data(), bytes_);
    auto lines = Lines::carve(arena, bytes_ / sizeof(Line));
    if (!lines) die(lines.what());
    lines_ = *lines;
  }
  MemoryFloor(const MemoryFloor&) = delete;
  MemoryFloor& operator=(const MemoryFloor&) = delete;

  void insert(const Chunk& c, size_t i) noexcept { (void)touch(locate(c.hashes[i]), c.hashes[i].h2); }
  bool contains(const Chunk& c, size_t i) const noexcept { return look(locate(c.hashes[i]), c.hashes[i].h2); }
  bool test_and_insert(const Chunk& c, size_t i) noexcept { return touch(locate(c.hashes[i]), c.hashes[i].h2); }
  void insert_bulk(const Chunk& c, size_t i, size_t n) noexcept {
    bool out[kBurst];
    touch_bulk(&c.hashes[i], n, out);
  }
  void contains_bulk(const Chunk& c, size_t i, size_t n, bool* out) const noexcept {
    Pair at[kBurst];
    locate_all(&c.hashes[i], n, at);
    for (size_t j = 0; j < n; ++j) out[j] = look(at[j], c.hashes[i + j].h2);
  }
  void test_and_insert_bulk(const Chunk& c, size_t i, size_t n, bool* out) noexcept {
    touch_bulk(&c.hashes[i], n, out);
  }
  // End to end, as the filters' bulk_hashed: the burst hashed, then touched.
  void test_and_insert_bulk_hashed(const Chunk& c, size_t i, size_t n, bool* out) noexcept {
    KeyHash h[kBurst];
    hasher_.hash_bulk(&c.ptrs[i], &c.lengths[i], n, h);
    touch_bulk(h, n, out);
  }

  double bits_per_item() const noexcept { return static_cast<double>(bytes_) * 8 / static_cast<double>(window_); }
  double model_fpr() const noexcept { return std::nan(""); }  // not a filter
  std::string describe() const {
    return std::string("memory floor: ") + (kLines == 1 ? "1 line" : "2 adjacent lines") + " per key, sized as " +
           info(kLike).name + " bytes=" + std::to_string(bytes_) + memory_.label();
  }

 private:
  [[noreturn]] static void die(const char* why) {
    std::fprintf(stderr, "%s: %s\n", kName, why);
    std::exit(1);
  }

  // The key's line(s), found as the layout finds them (second unused with one line).
  Pair locate(KeyHash h) const noexcept {
    if constexpr (kLines == 1) return {&lines_.of(h), nullptr};
    else return lines_.pair_of(h);
  }

  // One bit of one word per line: word from h2's bits 6-8 (and 15-17 for the
  // second line), bit from bits 0-5 (and 9-14).
  static bool rmw(Line& l, uint64_t h2) noexcept {
    uint64_t& w = l.lane[(h2 >> 6) & 7];
    const uint64_t bit = uint64_t{1} << (h2 & 63);
    const bool had = (w & bit) != 0;
    w |= bit;
    return had;
  }
  static bool has(const Line& l, uint64_t h2) noexcept { return (l.lane[(h2 >> 6) & 7] >> (h2 & 63)) & 1; }

  static bool touch(Pair p, uint64_t h2) noexcept {
    bool had = rmw(*p.first, h2);
    if constexpr (kLines == 2) had &= rmw(*p.second, h2 >> 9);
    return had;
  }
  static bool look(Pair p, uint64_t h2) noexcept {
    bool had = has(*p.first, h2);
    if constexpr (kLines == 2) had &= has(*p.second, h2 >> 9);
    return had;
  }

  // The filters' schedule: every line of the burst located and requested
  // (bursts are at most 64 keys, the filters' chunk), then each key's lines
  // read, tested and written from the located pointers.
  void locate_all(const KeyHash* h, size_t n, Pair* at) const noexcept {
    for (size_t j = 0; j < n; ++j) {
      at[j] = locate(h[j]);
      bits::prefetch_write(at[j].first);
      if constexpr (kLines == 2) bits::prefetch_write(at[j].second);
    }
  }
  void touch_bulk(const KeyHash* h, size_t n, bool* out) noexcept {
    Pair at[kBurst];
    locate_all(h, n, at);
    for (size_t j = 0; j < n; ++j) out[j] = touch(at[j], h[j].h2);
  }

  // The filter's own arena size for the same window and FPR, less nothing:
  // its header line is one line among millions.
  static size_t arena_bytes(uint64_t w) {
    auto cfg = planned_config(kLike, w);
    if (!cfg) die("the planner refused the layout this floor is sized as");
    return align_up(cfg->bytes_needed(), kCacheLine);
  }

  uint64_t window_;
  size_t bytes_;
  SubjectMemory memory_;
  Lines lines_;
  Hasher hasher_{kHashSeed};
};

}  // namespace

void register_memory_floors(uint64_t w) {
  register_subject<MemoryFloor<1>>(w);
  register_subject<MemoryFloor<2>>(w);
}

}  // namespace agebloom::perf
