// One 64-byte line as a small dictionary of short fingerprints, each tagged
// with the epoch (segment) it was last inserted in: the bucket of the pocket
// epoch filter (pocket_epoch.hpp).
//
// The encoding is the prefix filter's pocket dictionary (Even, Even and
// Morrison, "Prefix Filter: Practically and Theoretically Better Than Bloom",
// VLDB 2022, Sec. 4): a fingerprint is a quotient q < kQuotients and a
// remainder; the line keeps, per quotient, how many entries it has, in unary
// (a 1 per entry, then a 0: kQuotients zeros and at most kCapacity ones in
// 160 bits), and the entries' bytes in quotient order. Only the remainder is
// stored, so a line of 40 entries pays 160/40 = 4 header bits per entry for a
// 12-bit fingerprint (log2(120·32)), where a plain slot array would pay 12.
// Here each byte is a 5-bit remainder and a 3-bit tag: the epoch filter asks
// "is this fingerprint in any live segment?" and sweeps one tag at a rotation.
//
//   head[0], head[1], head[2] bits 0..31   the unary header (160 bits)
//   head[2] bits 32..39                    `marks`: a tag mask the filter keeps per line
//                                          (a primary line: tags whose entries spilled;
//                                          a spare line: tags it could not store)
//   head[2] bits 40..51                    `floor`: the smallest fingerprint spilled
//   head[2] bits 52..57                    the entry count
//   body (40 bytes)                        remainder << 3 | tag, in quotient order
//
// All-zero bytes are an empty line. Everything here is plain, constexpr-free
// bit work on one line: no allocation, freestanding.
#pragma once

#include <cstddef>
#include <cstdint>

namespace agebloom::pocket {

inline constexpr uint32_t kQuotients = 120;       // lists per line
inline constexpr uint32_t kCapacity = 40;         // entries per line
inline constexpr uint32_t kRemainderBits = 5;     // stored fingerprint bits per entry
inline constexpr uint32_t kTagBits = 3;           // epoch tag bits per entry: 8 segments
inline constexpr uint32_t kTags = 1u << kTagBits;  // segments a tag can name
// Distinct fingerprints: quotient · 2^remainder bits (3840 < 2^12).
inline constexpr uint32_t kFingerprints = kQuotients << kRemainderBits;
inline constexpr uint32_t kHeaderBits = kQuotients + kCapacity;  // 160
static_assert(kHeaderBits == 160, "the header is head[0], head[1] and head[2]'s low half");

namespace detail {
// kSelectInByte[v][j]: the position of the j-th set bit of byte v (8 if none).
struct SelectInByte {
  uint8_t pos[256][8] = {};
};
inline constexpr SelectInByte kSelectInByte = [] {
  SelectInByte t;
  for (uint32_t v = 0; v < 256; ++v) {
    uint32_t j = 0;
    for (uint32_t b = 0; b < 8; ++b)
      if (v >> b & 1) t.pos[v][j++] = static_cast<uint8_t>(b);
    for (; j < 8; ++j) t.pos[v][j] = 8;
  }
  return t;
}();

// Position of the j-th set bit (from 0) of x; j < popcount(x). Broadword:
// the bytes' running popcounts say which byte holds it (a byte compare done
// with one subtraction), a table says where in that byte. With kPdep, BMI2's
// pdep deposits bit j onto x's j-th set bit in one instruction; it is
// written as inline assembly so that this header needs no target attribute
// and no intrinsics header (the core stays freestanding), and it is only
// run where cpu_has_fast_pdep() said so.
template <bool kPdep = false>
inline uint32_t select64(uint64_t x, uint32_t j) noexcept {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDACC__)
  if constexpr (kPdep) {
    uint64_t bit;
    __asm__("{pdepq %2, %1, %0|pdep %0, %1, %2}" : "=r"(bit) : "r"(uint64_t{1} << j), "r"(x));
    return static_cast<uint32_t>(__builtin_ctzll(bit));
  }
#endif
  constexpr uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
  uint64_t s = x - ((x >> 1) & 0x5555555555555555ull);
  s = (s & 0x3333333333333333ull) + ((s >> 2) & 0x3333333333333333ull);
  s = (s + (s >> 4)) & 0x0f0f0f0f0f0f0f0full;
  const uint64_t running = s * kOnes;  // byte i: set bits in bytes 0..i (at most 64: no carry)
  // Bytes whose running count is <= j: high bit of (128 + j) - running_i.
  const uint64_t le = ((j * kOnes) | kHigh) - running;
  const uint32_t byte = static_cast<uint32_t>(__builtin_popcountll(le & kHigh));
  const uint32_t before = byte ? static_cast<uint32_t>(running >> (8 * byte - 8)) & 0xff : 0;
  return 8 * byte + kSelectInByte.pos[(x >> (8 * byte)) & 0xff][j - before];
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDACC__)
#define AGEBLOOM_POCKET_PDEP 1
// BMI2's deposit and extract, as inline assembly (see select64): only run
// where cpu_has_fast_pdep() said so.
inline uint64_t pdep64(uint64_t x, uint64_t mask) noexcept {
  uint64_t r;
  __asm__("{pdepq %2, %1, %0|pdep %0, %1, %2}" : "=r"(r) : "r"(x), "r"(mask));
  return r;
}
inline uint64_t pext64(uint64_t x, uint64_t mask) noexcept {
  uint64_t r;
  __asm__("{pextq %2, %1, %0|pext %0, %1, %2}" : "=r"(r) : "r"(x), "r"(mask));
  return r;
}
#else
#define AGEBLOOM_POCKET_PDEP 0
#endif

// Bits appended one run after another into words: how a sweep packs the header bits it keeps.
template <uint32_t kWords>
struct BitPacker {
  uint64_t word[kWords] = {};
  uint32_t at = 0;  // bits written
  // Appends the low `n` <= 64 bits of x (x has no bits above them).
  void append(uint64_t x, uint32_t n) noexcept {
    const uint32_t w = at / 64, b = at % 64;
    if (w < kWords) word[w] |= x << b;
    if (b && w + 1 < kWords) word[w + 1] |= x >> (64 - b);
    at += n;
  }
};
}  // namespace detail

// A fingerprint's parts: the list it belongs to and the bits stored.
struct Fingerprint {
  uint32_t quotient;   // < kQuotients
  uint32_t remainder;  // < 2^kRemainderBits
  constexpr uint32_t value() const noexcept { return quotient << kRemainderBits | remainder; }  // < kFingerprints
  // The parts of value v < kFingerprints.
  static constexpr Fingerprint of(uint32_t v) noexcept { return {v >> kRemainderBits, v & ((1u << kRemainderBits) - 1)}; }
};

// One line: header and fields in head[], the entries' bytes in body[]
// (byte i of the body is byte i % 8 of body[i / 8], little-endian), so that
// inserting or removing an entry shifts five words, not up to 40 bytes.
struct alignas(64) PocketLine {
  uint64_t head[3];
  uint64_t body[kCapacity / 8];

  // -- the per-line fields in head[2]'s high half ---------------------------
  static constexpr uint64_t kHeaderHigh = 0xffffffffull;  // head[2]'s header bits
  uint32_t count() const noexcept { return static_cast<uint32_t>(head[2] >> 52) & 63; }  // entries held
  bool full() const noexcept { return count() == kCapacity; }
  uint32_t marks() const noexcept { return static_cast<uint32_t>(head[2] >> 32) & 0xff; }  // tag mask
  uint32_t floor() const noexcept { return static_cast<uint32_t>(head[2] >> 40) & 0xfff; }  // smallest spilled
  void set_marks(uint32_t m) noexcept { head[2] = (head[2] & ~(0xffull << 32)) | uint64_t{m & 0xff} << 32; }
  void set_floor(uint32_t f) noexcept { head[2] = (head[2] & ~(0xfffull << 40)) | uint64_t{f & 0xfff} << 40; }
  // The count one up (the line not full) or one down (not empty): the field
  // cannot carry or borrow into its neighbours.
  void count_up() noexcept { head[2] += uint64_t{1} << 52; }
  void count_down() noexcept { head[2] -= uint64_t{1} << 52; }

  // Whether this line (read from saved bytes: a snapshot) is one the
  // operations here can work on, in a filter of `segments` <= kTags tags: a
  // unary header of count() <= kCapacity ones whose last 1 lies in one of
  // the kQuotients lists (a select past the header would index beyond the
  // line), no bits above the count, a floor that is a fingerprint, and no
  // entry or mark of a tag past the segments (no rotation would clear it).
  bool well_formed(uint32_t segments) const noexcept {
    const uint32_t n = count();
    const uint64_t h2 = head[2] & kHeaderHigh;
    if (n > kCapacity || head[2] >> 58 != 0 || floor() >= kFingerprints || marks() >> segments != 0) return false;
    const uint32_t ones = static_cast<uint32_t>(__builtin_popcountll(head[0]) + __builtin_popcountll(head[1]) +
                                                __builtin_popcountll(h2));
    if (ones != n) return false;
    if (n == 0) return true;
    const uint32_t last = h2 ? 191 - static_cast<uint32_t>(__builtin_clzll(h2))
                          : head[1] ? 127 - static_cast<uint32_t>(__builtin_clzll(head[1]))
                                    : 63 - static_cast<uint32_t>(__builtin_clzll(head[0]));
    if (last - (n - 1) >= kQuotients) return false;  // the zeros before it: its list
    for (uint32_t i = 0; i < n; ++i)
      if (tag(i) >= segments) return false;
    return true;
  }

  // Entry i's byte: remainder << kTagBits | tag.
  uint32_t entry(uint32_t i) const noexcept { return static_cast<uint32_t>(body[i / 8] >> (i % 8 * 8)) & 0xff; }

  // -- lists -----------------------------------------------------------------
  // Where list q is: its header bit position and its first entry's index.
  struct List {
    uint32_t pos;    // header position of its first 1 (or of its closing 0)
    uint32_t index;  // body index of its first entry
    uint32_t size;   // entries in it
  };

  // (kPdep: select with BMI2's pdep, detail::select64.)
  template <bool kPdep = false>
  List list(uint32_t q) const noexcept {
    // pos = one past the (q-1)-th 0 (0 for q = 0): the word that holds it by
    // the words' zero counts, then select inside it. The word is picked
    // without a branch (q is random: a branch would miss a third of the time).
    const uint64_t z0 = ~head[0], z1 = ~head[1], z2 = ~head[2] & kHeaderHigh;
    const uint32_t c0 = static_cast<uint32_t>(__builtin_popcountll(z0));
    const uint32_t c01 = c0 + static_cast<uint32_t>(__builtin_popcountll(z1));
    const uint32_t j = q - 1;  // wraps for q = 0: handled below
    const bool in0 = j < c0, in1 = !in0 && j < c01;
    const uint64_t word = in0 ? z0 : in1 ? z1 : z2;
    const uint32_t base = in0 ? 0 : in1 ? 64 : 128, skip = in0 ? 0 : in1 ? c0 : c01;
    const uint32_t pos = q ? base + detail::select64<kPdep>(word, q ? j - skip : 0) + 1 : 0;
    // Its size: the run of 1s from pos (under 64: a list holds at most 40).
    const uint64_t rest = ~header_from(pos);
    return {pos, pos - q, static_cast<uint32_t>(__builtin_ctzll(rest))};
  }

  // Index of the entry of list l whose remainder is r (any tag), or -1. The
  // list's first eight bytes are compared at once (a list is almost always
  // shorter: 0.3 entries on average at the 1% sizing), longer lists go on a
  // byte at a time.
  int find_in(const List& l, uint32_t r) const noexcept {
    constexpr uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
    const uint32_t w = l.index / 8, b = l.index % 8 * 8;
    // index is 40 for an empty list past a full line's last: no word there.
    const uint64_t here = w < kCapacity / 8 ? body[w] : 0, next = w + 1 < kCapacity / 8 ? body[w + 1] : 0;
    const uint64_t bytes = (here >> b) | ((next << 1) << (63 - b));  // entries index .. index + 7
    const uint64_t diff = (bytes ^ (uint64_t{r << kTagBits} * kOnes)) & (kOnes * 0xf8);  // 0 where the remainder matches
    uint64_t hit = ~((diff | kHigh) - kOnes) & ~diff & kHigh;  // high bit of each matching byte (exact)
    const uint32_t size = l.size < 8 ? l.size : 8;
    hit &= size ? ~uint64_t{0} >> (64 - 8 * size) : 0;
    if (hit) return static_cast<int>(l.index + static_cast<uint32_t>(__builtin_ctzll(hit)) / 8);
    for (uint32_t i = l.index + 8; i < l.index + l.size; ++i)
      if (entry(i) >> kTagBits == r) return static_cast<int>(i);
    return -1;
  }

  // Index of the entry with fingerprint f (any tag), or -1.
  template <bool kPdep = false>
  int find(Fingerprint f) const noexcept {
    return find_in(list<kPdep>(f.quotient), f.remainder);
  }

  uint32_t tag(uint32_t i) const noexcept { return entry(i) & (kTags - 1); }  // entry i's tag
  void retag(uint32_t i, uint32_t t) noexcept {
    const uint32_t shift = i % 8 * 8;
    body[i / 8] = (body[i / 8] & ~(uint64_t{kTags - 1} << shift)) | uint64_t{t} << shift;
  }

  // Adds remainder r with tag t at the end of list l (found in this line as
  // it is); the line must not be full.
  void insert_at(const List& l, uint32_t r, uint32_t t) noexcept {
    insert_bit(l.pos + l.size);
    insert_byte(l.index + l.size, r << kTagBits | t);
    count_up();
  }
  // Adds f with tag t at the end of its list; the line must not be full.
  template <bool kPdep = false>
  void insert(Fingerprint f, uint32_t t) noexcept {
    insert_at(list<kPdep>(f.quotient), f.remainder, t);
  }

  // Removes entry i.
  template <bool kPdep = false>
  void remove(uint32_t i) noexcept {
    remove_bit(one_position<kPdep>(i));
    remove_byte(i);
    count_down();
  }

  // The fingerprint of entry i.
  template <bool kPdep = false>
  Fingerprint fingerprint(uint32_t i) const noexcept {
    return {one_position<kPdep>(i) - i, entry(i) >> kTagBits};  // zeros before its 1 = its quotient
  }

  // The entry with the largest fingerprint (the line must not be empty): in
  // the last list, the largest remainder.
  template <bool kPdep = false>
  uint32_t largest() const noexcept {
    const uint32_t n = count();
    const uint32_t last = one_position<kPdep>(n - 1);
    uint32_t best = n - 1;
    // The last list's entries are the 1s right below `last`.
    for (uint32_t i = n - 1, p = last; i-- > 0 && p-- > 0 && header_bit(p);)
      if (entry(i) > entry(best)) best = i;  // remainders compare as the bytes do (the tag is below)
    return best;
  }

  // Removes every entry tagged t (an epoch rotation's sweep); returns how many.
  template <bool kPdep = false>
  uint32_t remove_tag(uint32_t t) noexcept {
    const uint32_t n = count();
    constexpr uint64_t kOnes = 0x0101010101010101ull;
    uint64_t gone = 0;  // bit i: entry i goes
#if defined(__SSE2__) && defined(__GNUC__) && !defined(__CUDACC__)
    {
      // The line's bytes 16..63 compared at once, one mask bit per byte
      // (pmovmskb; ~10 instructions where the word loop took ~40); the body
      // begins at byte 24.
      const unsigned char* const p = reinterpret_cast<const unsigned char*>(this) + 16;
      Bytes16 r[3];
      __builtin_memcpy(r, p, sizeof r);
      const Bytes16 tag = Bytes16{} + static_cast<signed char>(t);
      uint64_t hit = 0;
      for (uint32_t k = 0; k < 3; ++k)
        hit |= uint64_t{static_cast<uint16_t>(__builtin_ia32_pmovmskb128(
                   reinterpret_cast<Chars16>((r[k] & static_cast<signed char>(kTags - 1)) == tag)))}
               << (16 * k);
      gone = hit >> 8;
    }
#else
    // Entries tagged t, as the high bit of their byte: exact per byte (no borrow
    // crosses a byte whose high bit is forced on).
    constexpr uint64_t kHigh = 0x8080808080808080ull, kTagMask = kOnes * (kTags - 1);
    for (uint32_t w = 0; w < kCapacity / 8; ++w) {
      const uint64_t low = (body[w] ^ (t * kOnes)) & kTagMask;
      const uint64_t hit = ~((low | kHigh) - kOnes) & kHigh;
      gone |= ((hit >> 7) * 0x0102040810204080ull >> 56) << (8 * w);  // one bit per byte, gathered
    }
#endif
    gone &= n == 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1;
    if (!gone) return 0;
    const uint32_t removed = static_cast<uint32_t>(__builtin_popcountll(gone));
#if AGEBLOOM_POCKET_PDEP
    if constexpr (kPdep) {
      // All at once: pdep places each header word's share of `gone` on its
      // 1s, pext keeps the other bits; the body's kept bytes likewise.
      const uint64_t meta = head[2] & ~kHeaderHigh;
      const uint64_t h[3] = {head[0], head[1], head[2] & kHeaderHigh};
      detail::BitPacker<3> header;
      uint64_t entries = gone;
      for (uint32_t w = 0; w < 3; ++w) {
        const uint32_t ones = static_cast<uint32_t>(__builtin_popcountll(h[w]));
        const uint64_t drop = detail::pdep64(entries, h[w]);
        entries = ones == 64 ? 0 : entries >> ones;
        const uint32_t width = w < 2 ? 64 : 32;
        const uint64_t keep = ~drop & (w < 2 ? ~uint64_t{0} : kHeaderHigh);
        header.append(detail::pext64(h[w], keep), width - static_cast<uint32_t>(__builtin_popcountll(drop)));
      }
      head[0] = header.word[0], head[1] = header.word[1], head[2] = (header.word[2] & kHeaderHigh) | meta;
      // The body's kept bytes: each word's, packed by pext, stored at the
      // next free byte (whole bytes, so an unaligned store places them).
      unsigned char bytes[kCapacity + 8] = {};
      uint32_t at = 0;
      for (uint32_t w = 0; w < kCapacity / 8; ++w) {
        const uint64_t keep_entries = ~(gone >> (8 * w)) & 0xff;
        const uint64_t keep = detail::pdep64(keep_entries, kOnes) * 0xff;  // a kept entry's whole byte
        const uint64_t kept = detail::pext64(body[w], keep);
        __builtin_memcpy(bytes + at, &kept, 8);
        at += static_cast<uint32_t>(__builtin_popcountll(keep_entries));
      }
      __builtin_memcpy(body, bytes, kCapacity);
      head[2] -= uint64_t{removed} << 52;
      return removed;
    }
#endif
    for (uint64_t g = gone; g;) {  // highest first: lower indices stay where they are
      const uint32_t i = 63 - static_cast<uint32_t>(__builtin_clzll(g));
      remove<kPdep>(i);
      g &= ~(uint64_t{1} << i);
    }
    return removed;
  }

 private:
  // The header's bits p .. p + 63 (zeros past bit 159).
  uint64_t header_from(uint32_t p) const noexcept {
    const uint64_t h2 = head[2] & kHeaderHigh;
    const uint32_t w = p / 64, b = p % 64;
    const uint64_t lo = w == 0 ? head[0] : w == 1 ? head[1] : h2;  // selects, not an indexed array:
    const uint64_t hi = w == 0 ? head[1] : w == 1 ? h2 : 0;         // no store and reload
    return (lo >> b) | ((hi << 1) << (63 - b));  // two shifts: b = 0 needs no UB
  }
  bool header_bit(uint32_t p) const noexcept { return header_from(p) & 1; }

  // Header position of the i-th 1 (entry i).
  template <bool kPdep>
  uint32_t one_position(uint32_t i) const noexcept {
    const uint32_t c0 = static_cast<uint32_t>(__builtin_popcountll(head[0]));
    if (i < c0) return detail::select64<kPdep>(head[0], i);
    i -= c0;
    const uint32_t c1 = static_cast<uint32_t>(__builtin_popcountll(head[1]));
    return i < c1 ? 64 + detail::select64<kPdep>(head[1], i)
                  : 128 + detail::select64<kPdep>(head[2] & kHeaderHigh, i - c1);
  }

  // Shifts header bits [p, 159) up by one and sets bit p (bit 159 is 0: the
  // line is not full, so ones + zeros < 160). Three words, no loop.
  void insert_bit(uint32_t p) noexcept {
    const uint64_t meta = head[2] & ~kHeaderHigh;
    const uint64_t h0 = head[0], h1 = head[1], h2 = head[2] & kHeaderHigh;
    const uint32_t w = p / 64;
    const uint64_t bit = uint64_t{1} << (p % 64), below = bit - 1;
    auto at = [&](uint64_t x) { return (x & below) | ((x & ~below) << 1) | bit; };
    head[0] = w == 0 ? at(h0) : h0;
    head[1] = w == 1 ? at(h1) : w == 0 ? (h1 << 1 | h0 >> 63) : h1;
    head[2] = ((w == 2 ? at(h2) : (h2 << 1 | h1 >> 63)) & kHeaderHigh) | meta;
  }

  // Removes header bit p, shifting the bits above it down by one.
  void remove_bit(uint32_t p) noexcept {
    const uint64_t meta = head[2] & ~kHeaderHigh;
    const uint64_t h0 = head[0], h1 = head[1], h2 = head[2] & kHeaderHigh;
    const uint32_t w = p / 64;
    const uint64_t below = (uint64_t{1} << (p % 64)) - 1;
    auto at = [&](uint64_t x, uint64_t next) { return (x & below) | ((x >> 1) & ~below) | next << 63; };
    head[0] = w == 0 ? at(h0, h1) : h0;
    head[1] = w == 1 ? at(h1, h2) : w == 0 ? (h1 >> 1 | h2 << 63) : h1;
    head[2] = (w == 2 ? at(h2, 0) : h2 >> 1) | meta;
  }

  // Body bytes [i, 39) up by one, v at i (byte 39 is free: the line is not
  // full). Branch-free: with vectors, the line's bytes 16..63 as three
  // 16-byte registers shifted by one byte and blended in by position (~30
  // instructions where a word loop took ~90, measured with callgrind).
  void insert_byte(uint32_t i, uint32_t v) noexcept {
#if defined(__GNUC__) && !defined(__CUDACC__)
    unsigned char* const p = reinterpret_cast<unsigned char*>(this) + 16;
    Bytes16 a, b, c;
    __builtin_memcpy(&a, p, 16);
    __builtin_memcpy(&b, p + 16, 16);
    __builtin_memcpy(&c, p + 32, 16);
    const Bytes16 at = Bytes16{} + static_cast<signed char>(24 + i), value = Bytes16{} + static_cast<signed char>(v);
    // up: every byte moved one place up (the byte below it, across registers).
    const Bytes16 up_a = __builtin_shufflevector(a, a, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14);
    const Bytes16 up_b = __builtin_shufflevector(a, b, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30);
    const Bytes16 up_c = __builtin_shufflevector(b, c, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30);
    auto blend = [&](Bytes16 x, Bytes16 up, Bytes16 pos) {
      // Per byte: the value at `at`, the byte below past it, x before it (two
      // byte blends where SSE4.1 has them).
      return pos == at ? value : pos > at ? up : x;
    };
    a = blend(a, up_a, kPositions[0]);
    b = blend(b, up_b, kPositions[1]);
    c = blend(c, up_c, kPositions[2]);
    __builtin_memcpy(p, &a, 16);
    __builtin_memcpy(p + 16, &b, 16);
    __builtin_memcpy(p + 32, &c, 16);
#else
    const uint32_t k = i / 8, s = i % 8 * 8;
    for (uint32_t m = kCapacity / 8 - 1; m > k; --m) body[m] = body[m] << 8 | body[m - 1] >> 56;
    const uint64_t below = (uint64_t{1} << s) - 1;
    body[k] = (body[k] & below) | ((body[k] & ~below) << 8) | uint64_t{v} << s;
#endif
  }

  // Removes body byte i, bytes above it down by one (byte 39 becomes 0).
  void remove_byte(uint32_t i) noexcept {
#if defined(__GNUC__) && !defined(__CUDACC__)
    unsigned char* const p = reinterpret_cast<unsigned char*>(this) + 16;
    Bytes16 a, b, c;
    __builtin_memcpy(&a, p, 16);
    __builtin_memcpy(&b, p + 16, 16);
    __builtin_memcpy(&c, p + 32, 16);
    const Bytes16 zero = {}, at = Bytes16{} + static_cast<signed char>(24 + i);
    // down: every byte moved one place down (the byte above it; 0 past the line).
    const Bytes16 down_a = __builtin_shufflevector(a, b, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16);
    const Bytes16 down_b = __builtin_shufflevector(b, c, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16);
    const Bytes16 down_c = __builtin_shufflevector(c, zero, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16);
    auto blend = [&](Bytes16 x, Bytes16 down, Bytes16 pos) {
      return pos >= at ? down : x;  // from `at` on, the byte above
    };
    a = blend(a, down_a, kPositions[0]);
    b = blend(b, down_b, kPositions[1]);
    c = blend(c, down_c, kPositions[2]);
    __builtin_memcpy(p, &a, 16);
    __builtin_memcpy(p + 16, &b, 16);
    __builtin_memcpy(p + 32, &c, 16);
#else
    const uint32_t k = i / 8, s = i % 8 * 8;
    const uint64_t below = (uint64_t{1} << s) - 1;
    body[k] = (body[k] & below) | ((body[k] >> 8) & ~below);
    for (uint32_t m = k; m + 1 < kCapacity / 8; ++m) {
      body[m] |= body[m + 1] << 56;
      body[m + 1] >>= 8;
    }
#endif
  }

#if defined(__GNUC__) && !defined(__CUDACC__)
  using Bytes16 = signed char __attribute__((vector_size(16)));  // signed: one compare instruction
  using Chars16 = char __attribute__((vector_size(16)));          // what pmovmskb takes
  // The line's byte offsets 16..63, as the three registers hold them.
  static constexpr Bytes16 kPositions[3] = {
      {16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31},
      {32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47},
      {48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63}};
#endif
};
static_assert(sizeof(PocketLine) == 64, "one cache line");

}  // namespace agebloom::pocket
