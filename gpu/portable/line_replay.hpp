// Exact replay of the one-line layout line by line: the verdict pass of a
// batch (epoch_plan.hpp) without first-setter stamps.
//
// In the one-line layout a key's bits, in every segment, lie in one 64-byte
// line (its lane word there, the same pattern in each lane). Packets of
// different lines never see each other's bits, and the batch's plan (where
// epochs begin, which slots are cleared for which packets) depends only on
// packet indices and clocks. So the sequential replay of a batch is, exactly,
// one sequential replay per line over that line's packets in index order:
//
//   1. key the batch by line (line_of), and sort (line, index) pairs stably
//      by line (a radix sort on the device, std::stable_sort in the
//      emulation test): each line's packets become a run, in index order;
//   2. replay_line, once per run: the line as it stood before the batch in
//      eight registers, and what this batch's earlier packets of the run
//      set in each slot; packet i sees slot s's old lane while i <
//      keep_end[s] (the slot is not yet cleared for it), and always what
//      the packets before it in its run set there since.
//
//   3. insert-always: the run's thread owns its line for the batch, so it
//      also writes the line's final state back (a cleared slot keeps only
//      what the batch set there, the others their old bits too) and, when
//      the batch clears a slot, marks the line touched; the lines no packet
//      touched then get those clears (clear_untouched), which reset the
//      marks. No insert pass.
//
// The cost of a run is serial: uniform keys make runs of about batch / lines
// packets, but a key that fills most of a batch (one source flooding a
// src-ip trace) is one run. One thread replayed it at ~0.5 us a packet, its
// own instruction latency (0.002 G keys/s on an H200 against 6.4 with
// distinct keys; reading keys ahead did not help), so a run of kLongRun
// packets or more goes to a warp instead (below): 0.019 G keys/s, ten times
// faster (docs/PERFORMANCE.md, "The GPU").
//
// What it replaces: stamping each of a packet's k bits with atomicMin in a
// 4-byte-per-bit array per epoch (32 bytes of stamps for every byte of
// filter), reading them back and returning them, then an insert pass: 3k
// scattered accesses and k atomics per packet. Here a packet costs its share
// of the sort, one line read, and its line's write.
//
// Insert-on-miss: which packets insert comes from the iteration's current
// guess (`skip`, as in replay_steps.hpp), so the fixed point is the same;
// its rounds only judge (no write-back), and the batch's inserts are the
// usual clear and insert passes once the verdicts are final.
//
// Portable: compiled by nvcc into the kernels and by the host compiler into
// the emulation test.
#pragma once

#include <cstdint>

#include "epoch_plan.hpp"
#include "guarded_epoch_ref.hpp"
#include "portable.hpp"

namespace agebloom::gpu {

// The sort key of packet i: its line (reserve_line_buffers refuses more
// than 2^32 lines, 256 GiB, and the layout then replays by stamps).
AGEBLOOM_HD inline uint32_t line_key(const GuardedEpochRef& f, const KeyHash* keys, uint64_t i) noexcept {
  return static_cast<uint32_t>(f.line_of(keys[i]));
}

// Step 3's write-back: the slots the batch clears (bit s: slot s) and one
// mark per line (nullptr: judge only, write nothing).
struct LineWriteBack {
  uint64_t cleared = 0;
  uint8_t* touched = nullptr;
};

// Long runs, 32 packets at a time. A run of kLongRun packets or more (one
// key flooding the batch) is replayed by a warp instead of one thread:
// lane l takes packet c + l of each chunk c, and what the chunk's earlier
// packets set in slot s is the OR of their masks, an exclusive prefix OR
// across the lanes (five shuffles per slot a packet inserts into, on the
// device; replay_long_run_emulated below on the host). Each packet's verdict is
// then the one replay_line gives, and the chunk's total joins `fresh`.
inline constexpr uint32_t kLongRun = 64;   // packets from which a run gets a warp
inline constexpr uint32_t kWarpLanes = 32;  // packets per chunk, one per lane
inline constexpr uint32_t kNoSlot = 8;      // a packet that inserts nowhere (insert-on-miss's hits)

// The slot packet i inserts into, or kNoSlot.
AGEBLOOM_HD inline uint32_t insert_slot(const BatchPlan& p, const uint32_t* skip, uint64_t skip_base,
                                        uint32_t i) noexcept {
  return inserts(skip, skip_base + i) ? p.epoch_slot[p.epoch_of(i)] : kNoSlot;
}

// Packet i's verdict: its mask m covered in a segment, by the line's old
// lanes not yet cleared for it and what the run's packets before it set
// (`before`, per slot); never in the swept layout's spare.
AGEBLOOM_HD inline bool line_hit(const GuardedEpochRef& f, const BatchPlan& p, const uint64_t (&old)[8],
                                 const uint64_t (&before)[8], uint32_t i, uint64_t m) noexcept {
  const uint32_t spare = p.spare_for(i);
  bool hit = false;
  AGEBLOOM_UNROLL
  for (uint32_t s = 0; s < 8; ++s) {
    const uint64_t visible = (i < p.keep_end[s] ? old[s] : 0) | before[s];
    hit |= s < f.segments && s != spare && (visible & m) == m;
  }
  return hit;
}

// Step 3's write-back after a run (replay_line's end).
AGEBLOOM_HD inline void write_back_line(const GuardedEpochRef& f, uint64_t line, uint64_t (&old)[8],
                                        const uint64_t (&fresh)[8], LineWriteBack wb) noexcept {
  if (wb.touched == nullptr) return;
  AGEBLOOM_UNROLL
  for (uint32_t s = 0; s < 8; ++s) old[s] = ((wb.cleared >> s) & 1u ? 0 : old[s]) | fresh[s];
  store_line(f.word(0, line), old);
  if (wb.cleared != 0) wb.touched[line] = 1;
}

// Replays the run of packets run[0..len) (batch indices, ascending, all of one
// line): seen[i] = packet i's verdict, as the sequential filter gives it; with
// wb.touched, also the line's state after the batch, and its mark.
AGEBLOOM_HD inline void replay_line(const GuardedEpochRef& f, const BatchPlan& p, const KeyHash* keys,
                                    const uint32_t* run, uint32_t len, const uint32_t* skip, uint64_t skip_base,
                                    uint8_t* seen, LineWriteBack wb = {}) noexcept {
  const uint64_t line = f.line_of(keys[run[0]]);
  uint64_t old[8];
  load_line(f.word(0, line), old);
  uint64_t fresh[8] = {0, 0, 0, 0, 0, 0, 0, 0};  // set by this batch's packets so far, per slot
  for (uint32_t n = 0; n < len; ++n) {
    const uint32_t i = run[n];
    const uint64_t m = f.lane_mask(keys[i]);
    seen[i] = line_hit(f, p, old, fresh, i, m);
    const uint32_t slot = insert_slot(p, skip, skip_base, i);
    // Slots by constant index (unrolled), so old and fresh stay in registers.
    AGEBLOOM_UNROLL
    for (uint32_t s = 0; s < 8; ++s) fresh[s] |= s == slot ? m : 0;
  }
  write_back_line(f, line, old, fresh, wb);
}

// The chunked replay of the run that starts at sorted position t (line
// sorted[t], packets index[t..]; it ends where sorted changes or at
// p.count), with the warp's lanes run one after another and the prefix OR
// as a loop: the device kernel's algorithm, for the emulation test.
inline void replay_long_run_emulated(const GuardedEpochRef& f, const BatchPlan& p, const KeyHash* keys,
                                     const uint32_t* sorted, const uint32_t* index, uint64_t t,
                                     const uint32_t* skip, uint64_t skip_base, uint8_t* seen,
                                     LineWriteBack wb = {}) noexcept {
  const uint32_t line = sorted[t];
  uint64_t old[8];
  load_line(f.word(0, line), old);
  uint64_t fresh[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (uint64_t c = t;; c += kWarpLanes) {
    bool valid[kWarpLanes];
    uint32_t at[kWarpLanes], slot[kWarpLanes];
    uint64_t mask[kWarpLanes];
    bool all = true;
    for (uint32_t l = 0; l < kWarpLanes; ++l) {
      const uint64_t q = c + l;
      valid[l] = q < p.count && sorted[q] == line;
      all &= valid[l];
      at[l] = valid[l] ? index[q] : 0;
      mask[l] = valid[l] ? f.lane_mask(keys[at[l]]) : 0;
      slot[l] = valid[l] ? insert_slot(p, skip, skip_base, at[l]) : kNoSlot;
    }
    uint64_t chunk[8] = {0, 0, 0, 0, 0, 0, 0, 0};  // the exclusive prefix OR as lane l sees it
    for (uint32_t l = 0; l < kWarpLanes; ++l) {
      if (valid[l]) {
        uint64_t before[8];
        for (uint32_t s = 0; s < 8; ++s) before[s] = fresh[s] | chunk[s];
        seen[at[l]] = line_hit(f, p, old, before, at[l], mask[l]);
      }
      if (slot[l] != kNoSlot) chunk[slot[l]] |= mask[l];
    }
    for (uint32_t s = 0; s < 8; ++s) fresh[s] |= chunk[s];
    if (!all) break;
  }
  write_back_line(f, line, old, fresh, wb);
}

// The batch's clears on a line no packet touched (step 3), and the mark reset
// on one that was.
AGEBLOOM_HD inline void clear_untouched(const GuardedEpochRef& f, uint64_t line, uint64_t cleared,
                                        uint8_t* touched) noexcept {
  if (touched[line] != 0) {
    touched[line] = 0;
    return;
  }
  f.clear_lanes(line, cleared);
}

}  // namespace agebloom::gpu
