// The three per-packet steps of the exact replay of one batch (epoch_plan.hpp),
// each a pass over the batch in which packets are independent: the kernels run
// a pass with one thread per packet, the emulation test runs it on the host in
// scrambled orders. Passes are ordered (first_setter, then verdict, then clear
// the slots the batch rotates into, then insert).
//
//   1. stamp_first_setter: every packet stamps its bits in its epoch's array
//      F_e with atomic min(index), so F_e[bit] = the first packet of epoch e
//      that set the bit (kUnset: none).
//   2. replay_verdict: packet i sees bit b of slot s iff the slot held it
//      before the batch and is not yet cleared for i (i < keep_end[s]), or
//      F_e[b] < i for the epoch e inserting into s. Since bits of an epoch are
//      only set, this is the state the sequential filter had just before i.
//   3. insert_and_unstamp: set the bits, and put kUnset back into the F entries
//      touched (so F never needs a full clear: the cost stays proportional to
//      the packets).
//
// Insert-on-miss (a packet inserts only if its verdict is "new") iterates
// passes 1 and 2 (and 3 without the insert, to return the stamps) over a
// batch, each time with the inserts the previous verdicts imply, until the
// verdicts stop changing; then clears and inserts once. Packet i's verdict
// depends only on packets before it, so after t rounds the first t verdicts
// are final: it ends, in practice in a few rounds (only packets near a
// window edge or a false positive flip).
#pragma once

#include <cstdint>

#include "epoch_plan.hpp"
#include "guarded_epoch_ref.hpp"
#include "portable.hpp"

namespace agebloom::gpu {

// first: first-setter arrays, one of segment_bits entries per epoch of the
// batch. skip/skip_base: which packets insert (epoch_plan.hpp, inserts());
// nullptr for insert-always.
AGEBLOOM_HD inline void stamp_first_setter(const GuardedEpochRef& f, const BatchPlan& p, const KeyHash* keys,
                                           uint32_t* first, uint64_t segment_bits, uint64_t i,
                                           const uint32_t* skip = nullptr, uint64_t skip_base = 0) noexcept {
  if (!inserts(skip, skip_base + i)) return;
  uint32_t* F = first + p.epoch_of(i) * segment_bits;
  const KeyHash h = keys[i];
  for (uint32_t j = 0; j < f.k; ++j) atomic_min_u32(F + f.position(h, j), static_cast<uint32_t>(i));
}

AGEBLOOM_HD inline bool replay_verdict(const GuardedEpochRef& f, const BatchPlan& p, const KeyHash* keys,
                                       const uint32_t* first, uint64_t segment_bits, uint64_t i) noexcept {
  const KeyHash h = keys[i];
  const uint32_t me = static_cast<uint32_t>(i);
  const uint32_t spare = p.spare_for(i);  // the swept layout's, which no verdict reads
  for (uint32_t s = 0; s < f.segments; ++s) {
    if (s == spare) continue;
    const bool old_visible = me < p.keep_end[s];
    const uint32_t* F = p.slot_epoch[s] == BatchPlan::kNoEpoch ? nullptr : first + p.slot_epoch[s] * segment_bits;
    bool all = true;
    for (uint32_t j = 0; j < f.k && all; ++j) {
      const uint64_t b = f.position(h, j);
      all = (old_visible && f.test(s, b)) || (F != nullptr && F[b] < me);
    }
    if (all) return true;
  }
  return false;
}

// Returns the F entries packet i stamped to kUnset (first != nullptr) and,
// with `insert`, sets its bits in its epoch's slot.
AGEBLOOM_HD inline void insert_and_unstamp(const GuardedEpochRef& f, const BatchPlan& p, const KeyHash* keys,
                                           uint32_t* first, uint64_t segment_bits, uint64_t i,
                                           const uint32_t* skip = nullptr, uint64_t skip_base = 0,
                                           bool insert = true) noexcept {
  if (!inserts(skip, skip_base + i)) return;
  const uint32_t e = p.epoch_of(i);
  const KeyHash h = keys[i];
  if (insert) f.insert(p.epoch_slot[e], h);
  if (first != nullptr) {
    uint32_t* F = first + e * segment_bits;
    for (uint32_t j = 0; j < f.k; ++j) F[f.position(h, j)] = kUnset;
  }
}

}  // namespace agebloom::gpu
