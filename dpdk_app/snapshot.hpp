// dedup_fwd --snapshot: every worker's filter kept across restarts.
//
// The file holds one library snapshot per worker (agebloom/dedup/snapshot.hpp:
// header, arena bytes, checksum) after a small header of its own (magic,
// version, worker count). It is written whole or not at all: to FILE.tmp,
// flushed, fsync'd, renamed over FILE, and the folder fsync'd, so a process
// killed at any moment (SIGKILL included) leaves the previous snapshot or the
// new one, never half of one.
//
// At start, a missing, damaged, foreign or mismatched snapshot is refused with
// its reason and dedup_fwd starts empty (or exits 1 with --require-snapshot).
// A restored time window continues from the clock it was saved at plus the
// wall-clock time that passed (App::clock_offset_ns), so what expired while
// dedup_fwd was down is gone.
#pragma once

#include <cstdint>

namespace dedup_fwd {

// Restores the workers' filters from --snapshot (after setup_workers, before
// the lcores start). Returns false when the run must stop (--require-snapshot
// and no usable snapshot); prints what it did either way.
bool restore_snapshot();

// Main lcore, from housekeeping: every --snapshot-interval seconds asks the
// workers for a copy of their filters and writes the file once all answered.
void snapshot_tick(uint64_t now_tsc);

// After the workers stopped: the final snapshot, from the arenas themselves.
// False (and a message) when it could not be written.
bool save_final_snapshot();

}  // namespace dedup_fwd
