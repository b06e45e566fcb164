// Exact replay of the age-partitioned filters (APBF and APBBF, Age-Partitioned Bloom Filters;
// core's ApbfFilter) in the form the GPU runs it: the batch planner (host)
// and the three per-packet passes (device, or the host emulation test), the
// counterpart of epoch_plan.hpp and replay_steps.hpp for the guarded epoch
// family.
//
// The same first-setter idea, with one difference: an APBF insertion writes
// the k newest slices, so a physical slice takes insertions over k
// consecutive generations as it ages, and the first-setter stamps are kept
// per physical slice (F_s[bit] = the first packet of the batch that set that
// bit of slice s), not per epoch. Packet i, in generation e(i) with head h,
// probes logical slice j as physical slice (h + j) mod (k + l): a bit is
// visible iff it was set before the batch and slice s has not been cleared
// yet for i (i < keep_end[s]), or F_s[bit] < i. The verdict is then core's
// jump_back_scan (Algorithm 1) over those visibilities, so it is the scan the
// CPU runs. A shift clears the oldest slice, which becomes the newest; within
// one batch no slice may be cleared after it was written or cleared, which
// bounds a batch to about l shifts.
//
// Portable: no CUDA types (gpu/portable/portable.hpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "agebloom/core/bits.hpp"
#include "agebloom/core/hash.hpp"
#include "agebloom/filters/apbf.hpp"
#include "epoch_plan.hpp"
#include "portable.hpp"

namespace agebloom::gpu {

// Bits per block the GPU replay takes (APBBF's b; APBF: 1). ApbfConfig's
// validate() allows b = B too (one part, no position bits); the replay once
// gathered a slice's positions into an array of this size, and its device
// test covers b <= 64 only, so larger b stay refused (unsupported_reason).
inline constexpr uint32_t kApbfMaxBitsPerKeySlice = 64;

// Non-owning view of an APBF's slices: what a kernel takes by value.
struct ApbfRef {
  uint64_t* words = nullptr;   // slice s at s * slice_words
  uint64_t slice_words = 0;
  placement::ApbfSlice place{};  // where a key's bits go in each slice (core/placement.hpp)
  uint32_t k = 0, l = 0, slices = 0;

  AGEBLOOM_HD uint64_t* slice(uint32_t phys) const noexcept { return words + phys * slice_words; }

  AGEBLOOM_HD bool test(uint32_t phys, uint64_t b) const noexcept { return (slice(phys)[b / 64] >> (b % 64)) & 1u; }

  // Algorithm 1 (core's jump_back_scan) with the newest slice at physical
  // `head`, over bits as `visible(phys, position)` says they stand: what one
  // packet can see, for the replay.
  template <class Visible>
  AGEBLOOM_HD bool scan(KeyHash h, uint32_t head, Visible&& visible) const noexcept {
    return jump_back_scan(k, l, [&](uint32_t logical) {
      const uint32_t phys = (head + logical) % slices;
      return place.all_positions(h, phys, [&](uint64_t b) { return visible(phys, b); });
    });
  }

  // ApbfFilter::contains with the newest slice at physical `head`: the same
  // slice probe (placement::ApbfSlice::holds).
  AGEBLOOM_HD bool contains(KeyHash h, uint32_t head) const noexcept {
    return jump_back_scan(k, l, [&](uint32_t logical) {
      const uint32_t phys = (head + logical) % slices;
      return place.holds(slice(phys), h, phys);
    });
  }

  // Calls fn(phys, position) for every bit an insertion of h with the newest
  // slice at `head` sets: the k newest slices.
  template <class Fn>
  AGEBLOOM_HD void for_each_inserted_bit(KeyHash h, uint32_t head, Fn&& fn) const noexcept {
    for (uint32_t j = 0; j < k; ++j) {
      const uint32_t phys = (head + j) % slices;
      place.all_positions(h, phys, [&](uint64_t b) {
        fn(phys, b);
        return true;
      });
    }
  }
};

// The shape of an ApbfFilter's arena image (header, then k+l slices).
// Errc::block_size_invalid when the GPU replay does not take it: more than
// 64 slices (BatchPlan's arrays) or more than 64 bits per block.
struct ApbfShape {
  ApbfRef ref;  // ref.words unset: add the image base (at())
  size_t bytes = 0;
  WindowKind kind = WindowKind::count;
  uint64_t generation_length = 1;

  ApbfRef at(void* image) const noexcept {
    ApbfRef r = ref;
    r.words = reinterpret_cast<uint64_t*>(static_cast<unsigned char*>(image) + kWordsOffset);
    return r;
  }
  uint64_t slice_bits() const noexcept { return ref.slice_words * 64; }  // one first-setter array
  uint64_t segment_bits() const noexcept { return slice_bits(); }        // (EpochShape's name)
  uint32_t segments() const noexcept { return ref.slices; }
  uint64_t words_bytes() const noexcept { return ref.slice_words * 8 * ref.slices; }
  EpochState initial_state() const noexcept {
    EpochState s{};
    s.schedule = EpochSchedule::make(kind, generation_length);
    return s;  // current = head = 0
  }
};

inline Expected<ApbfShape> shape_of(const ApbfConfig& c) noexcept {
  auto need = ApbfFilter::bytes_needed(c);
  if (!need) return need.code();
  if (c.slices() > GuardedEpochConfig::kMaxSegments || c.bits_per_block > kApbfMaxBitsPerKeySlice)
    return Errc::block_size_invalid;
  ApbfShape s;
  s.bytes = *need;
  s.kind = c.window.kind;
  s.generation_length = c.generation_length();
  ApbfRef& r = s.ref;
  r.slice_words = bits::words_for(c.usable_slice_bits());
  r.place = c.placement();
  r.k = c.k;
  r.l = c.l;
  r.slices = c.slices();
  return s;
}

namespace detail {
// A shift inside an APBF batch: the head moves one slice back, and that
// slice (the oldest) is cleared to become the newest; packets from `first`
// on insert in the new generation, and verdicts from keep_end on see it
// (keep_end = first for a time shift, first + 1 for a count shift, which
// follows the triggering packet's verdict). A time shift before the batch's
// first verdict moves generation 0 itself.
inline void apbf_shift_in_batch(BatchPlan& p, EpochState& st, uint32_t slices, uint32_t first,
                                uint32_t keep_end) noexcept {
  st.current = (st.current + slices - 1) % slices;
  p.keep_end[st.current] = keep_end;
  if (keep_end == 0) {
    p.epoch_slot[0] = static_cast<uint8_t>(st.current);
    return;
  }
  p.start[p.epochs] = first;
  p.seen_from[p.epochs] = keep_end;
  p.epoch_slot[p.epochs] = static_cast<uint8_t>(st.current);
  ++p.epochs;
}

// The batch's bookkeeping while it is planned: which slices it has cleared
// or written (they may not be cleared again in it), and whether the current
// generation has taken an insertion yet.
struct ApbfBatchMarks {
  uint64_t touched = 0;  // bit s: slice s cleared or written in this batch (S <= 64)
  bool written = false;

  // Would `shifts` more shifts fit the batch: none of the slices they clear
  // touched yet, and the generations within BatchPlan's arrays?
  bool fits(const BatchPlan& p, const EpochState& st, uint32_t S, uint64_t shifts) const noexcept {
    if (p.epochs + shifts > GuardedEpochConfig::kMaxSegments) return false;
    uint32_t h = st.current;
    for (uint64_t r = 0; r < shifts; ++r) {
      h = (h + S - 1) % S;
      if ((touched >> h) & 1u) return false;
    }
    return true;
  }
  void shift(BatchPlan& p, EpochState& st, uint32_t S, uint32_t first, uint32_t keep_end) noexcept {
    apbf_shift_in_batch(p, st, S, first, keep_end);
    touched |= uint64_t{1} << st.current;
    written = false;
  }
  // The current generation's k newest slices take insertions from here on.
  void write(const EpochState& st, uint32_t S, uint32_t k) noexcept {
    if (written) return;
    for (uint32_t j = 0; j < k; ++j) touched |= uint64_t{1} << ((st.current + j) % S);
    written = true;
  }
};
}  // namespace detail

// Plans the next batch packet by packet, as ApbfFilter runs them (advance
// for time windows, then, for an inserting packet, rotate_before_insert's
// shift when the generation is full), with `skip` as in epoch_plan.hpp's
// plan_batch_walk (insert-on-miss). epoch_slot[e] is generation e's head.
// The batch ends before the packet whose shifts would clear a slice the batch
// has already cleared or written. The reference plan: apbf_plan_batch takes
// its shortcuts where they give the same plan.
inline BatchPlan apbf_plan_batch_walk(EpochState& st, const ApbfRef& f, const uint64_t* now, const uint32_t* skip,
                                      uint64_t skip_base, uint64_t remaining) noexcept {
  const uint32_t S = f.slices;
  BatchPlan p = detail::open_batch(st, S);  // generation 0's head: the current one
  detail::ApbfBatchMarks marks;
  EpochSchedule& sch = st.schedule;
  uint64_t inserted = 0;
  for (; p.count < remaining; ++p.count) {
    const uint32_t i = static_cast<uint32_t>(p.count);
    EpochSchedule after = sch;
    const bool ins = inserts(skip, skip_base + p.count);
    const detail::PacketStep step = detail::packet_step(after, now, p.count, S, ins);
    const uint64_t shifts = step.timed + (step.full ? 1 : 0);
    if (i > 0 && shifts != 0 && !marks.fits(p, st, S, shifts)) break;
    sch = after;
    for (uint64_t r = 0; r < step.timed; ++r) marks.shift(p, st, S, i, i);
    if (ins) {
      ++inserted;
      if (step.full) marks.shift(p, st, S, i, i + 1);
      detail::count_insertion(sch, step.full);
      marks.write(st, S, f.k);
    }
  }
  st.insertions += inserted;
  return p;
}

// The same plan as apbf_plan_batch_walk, without visiting every packet where
// the schedule allows: a count window's generation is a fixed number of
// insertions, so under insert-always a generation's packets are taken at
// once, and under insert-on-miss a word of 32 guesses none of whose packets
// finds the generation full (its fill plus their insertions at most the
// generation's length). Time windows are walked.
// The host plans every batch, so this is what bounds APBF's replay on a GPU
// when it walks (one packet at a time: ~0.15 G keys/s on an H200).
inline BatchPlan apbf_plan_batch(EpochState& st, const ApbfRef& f, const uint64_t* now, const uint32_t* skip,
                                 uint64_t skip_base, uint64_t remaining) noexcept {
  EpochSchedule& sch = st.schedule;
  if (now != nullptr || sch.kind != WindowKind::count || sch.length == 0)
    return apbf_plan_batch_walk(st, f, now, skip, skip_base, remaining);
  const uint32_t S = f.slices;
  BatchPlan p = detail::open_batch(st, S);
  detail::ApbfBatchMarks marks;
  uint64_t inserted = 0;
  while (p.count < remaining) {
    const uint32_t i = static_cast<uint32_t>(p.count);
    const uint64_t at = skip_base + p.count;
    uint64_t take = 0;  // packets taken at once, none of them finding the generation full
    uint64_t ins = 0;   // how many of them insert
    if (skip == nullptr) {
      const uint64_t left = sch.length - sch.fill;
      take = ins = left < remaining - p.count ? left : remaining - p.count;
    } else if (at % 32 == 0 && remaining - p.count >= 32) {
      const uint64_t word_ins = 32 - static_cast<uint32_t>(__builtin_popcount(skip[at / 32]));
      if (sch.fill + word_ins <= sch.length) take = 32, ins = word_ins;
    }
    if (take == 0) {  // one packet, as the walk takes it
      const bool one_ins = inserts(skip, at);
      const bool full = one_ins && sch.fill == sch.length;
      if (full) {
        if (i > 0 && !marks.fits(p, st, S, 1)) break;
        marks.shift(p, st, S, i, i + 1);
      }
      if (one_ins) {
        ++inserted;
        detail::count_insertion(sch, full);
        marks.write(st, S, f.k);
      }
      ++p.count;
      continue;
    }
    if (ins != 0) marks.write(st, S, f.k);
    sch.fill += ins;
    inserted += ins;
    p.count += take;
  }
  st.insertions += inserted;
  return p;
}

// Pass 1: stamp the first setters (inserting packets only).
AGEBLOOM_HD inline void apbf_stamp_first_setter(const ApbfRef& f, const BatchPlan& p, const KeyHash* keys,
                                                uint32_t* first, uint64_t slice_bits, uint64_t i,
                                                const uint32_t* skip = nullptr, uint64_t skip_base = 0) noexcept {
  if (!inserts(skip, skip_base + i)) return;
  f.for_each_inserted_bit(keys[i], p.epoch_slot[p.epoch_of(i)], [&](uint32_t phys, uint64_t b) {
    atomic_min_u32(first + phys * slice_bits + b, static_cast<uint32_t>(i));
  });
}

// Pass 2: the verdict, by Algorithm 1 over what packet i can see, in the
// slice order of the generation its verdict is taken in.
AGEBLOOM_HD inline bool apbf_replay_verdict(const ApbfRef& f, const BatchPlan& p, const KeyHash* keys,
                                            const uint32_t* first, uint64_t slice_bits, uint64_t i) noexcept {
  const uint32_t me = static_cast<uint32_t>(i);
  return f.scan(keys[i], p.epoch_slot[p.verdict_epoch_of(i)], [&](uint32_t phys, uint64_t b) {
    return (me < p.keep_end[phys] && f.test(phys, b)) || first[phys * slice_bits + b] < me;
  });
}

// Pass 3: return the stamps to kUnset (first != nullptr) and, with `insert`,
// set the bits in the generation's k newest slices.
AGEBLOOM_HD inline void apbf_insert_and_unstamp(const ApbfRef& f, const BatchPlan& p, const KeyHash* keys,
                                                uint32_t* first, uint64_t slice_bits, uint64_t i,
                                                const uint32_t* skip = nullptr, uint64_t skip_base = 0,
                                                bool insert = true) noexcept {
  if (!inserts(skip, skip_base + i)) return;
  f.for_each_inserted_bit(keys[i], p.epoch_slot[p.epoch_of(i)], [&](uint32_t phys, uint64_t b) {
    if (insert) atomic_or_u64(f.slice(phys) + b / 64, uint64_t{1} << (b % 64));
    if (first != nullptr) first[phys * slice_bits + b] = kUnset;
  });
}

}  // namespace agebloom::gpu
