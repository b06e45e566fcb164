// The storage of the one-cache-line layouts: an array of 64-byte lines, each
// 512 / (8·sizeof(Lane)) lanes wide, where lane j of every line belongs to
// segment (or slice) j. What both interleaved filters do with it is here
// once: carve and zero it, find a key's line, clear one lane in every line
// (an epoch rotation or generation shift), prefetch, and measure the fill.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "agebloom/core/arena.hpp"
#include "agebloom/core/bits.hpp"
#include "agebloom/core/error.hpp"
#include "agebloom/core/hash.hpp"
#include "agebloom/core/math.hpp"
#include "agebloom/core/placement.hpp"
#include "agebloom/filters/lane_lines_avx512.hpp"

namespace agebloom {

#if defined(__GNUC__) && !defined(__CUDACC__)
namespace detail {
// 16-byte vectors of lanes (GCC/clang vector extensions: no intrinsics headers,
// so the core stays freestanding).
using U64x2 = uint64_t __attribute__((vector_size(16)));
using U32x4 = uint32_t __attribute__((vector_size(16)));
}  // namespace detail
#endif

// The fewest lines, at least `start` (a lower bound such as a flat filter's
// size), for which meets(lines) holds: grow from start until it does, then
// bisect down to the fewest. The growth starts at 2% a step (the bound is
// usually close, so the bisection's range stays short) and squares its factor
// after each failure up to doubling: a target far past the bound (FPR 1e-30,
// where the blocks' collisions dominate) takes tens of probes, not hundreds.
// The sizing search of the line layouts.
template <class Meets>
constexpr Expected<uint64_t> fewest_lines(double start, Meets&& meets) noexcept {
  const uint64_t max_lines = kMaxStructureBits / 512;
  uint64_t fails = 0;
  double lines = start, growth = 1.02;
  for (int step = 0; step < 600; ++step, lines *= growth, growth = growth * growth < 2.0 ? growth * growth : 2.0) {
    if (!(lines <= static_cast<double>(max_lines))) return Errc::too_large;
    uint64_t n = math::ceil_to_u64(lines);
    if (n <= fails) continue;
    if (!meets(n)) {
      fails = n;
      continue;
    }
    while (n / 2 > fails && meets(n / 2)) n /= 2;
    return math::bisect_smallest(fails, n, meets);
  }
  return Errc::too_large;
}

// The lines of a one-line filter: 512-bit lines of 64/sizeof(Lane) lanes,
// one lane per segment or slice, so a key's bits in every lane are one line.
// Lane: uint32_t, uint64_t or bits::Word128 (four 128-bit lanes).
template <class Lane>
class LaneLines {
  static_assert(sizeof(Lane) == 16 || sizeof(Lane) == 8 || sizeof(Lane) == 4, "lanes of 128, 64 or 32 bits");

 public:
  static constexpr uint32_t kLaneBits = sizeof(Lane) * 8;  // bits per lane
  static constexpr uint32_t kLanes = 512 / kLaneBits;  // lanes per line

  // One 64-byte line; lane j is segment (or slice) j's word of the line.
  struct alignas(64) Line {
    Lane lane[kLanes];
  };

  // Bytes of count lines.
  static constexpr size_t bytes(uint64_t count) noexcept { return count * kCacheLine; }

  // A one-line filter's state: its header, then its lines. bytes_needed and
  // create() of both one-line filters are these two calls.
  template <class Header>
  struct WithHeader {
    Header* header;  // the carved header
    LaneLines lines;  // the lines after it
  };
  // Arena bytes for a Header and count lines, from any 64-byte aligned base.
  template <class Header>
  static constexpr size_t bytes_with(uint64_t count) noexcept {
    return ArenaLayout{}.add(sizeof(Header)).add(bytes(count)).bytes();
  }
  // Carves the header and `count` zeroed lines (nothing carved on failure).
  template <class Header>
  static Expected<WithHeader<Header>> carve_with(Arena& arena, uint64_t count) noexcept {
    const size_t mark = arena.used();
    auto header = arena.carve_array<Header>(1);
    auto lines = carve(arena, count);
    if (!header || !lines) {
      arena.rewind(mark);
      return Errc::arena_too_small;
    }
    return WithHeader<Header>{*header, *lines};
  }

  // Carves `count` zeroed lines from `arena` (nothing carved on failure).
  static Expected<LaneLines> carve(Arena& arena, uint64_t count) noexcept {
    auto lines = arena.carve_array<Line>(count);
    if (!lines) return lines.error();
    LaneLines l;
    l.lines_ = *lines;
    l.count_ = count;
    for (uint64_t i = 0; i < count; ++i)
      for (auto& lane : l.lines_[i].lane) lane = Lane{};
    return l;
  }

  // The key's line: multiply-shift of h1 (h2 is left to the in-lane patterns).
  // The key's line: the Lanes placement's (core/placement.hpp), as the GPU finds it.
  Line& of(KeyHash h) const noexcept { return lines_[placement::Lanes{count_, 0}.line(h)]; }
  // Prefetches the lines h will touch first (the bulk forms call it ahead).
  void prefetch(KeyHash h) const noexcept { bits::prefetch_write(&of(h)); }
  // A burst's lines: &of(h[i]) to at[i] for i < n, each requested at L2's
  // locality (bits::prefetch_write_later) for a probe a burst later. With
  // `avx512` (the caller asked the CPU) eight keys at a time, where there are
  // fewer than 2^32 lines (lane_lines_avx512.hpp); the rest one by one.
  void locate_burst(const KeyHash* h, size_t n, void** at, bool avx512) const noexcept {
    size_t i = 0;
#if AGEBLOOM_INTRINSICS_DISPATCH
    if (avx512 && n >= 8 && count_ < (uint64_t{1} << 32))
      i = lane_lines_avx512::locate_and_request(&h[0].h1, n, count_, lines_, at);
#else
    (void)avx512;
#endif
    // A local copy: a store through `at` may alias any pointer, so the
    // compiler would reload the hashes' and the lines' addresses for every key.
    const KeyHash* hash = h;
    const LaneLines local = *this;
    for (; i < n; ++i) {
      Line* line = &local.of(hash[i]);
      bits::prefetch_write_later(line);
      at[i] = line;
    }
  }

  // A key's two adjacent lines (two_line_epoch.hpp): its line and the next,
  // the last line's next being the first.
  struct Pair {
    Line* first;   // line x, from h1
    Line* second;  // line x + 1 (the first line after the last)
  };
  // h's two lines.
  Pair pair_of(KeyHash h) const noexcept {
    const uint64_t x = placement::Lanes{count_, 0}.line(h);
    return {&lines_[x], &lines_[x + 1 == count_ ? 0 : x + 1]};
  }

  // Does any lane of `line` hold every bit of `mask`? The guarded epoch
  // line's query: a key is present when one segment has its whole pattern.
  // Four 16-byte compares (AND, compare-equal, OR) instead of eight scalar
  // ones; on the x86-64-v2 floor that is pand/pcmpeqq/por, and the compiler
  // lowers the same vector code to whatever the target has.
  static bool any_lane_covers(const Line& line, Lane mask) noexcept {
#if defined(__GNUC__) && !defined(__CUDACC__)
    if constexpr (sizeof(Lane) == 16) {
      // A lane is one 16-byte word: covered when both halves compare equal.
      const detail::U64x2 m = {mask.lo, mask.hi};
      detail::U64x2 any{};
      for (uint32_t v = 0; v < kLanes; ++v) {
        detail::U64x2 x;
        __builtin_memcpy(&x, &line.lane[v], sizeof x);
        const detail::U64x2 eq = (detail::U64x2)((x & m) == m);
        any |= eq & __builtin_shufflevector(eq, eq, 1, 0);
      }
      return any[0] != 0;
    } else {
      using Vec = std::conditional_t<sizeof(Lane) == 8, detail::U64x2, detail::U32x4>;
      constexpr uint32_t kPer = 16 / sizeof(Lane);
      Vec m;
      for (uint32_t i = 0; i < kPer; ++i) m[i] = mask;
      Vec any{};
      for (uint32_t v = 0; v < kLanes / kPer; ++v) {
        Vec x;
        __builtin_memcpy(&x, &line.lane[v * kPer], sizeof x);
        any |= (Vec)((x & m) == m);
      }
      Lane r = 0;
      for (uint32_t i = 0; i < kPer; ++i) r |= any[i];
      return r != 0;
    }
#else
    bool hit = false;
    for (uint32_t j = 0; j < kLanes; ++j) hit |= (line.lane[j] & mask) == mask;
    return hit;
#endif
  }

  // any_lane_covers with lane `skip` left out: the swept layout's query, whose
  // spare lane holds an expired segment being cleared. The same compares,
  // each lane's verdict ANDed with whether it is read.
  static bool any_lane_covers_but(const Line& line, Lane mask, uint32_t skip) noexcept {
#if defined(__GNUC__) && !defined(__CUDACC__)
    if constexpr (sizeof(Lane) == 8) {
      const detail::U64x2 m = {mask, mask};
      detail::U64x2 any{};
      for (uint32_t v = 0; v < kLanes / 2; ++v) {
        detail::U64x2 x;
        __builtin_memcpy(&x, &line.lane[v * 2], sizeof x);
        const detail::U64x2 read = {2 * v == skip ? 0 : ~uint64_t{0}, 2 * v + 1 == skip ? 0 : ~uint64_t{0}};
        any |= (detail::U64x2)((x & m) == m) & read;
      }
      return (any[0] | any[1]) != 0;
    }
#endif
    bool hit = false;
    for (uint32_t j = 0; j < kLanes; ++j) hit |= j != skip && (line.lane[j] & mask) == mask;
    return hit;
  }

  // Zeroes lanes j .. j + n - 1 of every line: clears one segment or slice
  // on rotation (n lanes when a segment is wider than a lane).
  void clear_lane(uint32_t j, uint32_t n = 1) noexcept {
    for (uint64_t i = 0; i < count_; ++i)
      for (uint32_t l = j; l < j + n; ++l) lines_[i].lane[l] = Lane{};
  }
  // Zeroes lane j of lines [from, to): a swept layout's share of a clear
  // (interleaved_epoch.hpp, InterleavedSweptConfig).
  void clear_lane_lines(uint32_t j, uint64_t from, uint64_t to) noexcept {
    for (uint64_t i = from; i < to; ++i) lines_[i].lane[j] = Lane{};
  }

  // Fraction of set bits (control plane: reads every line).
  double fill_ratio() const noexcept {
    uint64_t set = 0;
    for (uint64_t i = 0; i < count_; ++i)
      for (Lane lane : lines_[i].lane) {
        if constexpr (sizeof(Lane) == 16) set += static_cast<uint64_t>(bits::popcount(lane));
        else set += static_cast<uint64_t>(__builtin_popcountll(lane));
      }
    return static_cast<double>(set) / (static_cast<double>(count_) * 512);
  }

 private:
  Line* lines_ = nullptr;
  uint64_t count_ = 0;
};

}  // namespace agebloom
