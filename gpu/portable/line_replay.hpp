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
// src-ip trace) is one run that one thread replays alone. Measured on an
// H200 (agebloom-gpu-bench --replay-distinct 1): 0.002 G keys/s against 6.4
// with distinct keys, and 80 times slower than the same batch by
// first-setter stamps. That is one thread's instruction latency (~0.5 us a
// packet), not memory: reading eight packets' keys ahead did not change it.
// A warp per long run (a prefix OR per slot across its lanes), or such
// batches replayed by stamps, is the step that would bound it
// (docs/PERFORMANCE.md, "The GPU").
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
    bool hit = false;
    // Slots by constant index (j < 8 unrolled), so old and fresh stay in registers.
    AGEBLOOM_UNROLL
    for (uint32_t s = 0; s < 8; ++s) {
      const uint64_t visible = (i < p.keep_end[s] ? old[s] : 0) | fresh[s];
      hit |= s < f.segments && (visible & m) == m;
    }
    seen[i] = hit;
    if (inserts(skip, skip_base + i)) {
      const uint32_t slot = p.epoch_slot[p.epoch_of(i)];
      AGEBLOOM_UNROLL
      for (uint32_t s = 0; s < 8; ++s) fresh[s] |= s == slot ? m : 0;
    }
  }
  if (wb.touched == nullptr) return;
  AGEBLOOM_UNROLL
  for (uint32_t s = 0; s < 8; ++s) old[s] = ((wb.cleared >> s) & 1u ? 0 : old[s]) | fresh[s];
  store_line(f.word(0, line), old);
  if (wb.cleared != 0) wb.touched[line] = 1;
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
