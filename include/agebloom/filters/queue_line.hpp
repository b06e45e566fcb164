// One 64-byte line as a queue of 12-bit fingerprints, oldest first: the
// bucket of the queue epoch filter (queue_epoch.hpp).
//
// The pocket line (pocket_line.hpp) keeps its fingerprints sorted, so every
// insert shifts a header bit and a body byte into place and every rotation
// repacks both. Here a line keeps them in the order the segments age: a new
// key is appended at the back, a rotation drops the oldest segment's run
// from the front, and a duplicate found in an older run moves to the back.
// So no entry needs a tag: the line counts each segment's run instead, and
// the run an entry is in follows from its position.
//
//   low[40]    entry i's fingerprint, bits 0..7
//   high[20]   entry i's fingerprint, bits 8..11, in the nibble i % 2 of high[i / 2]
//   runs       segment s's entries in the line: bits 4s..4s+3 (at most 15)
//
// Fingerprints are below kFingerprints = 3840, so an entry's high nibble is
// at most 14. A nibble of 15 in slot 39 is the line's *note* instead of an
// entry (the line then holds at most 39): its low byte holds a segment and a
// 5-bit level (fingerprint >> 7, 30 levels). The filter gives it a meaning
// per kind of line: a primary line's "I sent entries at or above this level
// to the spare, the newest of them in this segment", a spare line's "I lost
// entries, the newest of them in this segment".
//
// All-zero bytes are an empty line. Everything here is plain bit work on
// one line: no allocation, freestanding.
#pragma once

#include <cstddef>
#include <cstdint>

// GNU vector extensions for the byte moves (SSE2 on x86-64, whatever the
// target has elsewhere); byte loops where the compiler has none. A build may
// set it to 0 to run the loops (the core suite tests both).
#ifndef AGEBLOOM_QUEUE_VECTORS
#if defined(__GNUC__) && !defined(__CUDACC__)
#define AGEBLOOM_QUEUE_VECTORS 1
#else
#define AGEBLOOM_QUEUE_VECTORS 0
#endif
#endif

namespace agebloom::queue {

inline constexpr uint32_t kCapacity = 40;         // entries per line without a note
inline constexpr uint32_t kFingerprints = 3840;   // 15 · 256: the high nibble is never 15
inline constexpr uint32_t kLevelShift = 7;        // a fingerprint's level: its top 5 bits
inline constexpr uint32_t kLevels = kFingerprints >> kLevelShift;  // 30
inline constexpr uint32_t kMaxRun = 15;           // entries per segment per line (4-bit runs)
inline constexpr uint32_t kSegments = 8;          // runs a line counts
inline constexpr uint32_t kNoteSlot = kCapacity - 1;  // where a note stands

// The order segments age in: cur is the newest, (cur + 1) mod n the oldest.
struct Ring {
  uint32_t cur = 0;  // the segment taking insertions
  uint32_t n = 8;    // segments in use, at most kSegments

  constexpr uint32_t oldest() const noexcept { return cur + 1 == n ? 0 : cur + 1; }  // cleared next
  constexpr uint32_t next(uint32_t s) const noexcept { return s + 1 == n ? 0 : s + 1; }  // the one after s
  // 0 for cur, n − 1 for the oldest.
  constexpr uint32_t age(uint32_t s) const noexcept { return cur >= s ? cur - s : cur + n - s; }
  constexpr uint32_t newer(uint32_t a, uint32_t b) const noexcept { return age(a) <= age(b) ? a : b; }  // of a and b
};

// A note's content.
struct Note {
  uint32_t level;    // a primary line: the lowest level it spilled
  uint32_t segment;  // the newest segment the note covers
};

// The line: entries oldest first, the runs, and a note in slot 39 when it has one.
struct alignas(64) QueueLine {
  uint8_t low[kCapacity];
  uint8_t high[kCapacity / 2];
  uint32_t runs;

#if AGEBLOOM_QUEUE_VECTORS
  using Vec = signed char __attribute__((vector_size(16)));  // signed: one compare instruction
  // One bit per byte of a compare's result (pmovmskb on x86; the compiler's
  // lowering elsewhere).
  static uint64_t movemask(Vec eq) noexcept {
#if defined(__SSE2__)
    using Chars = char __attribute__((vector_size(16)));
    return uint64_t{static_cast<uint16_t>(__builtin_ia32_pmovmskb128(reinterpret_cast<Chars>(eq)))};
#else
    uint64_t m = 0;
    for (uint32_t i = 0; i < 16; ++i) m |= uint64_t{eq[i] != 0} << i;
    return m;
#endif
  }
#endif

  // Entries in the line: the sum of the runs.
  uint32_t count() const noexcept {
    const uint32_t pairs = (runs & 0x0F0F0F0Fu) + (runs >> 4 & 0x0F0F0F0Fu);
    return pairs * 0x01010101u >> 24;
  }
  uint32_t run(uint32_t s) const noexcept { return runs >> (4 * s) & 0xFu; }

  // Whether this line (read from saved bytes: a snapshot) is one the
  // operations here can work on, in a filter of `segments` <= kSegments: no
  // run of a segment past them (segment_of() would never reach its
  // entries), no more entries than capacity(), every entry a fingerprint
  // (a high nibble under 15), and a note, if any, of a live segment and a level.
  bool well_formed(uint32_t segments) const noexcept {
    if (segments < kSegments && runs >> (4 * segments) != 0) return false;
    const uint32_t n = count();
    if (n > capacity()) return false;
    for (uint32_t i = 0; i < n; ++i)
      if (nibble(i) == 0xFu) return false;
    return !has_note() || (note().segment < segments && note().level < kLevels);
  }

  bool has_note() const noexcept { return nibble(kNoteSlot) == 0xFu; }
  Note note() const noexcept { return {uint32_t{low[kNoteSlot]} >> 3, uint32_t{low[kNoteSlot]} & 7u}; }
  void set_note(Note n) noexcept {
    low[kNoteSlot] = static_cast<uint8_t>(n.level << 3 | n.segment);
    set_nibble(kNoteSlot, 0xFu);
  }
  void clear_note() noexcept { set_nibble(kNoteSlot, 0); }
  // Entries the line can hold now: one fewer while it has a note.
  uint32_t capacity() const noexcept { return kCapacity - (has_note() ? 1 : 0); }

  uint32_t fingerprint(uint32_t i) const noexcept { return nibble(i) << 8 | low[i]; }
  // The entries' levels (fingerprint >> kLevelShift), to ask which are at or
  // above a level: a full line's rare path asks a few times.
  struct Levels {
#if AGEBLOOM_QUEUE_VECTORS
    Vec v[3];  // entries 0..15, 16..31 and 24..39
#else
    uint8_t v[kCapacity];
#endif
    // Bit i set where entry i's level is at least `cut` (bits past the count are stale entries').
    uint64_t at_least(uint32_t cut) const noexcept {
#if AGEBLOOM_QUEUE_VECTORS
      const Vec below = Vec{} + static_cast<signed char>(cut - 1);  // levels < 30: signed compares
      return movemask(v[0] > below) | movemask(v[1] > below) << 16 | movemask(v[2] > below) << 24;
#else
      uint64_t m = 0;
      for (uint32_t i = 0; i < kCapacity; ++i) m |= uint64_t{v[i] >= cut} << i;
      return m;
#endif
    }
  };
  Levels levels() const noexcept {
    static_assert(kLevelShift == 7, "a level is the nibble and the low byte's top bit");
    Levels l;
#if AGEBLOOM_QUEUE_VECTORS
    // Nibbles to bytes: a byte of high[] holds entries 2j and 2j + 1, so the
    // low and high nibbles of 16 bytes interleave into 32 entries.
    Vec h0, h1, l0, l1, l2;
    __builtin_memcpy(&h0, high, 16);      // entries 0..31
    __builtin_memcpy(&h1, high + 4, 16);  // entries 8..39
    __builtin_memcpy(&l0, low, 16);
    __builtin_memcpy(&l1, low + 16, 16);
    __builtin_memcpy(&l2, low + 24, 16);
    const Vec m = Vec{} + 0xF;
    const Vec e0 = h0 & m, o0 = (h0 >> 4) & m, e1 = h1 & m, o1 = (h1 >> 4) & m;
    const Vec n0 = __builtin_shufflevector(e0, o0, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const Vec n1 = __builtin_shufflevector(e0, o0, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    const Vec n2 = __builtin_shufflevector(e1, o1, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    const Vec one = Vec{} + 1;
    l.v[0] = (n0 + n0) | ((l0 >> 7) & one);
    l.v[1] = (n1 + n1) | ((l1 >> 7) & one);
    l.v[2] = (n2 + n2) | ((l2 >> 7) & one);
#else
    for (uint32_t j = 0; j < kCapacity / 2; ++j) {
      l.v[2 * j] = static_cast<uint8_t>((high[j] & 0xFu) << 1 | low[2 * j] >> 7);
      l.v[2 * j + 1] = static_cast<uint8_t>((high[j] >> 4) << 1 | low[2 * j + 1] >> 7);
    }
#endif
    return l;
  }

  // Index of an entry of the first n whose fingerprint is f, or -1: the low
  // bytes compared at once, the rare byte match checked on its nibble.
  int find(uint32_t f, uint32_t n) const noexcept {
    uint64_t hit = byte_matches(static_cast<uint8_t>(f)) & ((uint64_t{1} << n) - 1);
    for (; hit; hit &= hit - 1) {
      const uint32_t i = static_cast<uint32_t>(__builtin_ctzll(hit));
      if (nibble(i) == f >> 8) return static_cast<int>(i);
    }
    return -1;
  }

  // The segment whose run holds entry i.
  uint32_t segment_of(uint32_t i, Ring ring) const noexcept {
    uint32_t s = ring.oldest(), end = run(s);
    while (i >= end) {
      s = ring.next(s);
      end += run(s);
    }
    return s;
  }

  // Appends f to the current segment's run, at the back (count() < capacity(),
  // run(cur) < kMaxRun).
  void push(uint32_t f, uint32_t cur) noexcept {
    const uint32_t n = count();
    low[n] = static_cast<uint8_t>(f);
    set_nibble(n, f >> 8);
    runs += 1u << (4 * cur);
  }

  // Adds f at the back of segment s's run, where its age puts it (the spare
  // takes entries of any live segment). Same room as push.
  void insert_in_run(uint32_t f, uint32_t s, Ring ring) noexcept {
    uint32_t at = 0;
    for (uint32_t t = ring.oldest();; t = ring.next(t)) {
      at += run(t);
      if (t == s) break;
    }
    const Kept kept = keep_note();
    open_slot(at);
    low[at] = static_cast<uint8_t>(f);
    set_nibble(at, f >> 8);
    runs += 1u << (4 * s);
    restore_note(kept);
  }

  // Removes entry i (of segment s's run).
  void remove(uint32_t i, uint32_t s) noexcept {
    const Kept kept = keep_note();
    close_slot(i);
    runs -= 1u << (4 * s);
    restore_note(kept);
  }

  // Entry i becomes the newest: moved from its run to the back of cur's.
  void move_to_back(uint32_t i, Ring ring) noexcept {
    const uint32_t f = fingerprint(i);
    remove(i, segment_of(i, ring));
    push(f, ring.cur);
  }

  // Entry i of the first n, just seen again, joins the current run: moved to
  // the back unless it is in that run already. False, and nothing moved,
  // when the current run is full (kMaxRun): the caller must keep it live
  // another way.
  bool renew(uint32_t i, uint32_t n, Ring ring) noexcept {
    if (i >= n - run(ring.cur)) return true;
    if (run(ring.cur) >= kMaxRun) return false;
    move_to_back(i, ring);
    return true;
  }

  // Removes segment s's run, which must be the oldest (a rotation's sweep):
  // the entries move down by its length, the note stays in its slot.
  void drop_oldest(uint32_t s) noexcept {
    const uint32_t k = run(s);
    if (k == 0) return;
    const Kept kept = keep_note();
    // Bytes: the 40 low bytes taken from k on (k <= 15: within the line; the
    // bytes past 40 read here are the nibbles and runs, stale entries' places).
    uint8_t moved[kCapacity];
    __builtin_memcpy(moved, low + k, kCapacity);  // all loads before the stores: no library memmove
    __builtin_memcpy(low, moved, kCapacity);
    // Nibbles: a 160-bit shift right by 4k (k <= 15: by under 64 bits).
    uint64_t w[3] = {0, 0, 0};
    __builtin_memcpy(w, high, sizeof high);
    const uint32_t b = 4 * k;
    w[0] = w[0] >> b | w[1] << (64 - b);
    w[1] = w[1] >> b | w[2] << (64 - b);
    w[2] >>= b;
    __builtin_memcpy(high, w, sizeof high);
    runs &= ~(0xFu << (4 * s));
    restore_note(kept);
  }

 private:
  uint32_t nibble(uint32_t i) const noexcept { return high[i / 2] >> (4 * (i % 2)) & 0xFu; }
  void set_nibble(uint32_t i, uint32_t v) noexcept {
    const uint32_t s = 4 * (i % 2);
    high[i / 2] = static_cast<uint8_t>((high[i / 2] & ~(0xFu << s)) | v << s);
  }
  // Entries i+1.. move down one slot (entry i goes), in both arrays at once:
  // the bytes by a blend of the line with itself a byte further on, the
  // nibbles by a 160-bit shift above bit 4i. Slot 39 takes what lay past it
  // (the caller restores a note there).
  void close_slot(uint32_t i) noexcept {
#if AGEBLOOM_QUEUE_VECTORS
    Vec x[3], up[3];
    __builtin_memcpy(x, low, sizeof x);
    __builtin_memcpy(up, low + 1, sizeof up);  // bytes 1..48: within the line
    const Vec from = Vec{} + static_cast<signed char>(i);
    auto blend = [&](uint32_t k) {
      const Vec move = (kPositions[k] >= from) & (kPositions[k] < kEnd);
      x[k] = (x[k] & ~move) | (up[k] & move);
    };
    blend(0), blend(1), blend(2);
    __builtin_memcpy(low, x, sizeof x);  // bytes 40..47 (nibbles) written back unchanged
#else
    for (uint32_t j = i; j + 1 < kCapacity; ++j) low[j] = low[j + 1];
    low[kCapacity - 1] = high[0];
#endif
    uint64_t w[3];
    load_nibbles(w);
    const uint64_t s[3] = {w[0] >> 4 | w[1] << 60, w[1] >> 4 | w[2] << 60, w[2] >> 4};
    blend_above(w, s, 4 * i);
    store_nibbles(w);
  }
  // Entries at..count-1 move up one slot, leaving slot `at` to be written.
  void open_slot(uint32_t at) noexcept {
#if AGEBLOOM_QUEUE_VECTORS
    unsigned char line[16 + sizeof(QueueLine)];
    __builtin_memcpy(line + 16, this, sizeof(QueueLine));
    Vec x[3], down[3];
    __builtin_memcpy(x, line + 16, sizeof x);
    __builtin_memcpy(down, line + 15, sizeof down);  // byte j - 1 at j
    const Vec from = Vec{} + static_cast<signed char>(at);
    auto blend = [&](uint32_t k) {
      const Vec move = (kPositions[k] > from) & (kPositions[k] < kEnd);
      x[k] = (x[k] & ~move) | (down[k] & move);
    };
    blend(0), blend(1), blend(2);
    __builtin_memcpy(low, x, sizeof x);
#else
    for (uint32_t j = kCapacity - 1; j > at; --j) low[j] = low[j - 1];
#endif
    uint64_t w[3];
    load_nibbles(w);
    const uint64_t s[3] = {w[0] << 4, w[1] << 4 | w[0] >> 60, w[2] << 4 | w[1] >> 60};
    blend_above(w, s, 4 * at);
    store_nibbles(w);
  }
  // The nibbles as a 160-bit number in three words (the third holds 32 bits).
  void load_nibbles(uint64_t (&w)[3]) const noexcept {
    w[2] = 0;
    __builtin_memcpy(w, high, sizeof high);
  }
  void store_nibbles(const uint64_t (&w)[3]) noexcept { __builtin_memcpy(high, w, sizeof high); }
  // w's bits at and above `bit` taken from s.
  static void blend_above(uint64_t (&w)[3], const uint64_t (&s)[3], uint32_t bit) noexcept {
    for (uint32_t j = 0; j < 3; ++j) {
      const uint32_t lo = 64 * j;
      const uint64_t keep = bit >= lo + 64 ? ~uint64_t{0} : bit <= lo ? 0 : (uint64_t{1} << (bit - lo)) - 1;
      w[j] = (w[j] & keep) | (s[j] & ~keep);
    }
  }

#if AGEBLOOM_QUEUE_VECTORS
  static constexpr Vec kEnd = Vec{} + static_cast<signed char>(kCapacity);
  // The line's byte offsets 0..47, as three registers hold them.
  static constexpr Vec kPositions[3] = {{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
                                        {16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31},
                                        {32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47}};
#endif

  // The note across a move of the entries (which may run through slot 39).
  struct Kept {
    bool present;
    uint8_t byte;
  };
  Kept keep_note() const noexcept { return {has_note(), low[kNoteSlot]}; }
  void restore_note(Kept k) noexcept {
    if (k.present) {
      low[kNoteSlot] = k.byte;
      set_nibble(kNoteSlot, 0xFu);
    } else if (count() < kCapacity) {
      set_nibble(kNoteSlot, 0);  // a moved entry's nibble is never 15; an empty slot says no note
    }
  }

  // Bit i set where low[i] == b, for i < 40 (bits past 40 are the nibbles'
  // bytes: callers mask to the count).
  uint64_t byte_matches(uint8_t b) const noexcept {
#if AGEBLOOM_QUEUE_VECTORS
    Vec a, b16, c;
    __builtin_memcpy(&a, low, 16);
    __builtin_memcpy(&b16, low + 16, 16);
    __builtin_memcpy(&c, low + 32, 16);
    const Vec key = Vec{} + static_cast<signed char>(b);
    return movemask(a == key) | movemask(b16 == key) << 16 | movemask(c == key) << 32;
#else
    // Broadword: a zero byte of low ^ b, exactly (no borrow crosses a byte
    // whose high bit is forced on), gathered one bit per byte.
    constexpr uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
    uint64_t hit = 0;
    for (uint32_t w = 0; w < kCapacity / 8; ++w) {
      uint64_t x;
      __builtin_memcpy(&x, low + 8 * w, 8);
      x ^= kOnes * b;
      const uint64_t zero = ~((x | kHigh) - kOnes) & ~x & kHigh;
      hit |= ((zero >> 7) * 0x0102040810204080ull >> 56) << (8 * w);
    }
    return hit;
#endif
  }
};
static_assert(sizeof(QueueLine) == 64, "one cache line");

}  // namespace agebloom::queue
