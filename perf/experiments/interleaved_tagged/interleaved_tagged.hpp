// The one-line guarded epoch layout with lanes cleared where a key touches
// them (an experiment of issue [fastpath] item 3: does it pay?).
//
// The plain layout (interleaved_epoch.hpp) clears a lane of every line at
// each rotation: at W = 1M with r = 7, 55,711 line writes per 149,797
// insertions beside the one line each insertion writes. Here each line keeps
// a tag, the epoch (mod 256) of its last insertion, in a byte array beside
// the lines. The lanes of epochs after the tag can hold only data of epochs
// r + 1 or more before them (an insertion into this line in any of those
// epochs would have moved the tag), which the plain layout would have
// cleared: a query masks them off, an insertion zeroes them, sets its bits
// and moves the tag. A rotation only counts the epoch, and clamps 1/64 of
// the tags (those more than r + 1 behind are set to r + 1 behind, which
// reads the same), so no tag is ever more than r + 65 < 256 epochs behind
// and none wraps. Verdicts equal the plain layout's with the same r.
#pragma once

#include <cstddef>
#include <cstdint>

#include "agebloom/core/arena.hpp"
#include "agebloom/core/bits.hpp"
#include "agebloom/core/error.hpp"
#include "agebloom/core/hash.hpp"
#include "agebloom/core/isa.hpp"
#include "agebloom/core/window.hpp"
#include "agebloom/filters/bulk_ops.hpp"
#include "agebloom/filters/interleaved_epoch.hpp"
#include "agebloom/filters/lane_lines.hpp"

namespace agebloom {

// The tagged layout's header: the ring's, and the epoch count (mod 256 in tags).
struct TaggedRingHeader : EpochRingHeader {
  uint64_t epoch;  // rotations so far
};

class InterleavedTaggedFilter : public BulkOps<InterleavedTaggedFilter, 16> {
 public:
  using Config = InterleavedEpochConfig;  // 64-bit lanes, r + 1 <= 8 segments
  using Line = LaneLines<uint64_t>::Line;
  static constexpr uint32_t kClampSlices = 64;  // a rotation clamps 1/64 of the tags

  constexpr InterleavedTaggedFilter() noexcept = default;

  static constexpr Expected<size_t> bytes_needed(const Config& c) noexcept {
    if (Status s = check(c); !s) return s;
    return ArenaLayout{}.add(sizeof(TaggedRingHeader)).add(LaneLines<uint64_t>::bytes(c.lines)).add(c.lines).bytes();
  }

  static Expected<InterleavedTaggedFilter> create(const Config& c, Arena& arena) noexcept {
    if (Status s = check(c); !s) return s;
    const size_t mark = arena.used();
    auto carved = LaneLines<uint64_t>::carve_with<TaggedRingHeader>(arena, c.lines);
    if (!carved) return carved.error();
    auto tags = arena.carve_array<uint8_t>(c.lines);
    if (!tags) {
      arena.rewind(mark);
      return tags.error();
    }
    InterleavedTaggedFilter f;
    f.cfg_ = c;
    f.state_ = carved->header;
    f.lines_ = carved->lines;
    f.base_ = &carved->lines.of(KeyHash{0, 0});  // line 0 (placement of h1 = 0)
    f.tags_ = *tags;
    for (uint64_t i = 0; i < c.lines; ++i) f.tags_[i] = 0;
    f.state_->start(c.window.kind, c.epoch_length(), c.epoch_capacity);
    f.state_->epoch = 0;
    f.fill_live_table();
    f.use_isa(Isa::avx2);
    return f;
  }

  Status advance(uint64_t now) noexcept {
    return state_->schedule.advance(now, cfg_.segments(), [this] { rotate(); });
  }

  bool contains(KeyHash h) const noexcept {
    const uint64_t x = index_of(h);
    return covers(base_[x], cfg_.placement().word(h), live_of(x, state_->current));
  }

  void insert(KeyHash h) noexcept {
    if (state_->schedule.rotate_before_insert()) rotate();
    ++state_->insertions;
    (void)probe_and_set(index_of(h), cfg_.placement().word(h), state_->current, epoch_tag());
  }

  bool test_and_insert(KeyHash h) noexcept {
    const uint64_t x = index_of(h);
    const uint64_t mask = cfg_.placement().word(h);
    // The verdict before a rotation, as the plain layout's: a rotation
    // expires the oldest epoch's lane, which cannot hold a live verdict.
    const bool hit = covers(base_[x], mask, live_of(x, state_->current));
    if (state_->schedule.rotate_before_insert()) rotate();
    ++state_->insertions;
    (void)probe_and_set(x, mask, state_->current, epoch_tag());
    return hit;
  }

  void prefetch(KeyHash h) const noexcept {
    const uint64_t x = index_of(h);
    bits::prefetch_write(&base_[x]);
    bits::prefetch_write(&tags_[x]);
  }

  // The scalar calls' verdicts and state, a chunk's lines and tags requested
  // ahead, the schedule consulted once per run inside an epoch.
  void test_and_insert_bulk(const KeyHash* h, size_t n, bool* out) noexcept {
    constexpr size_t kChunk = 64;
    uint64_t at[kChunk];
    for (size_t base = 0; base < n; base += kChunk) {
      const size_t m = n - base < kChunk ? n - base : kChunk;
      for (size_t i = 0; i < m; ++i) {
        at[i] = index_of(h[base + i]);
        bits::prefetch_write(&base_[at[i]]);
        bits::prefetch_write(&tags_[at[i]]);
      }
      for_each_epoch_run(
          *state_, m, [&](size_t i) { out[base + i] = test_and_insert(h[base + i]); },
          [&](size_t i, size_t end, uint32_t current) {
            const uint8_t tag = epoch_tag();
#if AGEBLOOM_INTRINSICS_DISPATCH
            if (avx2_ && cfg_.k == 8) return run_avx2(h + base + i, at + i, end - i, current, tag, out + base + i);
#endif
            for (; i < end; ++i) out[base + i] = probe_and_set(at[i], cfg_.placement().word(h[base + i]), current, tag);
          });
    }
  }

  void use_isa(Isa widest) noexcept { avx2_ = widest >= Isa::avx2 && cpu_has_avx2(); }
  Isa isa() const noexcept { return avx2_ && cfg_.k == 8 ? Isa::avx2 : Isa::baseline; }

  const Config& config() const noexcept { return cfg_; }
  uint64_t insertions() const noexcept { return state_->insertions; }
  uint32_t current_segment() const noexcept { return state_->current; }
  const EpochSchedule& epoch_schedule() const noexcept { return state_->schedule; }
  double fill_ratio() const noexcept { return lines_.fill_ratio(); }  // counts stale lanes too

 private:
  static constexpr Status check(const Config& c) noexcept {
    if (Status s = c.validate(); !s) return s;
    if (c.lane_bits != 64) return Errc::block_size_invalid;
    return Errc::ok;
  }

  uint64_t index_of(KeyHash h) const noexcept { return placement::Lanes{cfg_.lines, 0}.line(h); }
  uint8_t epoch_tag() const noexcept { return static_cast<uint8_t>(state_->epoch); }

  // Lanes whose epoch is live and not after line x's tag, as bits.
  uint8_t live_of(uint64_t x, uint32_t current) const noexcept {
    const uint8_t gap = static_cast<uint8_t>(epoch_tag() - tags_[x]);
    return live_[current][gap < cfg_.segments() ? gap : cfg_.segments()];
  }

  // live_[c][g]: with lane c current and the line's last insertion g epochs
  // ago, the lanes of epochs now - r .. now - g (none when g = r + 1).
  void fill_live_table() noexcept {
    const uint32_t s = cfg_.segments();
    for (uint32_t c = 0; c < 8; ++c)
      for (uint32_t g = 0; g <= 8; ++g) {
        uint8_t bits = 0;
        if (c < s)
          for (uint32_t age = g; age < s; ++age) bits |= static_cast<uint8_t>(1u << ((c + s - age) % s));
        live_[c][g] = bits;
      }
  }

  // Does a lane in `live` hold every bit of mask?
  static bool covers(const Line& line, uint64_t mask, uint8_t live) noexcept {
    bool hit = false;
    for (uint32_t j = 0; j < 8; ++j) hit |= ((live >> j) & 1) && (line.lane[j] & mask) == mask;
    return hit;
  }

  // Line x's verdict for mask, then its stale lanes zeroed, mask set in the
  // current lane and the tag moved to this epoch.
  bool probe_and_set(uint64_t x, uint64_t mask, uint32_t current, uint8_t tag) noexcept {
    Line& line = base_[x];
    const uint8_t gap = static_cast<uint8_t>(tag - tags_[x]);
    const uint8_t live = live_[current][gap < cfg_.segments() ? gap : cfg_.segments()];
#if defined(__GNUC__) && !defined(__CUDACC__)
    using V = detail::U64x2;
    const V m = {mask, mask};
    const V lv = {live, live};
    V any{};
    for (uint32_t v = 0; v < 4; ++v) {
      const V sel = {uint64_t{1} << (2 * v), uint64_t{1} << (2 * v + 1)};
      V x2;
      __builtin_memcpy(&x2, &line.lane[2 * v], sizeof x2);
      x2 &= (V)((lv & sel) == sel);
      any |= (V)((x2 & m) == m);
      __builtin_memcpy(&line.lane[2 * v], &x2, sizeof x2);
    }
    const bool hit = (any[0] | any[1]) != 0;
#else
    bool hit = false;
    for (uint32_t j = 0; j < 8; ++j) {
      if (!((live >> j) & 1)) line.lane[j] = 0;
      hit |= (line.lane[j] & mask) == mask;
    }
#endif
    line.lane[current] |= mask;
    tags_[x] = tag;
    return hit;
  }

#if AGEBLOOM_INTRINSICS_DISPATCH
  // probe_and_set over a run in one epoch, k = 8, in AVX2: the line is two
  // registers, the live lanes two masks from the tag's gap; both registers
  // are stored back (the stale lanes zeroed, the current one with the pattern).
  AGEBLOOM_TARGET_AVX2 void run_avx2(const KeyHash* h, const uint64_t* at, size_t n, uint32_t current, uint8_t tag,
                                     bool* out) noexcept {
    const __m128i ones = _mm_setr_epi8(1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16, 32, 64, -128);
    const __m128i offsets = _mm_set1_epi8(7);
    const __m256i sel03 = _mm256_setr_epi64x(1, 2, 4, 8), sel47 = _mm256_setr_epi64x(16, 32, 64, 128);
    const __m256i cur03 = _mm256_cmpeq_epi64(_mm256_setr_epi64x(0, 1, 2, 3), _mm256_set1_epi64x(current));
    const __m256i cur47 = _mm256_cmpeq_epi64(_mm256_setr_epi64x(4, 5, 6, 7), _mm256_set1_epi64x(current));
    // Locals: a byte store may alias any member, which the compiler would reload per key.
    const uint32_t s = cfg_.segments();
    uint8_t live[9];
    for (uint32_t g = 0; g <= 8; ++g) live[g] = live_[current][g];
    Line* const lines = base_;
    uint8_t* const tags = tags_;
    for (size_t i = 0; i < n; ++i) {
      auto* const x = reinterpret_cast<__m256i*>(&lines[at[i]]);
      const uint8_t gap = static_cast<uint8_t>(tag - tags[at[i]]);
      const __m256i lv = _mm256_set1_epi64x(live[gap < s ? gap : s]);
      const __m128i pattern = _mm_shuffle_epi8(ones, _mm_and_si128(_mm_cvtsi64_si128(static_cast<long long>(h[i].h2)), offsets));
      const __m256i mask = _mm256_broadcastq_epi64(pattern);
      const __m256i l03 = _mm256_and_si256(_mm256_load_si256(x), _mm256_cmpeq_epi64(_mm256_and_si256(lv, sel03), sel03));
      const __m256i l47 = _mm256_and_si256(_mm256_load_si256(x + 1), _mm256_cmpeq_epi64(_mm256_and_si256(lv, sel47), sel47));
      const __m256i held = _mm256_or_si256(_mm256_cmpeq_epi64(_mm256_and_si256(l03, mask), mask),
                                           _mm256_cmpeq_epi64(_mm256_and_si256(l47, mask), mask));
      out[i] = !_mm256_testz_si256(held, held);
      _mm256_store_si256(x, _mm256_or_si256(l03, _mm256_and_si256(mask, cur03)));
      _mm256_store_si256(x + 1, _mm256_or_si256(l47, _mm256_and_si256(mask, cur47)));
      tags[at[i]] = tag;
    }
  }
#endif

  void rotate() noexcept {
    state_->current = (state_->current + 1) % cfg_.segments();
    ++state_->epoch;
    // Clamp one slice of the tags: every tag is clamped once per 64 epochs.
    const uint64_t slice = state_->epoch % kClampSlices;
    const uint64_t from = cfg_.lines * slice / kClampSlices, to = cfg_.lines * (slice + 1) / kClampSlices;
    const uint8_t now = epoch_tag();
    const uint8_t s = static_cast<uint8_t>(cfg_.segments());
    for (uint64_t i = from; i < to; ++i)
      if (static_cast<uint8_t>(now - tags_[i]) > s) tags_[i] = static_cast<uint8_t>(now - s);
  }

  Config cfg_{};
  TaggedRingHeader* state_ = nullptr;
  LaneLines<uint64_t> lines_{};
  Line* base_ = nullptr;
  uint8_t* tags_ = nullptr;
  uint8_t live_[8][9] = {};
  bool avx2_ = false;
};

}  // namespace agebloom
