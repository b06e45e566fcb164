// Host side of the exact replay, shared by the CUDA owner and the emulation
// test: the shape of a filter's arena image (where its words are, how a key's
// bits are laid out) and the plan of a batch of packets.
//
// Exact replay. Sequential dedup looks serial (each verdict depends on the
// insertions before it), but within one epoch bits are only set, never
// cleared. So the GPU records, for every bit, the index of the first packet
// that set it (its first setter: an atomicMin over the packets' stamps);
// packet i then sees a bit iff it was set before the batch began (and its
// segment has not been cleared for i yet) or its first setter is < i, which
// every packet can compute in parallel and which equals the sequential
// answer. A batch spans at most r+1 consecutive epochs, each inserting into
// its own segment (slot), so no slot is cleared twice within it. The three
// passes per batch (stamp, verdict, insert) are replay_steps.hpp; APBF's
// variant (stamps per physical slice, Algorithm 1 over what each packet sees)
// is apbf_replay.hpp; insert-on-miss iterates a batch to the fixed point of
// its verdicts (replay_steps.hpp). docs/ARCHITECTURE.md, "Bulk replay on the
// GPU with exact semantics", has the picture.
//
// Portable: no CUDA types.
#pragma once

#include <cstddef>
#include <cstdint>

#include "agebloom/core/window.hpp"
#include "agebloom/filters/guarded_epoch.hpp"
#include "agebloom/filters/interleaved_epoch.hpp"
#include "guarded_epoch_ref.hpp"
#include "portable.hpp"

namespace agebloom::gpu {

// The header every filter's arena image starts with (core/window.hpp); the
// swept layout's adds its sweep (SweptRingHeader), so its words start a line
// later (EpochShape::words_offset).
using EpochState = EpochRingHeader;
inline constexpr size_t words_offset_after(size_t header) noexcept {
  return (header + kCacheLine - 1) / kCacheLine * kCacheLine;
}
inline constexpr size_t kWordsOffset = words_offset_after(sizeof(EpochState));

// A first-setter entry no packet of the batch has stamped.
inline constexpr uint32_t kUnset = 0xffffffffu;

// What the replay needs of a configuration, whichever filter it is for.
struct EpochShape {
  GuardedEpochRef ref;    // ref.words unset: add the image base (at())
  size_t bytes = 0;       // of the arena image (the filter's bytes_needed)
  size_t words_offset = kWordsOffset;  // where the words begin in the image
  uint32_t segments = 0;  // the slots insertions cycle through: r + 1 (swept: r + 2)
  uint32_t live = 0;      // r + 1: the most rotations a time gap makes, and epochs a batch spans
  WindowKind kind = WindowKind::count;
  uint64_t epoch_length = 1;
  uint64_t fill_cap = 0;  // time windows: the ring's capacity trigger
  // The swept layout (InterleavedSweptConfig): the slot after the current one
  // is the spare, which no query reads and which the CPU filter clears a few
  // lines at a time. The replay treats the r + 2 lanes as a ring whose slot is
  // cleared when an epoch takes it (the spare is clear by then on the CPU
  // too), masks the spare off every verdict (BatchPlan::spare_for), and gives
  // the CPU's partly swept spare back at download (swept_header: the owner
  // clears the spare's first lines up to its `swept`).
  bool swept = false;
  SweptPace pace{};

  GuardedEpochRef at(void* image) const noexcept {
    GuardedEpochRef r = ref;
    r.words = reinterpret_cast<uint64_t*>(static_cast<unsigned char*>(image) + words_offset);
    return r;
  }
  // Bits of one segment: the size of a first-setter array.
  uint64_t segment_bits() const noexcept { return ref.segment_words * 64; }
  // Bytes of the words, from the first: segments one after another, or (lanes)
  // whole lines, unused lanes included.
  uint64_t words_bytes() const noexcept {
    return ref.word_stride == 1 ? ref.segment_words * 8 * segments : ref.segment_words * ref.word_stride * 8;
  }
  EpochState initial_state() const noexcept {
    EpochState s{};
    s.schedule = EpochSchedule::make(kind, epoch_length);
    s.schedule.fill_cap = fill_cap;
    return s;
  }
};

namespace detail {
// What every config shares: image size, segments, schedule, k.
template <class Config>
EpochShape common_shape(const Config& c, size_t bytes) noexcept {
  EpochShape s;
  s.bytes = bytes;
  s.segments = c.segments();
  s.live = c.segments();
  s.kind = c.window.kind;
  s.epoch_length = c.epoch_length();
  s.ref.k = c.k;
  s.ref.segments = c.segments();
  return s;
}
}  // namespace detail

// The guarded epoch filter, flat or blocked (and so the rotating ring, which
// is one). Errc of the config, if it does not validate.
inline Expected<EpochShape> shape_of(const GuardedEpochConfig& c) noexcept {
  auto need = GuardedEpochFilter::bytes_needed(c);
  if (!need) return need.code();
  EpochShape s = detail::common_shape(c, *need);
  s.fill_cap = c.window.is_time() ? c.epoch_capacity : 0;
  GuardedEpochRef& r = s.ref;
  r.segment_words = c.block_bits ? (c.segment_bits / c.block_bits) * (c.block_bits / 64) : bits::words_for(c.segment_bits);
  r.word_stride = 1;
  r.segment_stride = r.segment_words;
  r.flat = c.flat_placement();
  r.blocked = c.blocked_placement();
  r.layout = c.block_bits ? SegmentLayout::blocked : SegmentLayout::flat;
  return s;
}

// The one-line guarded epoch filter with 64-bit lanes (32-bit lanes:
// Errc::block_size_invalid here, not replayed on the GPU yet).
inline Expected<EpochShape> shape_of(const InterleavedEpochConfig& c) noexcept {
  if (c.lane_bits != 64) return Errc::block_size_invalid;
  auto need = InterleavedEpochFilter<uint64_t>::bytes_needed(c);
  if (!need) return need.code();
  EpochShape s = detail::common_shape(c, *need);
  s.fill_cap = c.window.is_time() ? c.epoch_capacity : 0;
  GuardedEpochRef& r = s.ref;
  r.segment_words = c.lines;
  r.word_stride = 8;  // a line holds 8 lanes
  r.segment_stride = 1;
  r.lanes = c.placement();
  r.layout = SegmentLayout::lanes;
  return s;
}

// The one-line layout with a spare lane swept ahead: the plain layout's
// shape over a ring of r + 2 lanes, r + 1 of them live.
inline Expected<EpochShape> shape_of(const InterleavedSweptConfig& c) noexcept {
  auto plain = shape_of(static_cast<const InterleavedEpochConfig&>(c));
  if (!plain) return plain;
  auto need = InterleavedEpochFilter<uint64_t, true>::bytes_needed(c);
  if (!need) return need.code();
  EpochShape s = *plain;
  s.bytes = *need;
  s.words_offset = words_offset_after(sizeof(SweptRingHeader));
  s.segments = c.ring();
  s.ref.segments = c.ring();
  s.swept = true;
  s.pace = SweptPace::of(c);
  return s;
}

// The swept layout's header as the CPU filter would hold it after the same
// operations: the ring's state, when the current epoch began, and the lines
// of the spare its sweep has cleared by now (SweptPace::swept).
inline SweptRingHeader swept_header(const EpochShape& s, const EpochState& st, uint64_t epoch_insertions) noexcept {
  SweptRingHeader h{};
  static_cast<EpochState&>(h) = st;
  h.epoch_insertions = epoch_insertions;
  h.swept = s.pace.swept(h);
  return h;
}

// The swept layout's spare in state st: the slot after the current one.
inline uint32_t spare_slot(const EpochShape& s, const EpochState& st) noexcept {
  return st.current + 1 == s.segments ? 0 : st.current + 1;
}

// The replay of one batch: up to r+1 consecutive epochs, each inserting into
// its own segment (slot), so no slot is cleared twice within the batch.
// Packets are numbered from the batch's first. Epoch e begins at packet
// start[e] (non-decreasing; an epoch that a time gap skips over has no packets
// and starts where the next one does).
struct BatchPlan {
  static constexpr uint32_t kNoEpoch = 0xff;
  static constexpr uint32_t kNever = 0xffffffffu;
  uint64_t count = 0;  // packets in the batch
  uint32_t epochs = 0;
  uint32_t start[GuardedEpochConfig::kMaxSegments] = {};      // first packet of epoch e
  uint8_t epoch_slot[GuardedEpochConfig::kMaxSegments] = {};  // segment epoch e inserts into
  uint8_t slot_epoch[GuardedEpochConfig::kMaxSegments] = {};  // epoch using slot s, or kNoEpoch
  // Packet i still sees the bits slot s held before the batch iff i <
  // keep_end[s]. A count-window rotation clears the slot after the verdict of
  // its epoch's first packet i (CPU: contains, then rotate, then insert):
  // keep_end = i + 1; a time-window rotation clears it before packet i's
  // verdict (advance, then test_and_insert): keep_end = i. kNever: not
  // cleared in this batch.
  uint32_t keep_end[GuardedEpochConfig::kMaxSegments] = {};
  // APBF (apbf_replay.hpp): the first packet whose verdict sees epoch e's
  // slice order. A count-window shift happens after the verdict of the packet
  // that triggers it, so that packet is judged in the previous generation
  // and inserts in the new one; a time-window shift happens before.
  uint32_t seen_from[GuardedEpochConfig::kMaxSegments] = {};
  // The swept layout: the slots of the ring (r + 2); 0 for every other layout.
  uint32_t ring = 0;
  // Insertions of the batch before its last rotation (kNoRotation: none),
  // from which the owner keeps when the current epoch began (SweptRingHeader).
  static constexpr uint64_t kNoRotation = ~uint64_t{0};
  uint64_t last_rotation = kNoRotation;

  // The slots the batch clears (bit s: slot s; at most 64 slots).
  AGEBLOOM_HD uint64_t cleared_slots(uint32_t segments) const noexcept {
    uint64_t m = 0;
    for (uint32_t s = 0; s < segments; ++s)
      if (keep_end[s] != kNever) m |= uint64_t{1} << s;
    return m;
  }
  // The epoch packet i inserts in.
  AGEBLOOM_HD uint32_t epoch_of(uint64_t i) const noexcept {
    uint32_t e = 0;
    while (e + 1 < epochs && start[e + 1] <= i) ++e;
    return e;
  }
  // The swept layout's spare when packet i's verdict is taken: the slot after
  // the current one. A count-window rotation at i (keep_end = i + 1) comes
  // after that verdict, so i still saw the spare of the epoch before, which is
  // the slot i inserts into. kNoSpare for every other layout.
  static constexpr uint32_t kNoSpare = 0xff;
  AGEBLOOM_HD uint32_t spare_for(uint64_t i) const noexcept {
    if (ring == 0) return kNoSpare;
    const uint32_t cur = epoch_slot[epoch_of(i)];
    if (keep_end[cur] == i + 1) return cur;
    return cur + 1 == ring ? 0 : cur + 1;
  }
  // The epoch packet i's verdict is taken in (APBF: its slice order).
  AGEBLOOM_HD uint32_t verdict_epoch_of(uint64_t i) const noexcept {
    uint32_t e = 0;
    while (e + 1 < epochs && seen_from[e + 1] <= i) ++e;
    return e;
  }
};

namespace detail {
// Opens the batch: epoch 0 inserts into the current segment from packet 0.
inline BatchPlan open_batch(const EpochState& st, uint32_t segments) noexcept {
  BatchPlan p;
  for (uint32_t s = 0; s < segments; ++s) {
    p.slot_epoch[s] = BatchPlan::kNoEpoch;
    p.keep_end[s] = BatchPlan::kNever;
  }
  p.epochs = 1;
  p.start[0] = 0;
  p.epoch_slot[0] = static_cast<uint8_t>(st.current);
  p.slot_epoch[st.current] = 0;
  return p;
}
// A rotation inside the batch: the next segment is cleared (its old bits
// visible to packets before keep_end) and the packets from `first` on insert
// there. At first == 0 no packet of the batch has inserted yet, so epoch 0
// itself moves to the new segment (however many rotations a time gap makes
// there, the batch still holds one epoch); later, a new epoch begins.
inline void rotate_in_batch(BatchPlan& p, EpochState& st, uint32_t segments, uint32_t first,
                            uint32_t keep_end) noexcept {
  st.current = (st.current + 1) % segments;
  p.keep_end[st.current] = keep_end;
  if (first == 0) {
    p.slot_epoch[p.epoch_slot[0]] = BatchPlan::kNoEpoch;
    p.epoch_slot[0] = static_cast<uint8_t>(st.current);
    p.slot_epoch[st.current] = 0;
    return;
  }
  p.start[p.epochs] = first;
  p.epoch_slot[p.epochs] = static_cast<uint8_t>(st.current);
  p.slot_epoch[st.current] = static_cast<uint8_t>(p.epochs);
  ++p.epochs;
}
}  // namespace detail

// Plans the next batch of at most `remaining` insertions and `max_epochs`
// epochs from the count-window schedule in `st`, and advances `st` past it:
// EpochSchedule::rotate_before_insert applied to a run of insertions at once
// (`fill` counts the current epoch's insertions; the insertion that finds
// fill == ℓ rotates first, after its verdict).
inline BatchPlan plan_batch(EpochState& st, uint32_t segments, uint64_t remaining, uint32_t max_epochs) noexcept {
  BatchPlan p = detail::open_batch(st, segments);
  EpochSchedule& sch = st.schedule;
  for (;;) {
    if (sch.fill == sch.length) {  // the next insertion rotates first, after its verdict
      if (p.epochs == max_epochs && p.count > 0) break;
      const uint32_t i = static_cast<uint32_t>(p.count);
      detail::rotate_in_batch(p, st, segments, i, i + 1);
      p.last_rotation = p.count;  // every packet inserts
      sch.fill = 0;
    }
    const uint64_t left = sch.length - sch.fill;
    const uint64_t take = left < remaining - p.count ? left : remaining - p.count;
    sch.fill += take;
    p.count += take;
    if (p.count == remaining) break;
  }
  st.insertions += p.count;
  return p;
}

namespace detail {
// Would the next `rotations` segments all be untouched in this batch? A slot
// is cleared at most once per batch (the rotations at its first packet may
// already have cleared several).
inline bool fresh_slots(const BatchPlan& p, const EpochState& st, uint32_t segments, uint64_t rotations) noexcept {
  uint32_t s = st.current;
  for (uint64_t r = 0; r < rotations; ++r) {
    s = (s + 1) % segments;
    if (p.keep_end[s] != BatchPlan::kNever || p.slot_epoch[s] != BatchPlan::kNoEpoch) return false;
  }
  return true;
}
}  // namespace detail

// Insert-on-miss: packet i inserts iff its verdict is "new". While the
// replay iterates towards those verdicts (replay_steps.hpp), the current guess
// is a verdict bit array: packet i (index base + i in it) inserts iff its bit
// is clear. skip == nullptr: every packet inserts (insert-always).
AGEBLOOM_HD inline bool inserts(const uint32_t* skip, uint64_t at) noexcept {
  return skip == nullptr || !((skip[at / 32] >> (at % 32)) & 1u);
}

namespace detail {
// One packet's effect on the schedule, in the CPU's order. Before its
// verdict, advance(now) ends `timed` epochs (time windows, at most
// `segments`); then, if it inserts, rotate_before_insert rotates first when
// the epoch holds its quota of insertions (count windows: ℓ; time windows:
// fill_cap, the rotating ring's capacity trigger): `full`.
struct PacketStep {
  uint64_t timed = 0;
  bool full = false;
};
inline PacketStep packet_step(EpochSchedule& after, const uint64_t* now, uint64_t at, uint32_t live,
                              bool ins) noexcept {
  PacketStep step;
  if (now != nullptr) {
    auto elapsed = after.epochs_elapsed(now[at]);
    step.timed = elapsed ? (*elapsed < live ? *elapsed : live) : 0;
  }
  const uint64_t quota = after.kind == WindowKind::count ? after.length : after.fill_cap;
  step.full = ins && quota != 0 && after.fill == quota;
  return step;
}
// Counts an insertion in its epoch once `full` has been acted on: the
// rest of EpochSchedule::rotate_before_insert.
inline void count_insertion(EpochSchedule& sch, bool full) noexcept {
  const uint64_t quota = sch.kind == WindowKind::count ? sch.length : sch.fill_cap;
  if (quota == 0) return;
  if (full) {
    sch.fill = 1;
    if (sch.kind == WindowKind::time) sch.epoch_start = sch.last_now;  // the new epoch's clock
  } else {
    ++sch.fill;
  }
}
}  // namespace detail

// Plans the next batch packet by packet, as the CPU runs them
// (detail::packet_step). The batch ends before the packet whose rotations
// would exceed max_epochs or clear a segment the batch has already cleared
// or inserted into. live: the most rotations a time gap makes (the filter's
// r + 1: `segments` but for the swept layout's ring of r + 2).
inline BatchPlan plan_batch_walk(EpochState& st, uint32_t segments, const uint64_t* now, const uint32_t* skip,
                                 uint64_t skip_base, uint64_t remaining, uint32_t max_epochs, uint32_t live) noexcept {
  BatchPlan p = detail::open_batch(st, segments);
  EpochSchedule& sch = st.schedule;
  uint64_t inserted = 0;
  // Count windows under insert-on-miss: only inserting packets move the
  // schedule, so a word of 32 guesses whose insertions cannot fill the epoch
  // (the fill stays <= ℓ, so none of them finds it full) is taken at once.
  const bool by_words = now == nullptr && skip != nullptr && sch.kind == WindowKind::count;
  for (; p.count < remaining; ++p.count) {
    const uint64_t at = skip_base + p.count;
    if (by_words && at % 32 == 0 && remaining - p.count >= 32) {
      const uint32_t ins = 32 - static_cast<uint32_t>(__builtin_popcount(skip[at / 32]));
      if (sch.fill + ins <= sch.length) {
        sch.fill += ins;
        inserted += ins;
        p.count += 31;  // and the loop's ++
        continue;
      }
    }
    const uint32_t i = static_cast<uint32_t>(p.count);
    EpochSchedule after = sch;
    const bool ins = inserts(skip, skip_base + p.count);
    const detail::PacketStep step = detail::packet_step(after, now, p.count, live, ins);
    const uint64_t rotations = step.timed + (step.full ? 1 : 0);
    if (i > 0 && (p.epochs + rotations > max_epochs || !detail::fresh_slots(p, st, segments, rotations))) break;
    sch = after;
    for (uint64_t r = 0; r < step.timed; ++r) detail::rotate_in_batch(p, st, segments, i, i);
    if (step.timed != 0) p.last_rotation = inserted;
    if (ins) {
      if (step.full) {
        detail::rotate_in_batch(p, st, segments, i, i + 1);
        p.last_rotation = inserted;
      }
      ++inserted;
      detail::count_insertion(sch, step.full);
    }
  }
  st.insertions += inserted;
  return p;
}

// The next batch of a guarded epoch shape, whichever way it is planned:
// count windows under insert-always at once (plan_batch), the rest packet by
// packet (plan_batch_walk); at most the shape's live epochs, and the swept
// layout's ring marked for spare_for. What the device owner and the
// emulation test call.
inline BatchPlan plan_for(const EpochShape& shape, EpochState& st, const uint64_t* now, const uint32_t* skip,
                          uint64_t skip_base, uint64_t remaining, uint32_t max_epochs) noexcept {
  if (shape.live != 0 && max_epochs > shape.live) max_epochs = shape.live;
  BatchPlan p = now == nullptr && skip == nullptr
                    ? plan_batch(st, shape.segments, remaining, max_epochs)
                    : plan_batch_walk(st, shape.segments, now, skip, skip_base, remaining, max_epochs, shape.live);
  if (shape.swept) p.ring = shape.segments;
  return p;
}

// Keeps when the current epoch began (in insertions: SweptRingHeader's
// epoch_insertions) across batch p, which began after `before` insertions.
inline void note_epoch_start(const BatchPlan& p, uint64_t before, uint64_t& epoch_insertions) noexcept {
  if (p.last_rotation != BatchPlan::kNoRotation) epoch_insertions = before + p.last_rotation;
}

}  // namespace agebloom::gpu
