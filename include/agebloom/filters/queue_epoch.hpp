// Guarded epoch filter of fingerprint queues: one 64-byte line per key, FPR
// 1% in about 17.7 bits per item, at a fraction of the pocket layout's
// instructions.
//
// The same 40 fingerprints of 3840 values per line as the pocket epoch
// filter (pocket_epoch.hpp), so the same model, sizing and spare; what
// differs is the order inside a line (queue_line.hpp). The pocket line sorts
// its entries by fingerprint and tags each with its segment: an insert shifts
// a header bit and a byte into place, a rotation repacks the line. Here the
// entries stand in the order the segments age, each segment's run counted:
//
//   - test_and_insert compares the key's fingerprint with the whole line at
//     once: found, it is a duplicate, and an entry of an older run moves to
//     the back (the key was just seen); not found, it is appended at the back;
//   - a rotation (Guarded Epoch Bloom Filters, Algorithm 1: the oldest
//     segment is cleared) drops the oldest run from the front of every line;
//   - a full line sends to its spare line the entries of its top levels (a
//     level: a fingerprint's top 5 bits), lowest level sent kept in the
//     line's note with the newest segment sent: a key missing from its line
//     reads the spare only while that segment lives and only if its level is
//     at or above the note's, as with the pocket filter's floor;
//   - a full spare line keeps a note too, the newest segment it lost: every
//     key that reaches it is then reported seen until that segment is
//     cleared (false positives, never a false negative; saturations()).
//
// Lemma 1 and Prop. 1 hold as for the Bloom layouts: an entry lives exactly
// as long as its segment's bits would. The model is the pocket filter's
// (pocket_epoch_fpr): the same capacity and fingerprints (a line with a note
// holds 39, which the model leaves out; the tests measure against it).
#pragma once

#include <cstddef>
#include <cstdint>

#include "agebloom/core/arena.hpp"
#include "agebloom/core/bits.hpp"
#include "agebloom/core/error.hpp"
#include "agebloom/core/hash.hpp"
#include "agebloom/core/window.hpp"
#include "agebloom/filters/bulk_ops.hpp"
#include "agebloom/filters/pocket_epoch.hpp"
#include "agebloom/filters/queue_line.hpp"

namespace agebloom {

static_assert(queue::kCapacity == pocket::kCapacity && queue::kFingerprints == pocket::kFingerprints &&
                  queue::kSegments == pocket::kTags,
              "the queue line holds what the pocket line does: its model and sizing apply");

// The queue epoch filter's shape: the pocket filter's (lines, spare lines,
// r, window), as a type of its own so the registry tells them apart.
struct QueueEpochConfig : PocketEpochConfig {
  // Fewest primary lines (with their spare) whose model FP is at most `fpr`.
  static constexpr Expected<QueueEpochConfig> for_fpr(Window window, double fpr,
                                                      PocketEpochSizing sizing = {}) noexcept {
    auto c = PocketEpochConfig::for_fpr(window, fpr, sizing);
    if (!c) return c.error();
    return QueueEpochConfig{*c};
  }
};

// The queue epoch filter over an arena: a handle; its state (the epoch
// ring, two counters, the primary lines then the spare lines: SparedLines)
// lives in the arena. The bulk forms are BulkOps' (prefetch 16 keys ahead).
class QueueEpochFilter : public BulkOps<QueueEpochFilter, 16>,
                         public SparedLines<QueueEpochConfig, queue::QueueLine> {
 public:
  constexpr QueueEpochFilter() noexcept = default;  // empty: create() one

  // Validates c, carves the filter's state from arena and clears it; on error
  // the arena is left as it was.
  static Expected<QueueEpochFilter> create(const QueueEpochConfig& c, Arena& arena) noexcept {
    QueueEpochFilter f;
    if (Status s = f.carve(c, arena); !s) return s;
    return f;
  }

  // Time windows: expires what ended by `now` (time_went_backwards, and no change,
  // if now is before the last now). Count windows: no-op. Call it before a burst.
  Status advance(uint64_t now) noexcept {
    return state_->ring.schedule.advance(now, cfg_.segments(), [this] { rotate(); });
  }

  // Its fingerprint in its line, else (if the line spilled at or below the
  // key's level) in its spare line, or that spare line saturated.
  bool contains(KeyHash h) const noexcept {
    const uint64_t b = line_of(h);
    const uint32_t f = fingerprint(h);
    const queue::QueueLine& line = lines_[b];
    if (line.find(f, line.count()) >= 0) return true;
    if (!reads_spare(line, f)) return false;
    const queue::QueueLine& s = spare_of(b, f);
    return s.find(spare_fingerprint(b, f), s.count()) >= 0 || s.has_note();
  }

  // Records h as inserted now (moves it to the newest run if present).
  void insert(KeyHash h) noexcept {
    if (state_->ring.schedule.rotate_before_insert()) rotate();
    ++state_->ring.insertions;
    put(h);
  }

  // contains(h) then insert(h): the dedup primitive. One lookup when no
  // epoch ends here (the find that answers also places the key).
  bool test_and_insert(KeyHash h) noexcept {
    if (!state_->ring.schedule.rotate_before_insert()) {
      ++state_->ring.insertions;
      return put(h);
    }
    const bool hit = contains(h);  // before the rotation clears a segment, as the scalar calls order it
    rotate();
    ++state_->ring.insertions;
    put(h);
    return hit;
  }

  // Prefetches h's line (the bulk forms call it ahead). The spare line is
  // read by a few percent of keys and not prefetched: asking for it a few
  // keys ahead, once the line had arrived to say whether the key needs it,
  // measured no gain (docs/PERFORMANCE.md).
  void prefetch(KeyHash h) const noexcept { bits::prefetch_write(&lines_[line_of(h)]); }

 private:
  queue::Ring ring() const noexcept { return {state_->ring.current, cfg_.segments()}; }
  uint64_t line_of(KeyHash h) const noexcept { return reduce(h.h1, cfg_.lines); }
  // 12 bits from h2's high half (h1 placed the line), as the pocket filter's.
  static uint32_t fingerprint(KeyHash h) noexcept {
    return static_cast<uint32_t>(((h.h2 >> 32) * queue::kFingerprints) >> 32);
  }
  static uint32_t level(uint32_t f) noexcept { return f >> queue::kLevelShift; }
  queue::QueueLine& spare_of(uint64_t b, uint32_t f) const noexcept {
    return spare_[spare_line_of(b, f, cfg_.spare_lines)];
  }
  // Whether a key missing from its line may be in the spare: the line's note
  // lives (a rotation clears it with its segment), and every entry the line
  // sent is at or above the note's level.
  static bool reads_spare(const queue::QueueLine& line, uint32_t f) noexcept {
    return line.has_note() && level(f) >= line.note().level;
  }
  static bool has_room(const queue::QueueLine& line, uint32_t n, uint32_t cur) noexcept {
    return n < line.capacity() && line.run(cur) < queue::kMaxRun;
  }

  // Finds h and makes it the newest, or adds it; true if found. Inline: the
  // common cases (found, or appended to a line with room that sent nothing
  // this key could meet); the rest is put_rare.
  [[gnu::always_inline]] inline bool put(KeyHash h) noexcept {
    const uint64_t b = line_of(h);
    const uint32_t f = fingerprint(h);
    const queue::Ring rg = ring();
    queue::QueueLine& line = lines_[b];
    const uint32_t n = line.count();
    if (const int i = line.find(f, n); i >= 0) {
      if (!line.renew(static_cast<uint32_t>(i), n, rg)) renew_in_spare(b, line, static_cast<uint32_t>(i), f, rg);
      return true;
    }
    if (has_room(line, n, rg.cur) && !reads_spare(line, f)) {
      line.push(f, rg.cur);
      return false;
    }
    return put_rare(b, line, f, rg);
  }

  // put() for a key missing from its line, when the line spilled at or below
  // the key's level (the spare may hold it) or has no room.
  [[gnu::noinline]] bool put_rare(uint64_t b, queue::QueueLine& line, uint32_t f, queue::Ring rg) noexcept {
    if (reads_spare(line, f)) {
      ++state_->spare_reads;
      queue::QueueLine& s = spare_of(b, f);
      const uint32_t n = s.count();
      const int j = s.find(spare_fingerprint(b, f), n);
      if (j >= 0 || s.has_note()) {
        // In the spare (or lost to its saturation, whose note then covers it):
        // live again in the current segment, and the line's note says so.
        if (j < 0) {
          s.set_note({0, rg.cur});
        } else if (!s.renew(static_cast<uint32_t>(j), n, rg)) {
          // No room in the current run: the entry goes, the note keeps it.
          s.remove(static_cast<uint32_t>(j), s.segment_of(static_cast<uint32_t>(j), rg));
          s.set_note({0, rg.cur});
          ++state_->saturations;
        }
        line.set_note({line.note().level, rg.cur});
        return true;
      }
    }
    if (has_room(line, line.count(), rg.cur)) line.push(f, rg.cur);
    else add_to_full(b, line, f, rg);
    return false;
  }

  // A key found in an older run of line b when the current run is full
  // (kMaxRun): it cannot move to the back, and left where it is it would
  // expire with its old segment, so it leaves the line for the spare, as a
  // new key would.
  [[gnu::noinline]] void renew_in_spare(uint64_t b, queue::QueueLine& line, uint32_t i, uint32_t f,
                                        queue::Ring rg) noexcept {
    line.remove(i, line.segment_of(i, rg));
    add_to_full(b, line, f, rg);
  }

  // Adds f (not present) to line b, which has no room for it: the entries of
  // the line's top levels go to the spare, as few levels as leave room for
  // f (unless f is sent too) and the note; f goes too when its own level is
  // sent, or when its segment's run is full.
  void add_to_full(uint64_t b, queue::QueueLine& line, uint32_t f, queue::Ring rg) noexcept {
    const uint32_t n = line.count();
    const queue::QueueLine::Levels levels = line.levels();
    const uint64_t live = (uint64_t{1} << n) - 1;
    const bool run_full = line.run(rg.cur) >= queue::kMaxRun;
    // The highest cut whose send leaves 39 slots enough (the note takes the 40th).
    uint32_t cut = queue::kLevels;
    uint64_t sent = 0;
    for (;;) {
      const bool f_stays = !run_full && level(f) < cut;
      if (n - static_cast<uint32_t>(__builtin_popcountll(sent)) + (f_stays ? 1 : 0) <= queue::kNoteSlot) break;
      sent = levels.at_least(--cut) & live;
    }
    const bool f_sent = run_full || level(f) >= cut;
    // Their spare lines requested before the moves below: each is a cache
    // miss, and the line's own work can run under it.
    for (uint64_t m = sent; m; m &= m - 1)
      bits::prefetch_write(&spare_of(b, line.fingerprint(static_cast<uint32_t>(__builtin_ctzll(m)))));
    if (f_sent) bits::prefetch_write(&spare_of(b, f));
    queue::Note note = line.has_note() ? line.note() : queue::Note{queue::kLevels, rg.oldest()};
    if (f_sent) {
      note.level = level(f) < note.level ? level(f) : note.level;
      note.segment = rg.cur;
    }
    if (sent && cut < note.level) note.level = cut;
    // Newest first, so the indices below stay in place.
    while (sent) {
      const uint32_t i = 63 - static_cast<uint32_t>(__builtin_clzll(sent));
      sent &= ~(uint64_t{1} << i);
      const uint32_t g = line.fingerprint(i);
      const uint32_t s = line.segment_of(i, rg);
      line.remove(i, s);
      spill(b, g, s, rg);
      note.segment = rg.newer(note.segment, s);
    }
    line.set_note(note);
    if (f_sent) spill(b, f, rg.cur, rg);
    else line.push(f, rg.cur);
  }

  // Sends fingerprint f of segment s from line b to its spare line; a full
  // spare line drops its oldest entry for its note and notes what it lost.
  void spill(uint64_t b, uint32_t f, uint32_t s, queue::Ring rg) noexcept {
    queue::QueueLine& sp = spare_of(b, f);
    const uint32_t n = sp.count();
    if (n < sp.capacity() && sp.run(s) < queue::kMaxRun) return sp.insert_in_run(spare_fingerprint(b, f), s, rg);
    ++state_->saturations;
    uint32_t lost = s;
    if (sp.has_note()) {
      lost = rg.newer(lost, sp.note().segment);
    } else if (n == queue::kCapacity) {
      const uint32_t oldest = sp.segment_of(0, rg);
      sp.remove(0, oldest);
      lost = rg.newer(lost, oldest);
    }
    sp.set_note({0, lost});
  }

  // The next segment becomes current: its run goes from every line, and the
  // notes whose newest segment it was.
  [[gnu::noinline]] void rotate() noexcept {
    const uint32_t t = state_->ring.current = (state_->ring.current + 1) % cfg_.segments();
    for (uint64_t i = 0; i < cfg_.lines + cfg_.spare_lines; ++i) {
      queue::QueueLine& line = lines_[i];
      line.drop_oldest(t);
      if (line.has_note() && line.note().segment == t) line.clear_note();
    }
  }
};

}  // namespace agebloom
