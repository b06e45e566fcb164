// Count windows and time windows, and the epoch schedule every segment ring
// (guarded epoch, APBF, rotating ring) shares.
//
// A count window holds the last W insertions; a time window the insertions of
// the last T ticks. Ticks are whatever monotonic unit the caller passes (TSC
// cycles in dedup_fwd, nanoseconds of packet timestamps in replay, a counter
// in tests): filters never read a clock.
#pragma once

#include <cstddef>
#include <cstdint>

#include "agebloom/core/arena.hpp"
#include "agebloom/core/error.hpp"
#include "agebloom/core/math.hpp"

namespace agebloom {

// What a window counts: insertions, or caller-supplied ticks (advance(now)).
enum class WindowKind : uint8_t { count, time };

// A sliding window: the last `span` insertions, or the last `span` ticks.
struct Window {
  WindowKind kind = WindowKind::count;  // what span counts
  uint64_t span = 0;  // insertions (count) or ticks (time)

  // The last `insertions` insertions.
  static constexpr Window count(uint64_t insertions) noexcept { return {WindowKind::count, insertions}; }
  // The last `ticks` ticks of the caller's clock (nanoseconds in the tools).
  static constexpr Window time(uint64_t ticks) noexcept { return {WindowKind::time, ticks}; }
  constexpr bool is_time() const noexcept { return kind == WindowKind::time; }  // kind == time
  constexpr bool operator==(const Window&) const = default;  // kind and span

  // window_zero / time_span_zero for an empty window, else ok.
  constexpr Status validate() const noexcept {
    if (span == 0) return kind == WindowKind::time ? Errc::time_span_zero : Errc::window_zero;
    return Errc::ok;
  }
};

// When the current segment (epoch, generation) stops taking insertions:
// after `length` insertions (count) or `length` ticks since it began (time).
// Lives in a structure's arena header, so it is plain data.
struct EpochSchedule {
  uint64_t length = 1;       // insertions or ticks per epoch
  uint64_t fill = 0;         // count: insertions into the current epoch
  uint64_t epoch_start = 0;  // time: tick at which the current epoch began
  uint64_t last_now = 0;     // time: latest tick seen, to reject time going backwards
  uint64_t fill_cap = 0;     // time: an epoch also ends after this many insertions
                             // (the rotating ring's capacity trigger); 0 = never
  WindowKind kind = WindowKind::count;
  bool started = false;      // time: the first advance() anchors epoch_start

  // A schedule of epochs of `length` (0 taken as 1) insertions or ticks.
  static constexpr EpochSchedule make(WindowKind kind, uint64_t length) noexcept {
    EpochSchedule s;
    s.kind = kind;
    s.length = length == 0 ? 1 : length;
    return s;
  }

  // Count windows: called once per insertion, before its bits are set.
  // True when the epoch just completed its quota, i.e. insertion number t
  // with t > 0 and t mod length == 0 (Guarded Epoch Bloom Filters, Algorithm 1): rotate first.
  // Time windows with a fill_cap: the same on the insertion count, and the
  // new epoch's clock starts at the latest tick seen.
  constexpr bool rotate_before_insert() noexcept {
    const uint64_t quota = kind == WindowKind::count ? length : fill_cap;
    if (quota == 0) return false;
    if (fill == quota) {
      fill = 1;
      if (kind == WindowKind::time) epoch_start = last_now;
      return true;
    }
    ++fill;
    return false;
  }

  // How many insertions the current epoch still takes before
  // rotate_before_insert() says rotate (0: the next one rotates; UINT64_MAX:
  // no quota). A bulk insert checks the schedule once per such run of keys
  // and records the run with consume(), instead of asking per key.
  constexpr uint64_t insertions_before_rotation() const noexcept {
    const uint64_t quota = kind == WindowKind::count ? length : fill_cap;
    return quota == 0 ? ~uint64_t{0} : quota - fill;
  }
  // Records n <= insertions_before_rotation() insertions, none rotating: the
  // state n calls of rotate_before_insert() would have left.
  constexpr void consume(uint64_t n) noexcept {
    const uint64_t quota = kind == WindowKind::count ? length : fill_cap;
    if (quota != 0) fill += n;
  }

  // Time windows: how many epoch boundaries lie between the last call and
  // `now`. The caller rotates min(result, segments) times: an idle gap longer
  // than the whole span expires everything in O(segments) work.
  constexpr Expected<uint64_t> epochs_elapsed(uint64_t now) noexcept {
    if (kind != WindowKind::time) return uint64_t{0};
    if (!started) {
      started = true;
      epoch_start = now;
      last_now = now;
      return uint64_t{0};
    }
    if (now < last_now) return Errc::time_went_backwards;
    last_now = now;
    const uint64_t elapsed = (now - epoch_start) / length;
    epoch_start += elapsed * length;
    if (elapsed) fill = 0;
    return elapsed;
  }

  // Whether `saved` (a schedule read from a snapshot, this one being the
  // live filter's) is one this filter can be in: the same kind, length and
  // cap (fixed at create), a count within its quota (past it, no epoch would
  // ever end), a started flag of 0 or 1, and a started time window's epoch
  // begun by its latest tick. Other clock values are accepted: they only
  // decide when epochs end.
  bool accepts(const EpochSchedule& saved) const noexcept {
    unsigned char kind_byte, started_byte;
    __builtin_memcpy(&kind_byte, &saved.kind, 1);
    __builtin_memcpy(&started_byte, &saved.started, 1);
    if (kind_byte != static_cast<unsigned char>(kind) || saved.length != length || saved.fill_cap != fill_cap ||
        started_byte > 1)
      return false;
    const uint64_t quota = kind == WindowKind::count ? length : fill_cap;
    if (quota != 0 && saved.fill > quota) return false;
    return kind != WindowKind::time || !started_byte || saved.epoch_start <= saved.last_now;
  }

  // Time windows: calls rotate() once per epoch that ended by `now`, at most
  // `segments` times (after that many every segment has been cleared).
  template <class Rotate>
  constexpr Status advance(uint64_t now, uint64_t segments, Rotate&& rotate) noexcept {
    auto elapsed = epochs_elapsed(now);
    if (!elapsed) return elapsed.error();
    const uint64_t n = *elapsed < segments ? *elapsed : segments;
    for (uint64_t i = 0; i < n; ++i) rotate();
    return Errc::ok;
  }
};

// The header every segment ring carves first in its arena, before its words:
// the guarded epoch filter (and so the ring), the one-line guarded epoch
// filter, and the age-partitioned filters, where `current` is the physical
// slice of the newest generation. Public and plain, so that an arena image
// can be read and planned elsewhere (the GPU backend) from this definition.
struct EpochRingHeader {
  EpochSchedule schedule;  // when the current segment ends
  uint64_t insertions;     // insertions so far
  uint32_t current;  // the segment (slice) insertions go to

  // Starts a new ring in place (field by field: the arena's other bytes are
  // left as they are): segment 0 current, nothing inserted, epochs of
  // `length` insertions or ticks; a time window's epoch also ends after
  // `fill_cap` insertions when it is not 0 (--on-flood keep-fpr).
  constexpr void start(WindowKind kind, uint64_t length, uint64_t fill_cap = 0) noexcept {
    schedule = EpochSchedule::make(kind, length);
    if (kind == WindowKind::time) schedule.fill_cap = fill_cap;
    current = 0;
    insertions = 0;
  }
  // Whether `saved` (read from a snapshot; this is the live filter's) is a
  // ring this filter can be in: its schedule accepted, its current segment
  // one of the `segments`.
  bool accepts(const EpochRingHeader& saved, uint64_t segments) const noexcept {
    return schedule.accepts(saved.schedule) && saved.current < segments;
  }
  // The same for the saved copy of this header in an arena image (false if
  // the image does not reach it): the accepts_image() of the ring filters.
  bool accepts_image(const ArenaImage& image, uint64_t segments) const noexcept {
    EpochRingHeader saved;
    return image.read(this, saved) && accepts(saved, segments);
  }
};

// An epoch of a guarded epoch filter (any layout) keeping `window` with r
// live epochs, for the models: its length, ℓ = ⌈span / r⌉ insertions
// (count) or ticks (time).
constexpr uint64_t epoch_length(Window window, uint32_t r) noexcept {
  return r ? math::ceil_div(window.span, r) : 0;
}
// The insertions one segment is expected to take while current: the
// window's items (capacity, else a count window's span) over r, or
// epoch_capacity when a time window's epochs also end at that fill (a flood
// ends them early: --on-flood keep-fpr).
constexpr double epoch_load(Window window, uint32_t r, uint64_t capacity, uint64_t epoch_capacity) noexcept {
  const uint64_t n = capacity ? capacity : (window.is_time() ? 0 : window.span);
  const double load = r ? static_cast<double>(n) / r : 0.0;
  const double cap = static_cast<double>(epoch_capacity);
  return window.is_time() && epoch_capacity && cap < load ? cap : load;
}

// The bulk insert of the line layouts over keys [0, m): each maximal run of
// keys that fits in the current epoch goes to run(begin, end, current), the
// schedule consulted once per run, not once per key; a key that opens a new
// epoch goes to scalar(i), the filter's own call that rotates. The state is
// what m scalar calls leave.
template <class Scalar, class Run>
constexpr void for_each_epoch_run(EpochRingHeader& state, size_t m, Scalar&& scalar, Run&& run) noexcept {
  for (size_t i = 0; i < m;) {
    const uint64_t room = state.schedule.insertions_before_rotation();
    if (room == 0) {
      scalar(i++);
      continue;
    }
    const size_t end = room < m - i ? i + static_cast<size_t>(room) : m;
    run(i, end, state.current);
    state.schedule.consume(end - i);
    state.insertions += end - i;
    i = end;
  }
}

}  // namespace agebloom
