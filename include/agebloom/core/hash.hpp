// Hash once, probe many: every filter takes a KeyHash, never key bytes.
//
// A key is hashed once with XXH3-128 under a per-instance secret seed; the two
// 64-bit halves drive every probe of every segment (Kirsch & Mitzenmacher,
// "Less hashing, same performance", ESA 2006). The seed is what stops an
// attacker from grinding keys that collide or saturate the filter, so callers
// should draw it at random per process (dedup_fwd does, unless --seed is set).
//
// Positions are mapped onto [0, n) by multiply-shift ((h * n) >> 64, Lemire
// 2019), not modulo: no division on the hot path and no bias towards small
// residues for n that are not powers of two. Where a structure picks a block
// and then bits inside it, the two come from independent halves of the hash
// (h1 for the block, h2 for the in-block pattern): reusing bits would
// correlate them and raise the false-positive rate.
#pragma once

#include <cstddef>
#include <cstdint>

#ifndef XXH_INLINE_ALL
#define XXH_INLINE_ALL
#endif
#include <xxhash.h>

#include <type_traits>

#include "agebloom/core/isa.hpp"
#include "agebloom/core/short_keys_avx2.hpp"
#include "agebloom/core/short_keys_avx512.hpp"

namespace agebloom {

// A key hashed once: the two halves of its XXH3-128 under the Hasher's seed.
struct KeyHash {
  uint64_t h1 = 0;  // low half: the block or line, and the first probe position
  uint64_t h2 = 0;  // high half: the probe step, and the in-block pattern
  constexpr bool operator==(const KeyHash&) const = default;  // field by field
};

// Hashes key bytes into KeyHash under a seed: one per filter (or per process),
// the same seed wherever the same keys must meet the same bits.
class Hasher {
 public:
  // Seed 0 is fixed and known: draw the seed at random where keys come from
  // outside (above).
  // hash_bulk uses the widest body the CPU has (asked once, here; a Hasher
  // made at compile time keeps the scalar routine).
  constexpr explicit Hasher(uint64_t seed = 0) noexcept
      : seed_(seed),
        flips_{short_key_flip(seed), (secret64(32) ^ secret64(40)) - seed, (secret64(48) ^ secret64(56)) + seed},
        isa_(std::is_constant_evaluated() ? Isa::baseline : widest_isa(Isa::avx512)) {}
  constexpr uint64_t seed() const noexcept { return seed_; }  // the seed it was made with

  // XXH3-128 of key[0, length) under the seed.
  KeyHash operator()(const void* key, size_t length) const noexcept {
    const XXH128_hash_t r = XXH3_128bits_withSeed(key, length, seed_);
    return KeyHash{r.low64, r.high64};
  }

  // The same hash of a key whose length is known at compile time (an IPv4
  // address key, a 5-tuple): XXH3's length dispatch folds away, leaving only
  // its 4-8 or 9-16 byte routine. Equal to (*this)(key, N) bit for bit.
  //
  // Keys of 4 to 8 bytes (an address with its tag) take XXH3's 4-8 byte
  // routine written out with its one seed-dependent constant, the "bitflip"
  // of the secret's bytes 16..31 and the seed, computed once per Hasher
  // instead of once per key (XXH3 specification, "len 4-8"; 9 of the ~35
  // instructions per key in dedup_fwd). tests/core/hash_test.cpp holds it to
  // libxxhash's result for every length, and seeds.
  template <size_t N>
  KeyHash fixed(const void* key) const noexcept {
    if constexpr (N >= 4 && N <= 8) {
      // XXH3_len_4to8_128b with the bitflip precomputed, from xxhash.h's own pieces.
      const auto* p = static_cast<const uint8_t*>(key);
      const uint64_t keyed = (XXH_readLE32(p) + (uint64_t{XXH_readLE32(p + N - 4)} << 32)) ^ flips_.len4to8;
      XXH128_hash_t m = XXH_mult64to128(keyed, XXH_PRIME64_1 + (N << 2));
      m.high64 += m.low64 << 1;
      m.low64 ^= m.high64 >> 3;
      m.low64 = XXH_xorshift64(m.low64, 35);
      m.low64 *= 0x9FB21C651E98DF25ULL;  // a literal in xxhash.h 0.8.1's routine too
      m.low64 = XXH_xorshift64(m.low64, 28);
      return KeyHash{m.low64, XXH3_avalanche(m.high64)};
    } else {
      const XXH128_hash_t r = XXH3_128bits_withSeed(key, N, seed_);
      return KeyHash{r.low64, r.high64};
    }
  }

  // fixed<N> of n keys held as little-endian words: key i's bytes [0, 8) in
  // first[i] and, for N > 8, its bytes [8, 16) in second[i] (second may be
  // null for N <= 8; bytes past N are ignored). A packet parser's keys of
  // constant length, hashed after the whole burst is parsed: with AVX2, four
  // keys at a time straight from the arrays (dedup_fwd's stage 1).
  template <size_t N>
  void fixed_bulk(const uint64_t* first, const uint64_t* second, size_t n, KeyHash* out) const noexcept {
    static_assert(N >= 4 && N <= 16, "keys of 4 to 16 bytes");
    size_t i = 0;
#if AGEBLOOM_INTRINSICS_DISPATCH
    // Eight keys at a time with AVX-512, then four with AVX2 (every CPU with
    // AVX-512 has it), then one.
    if (isa_ == Isa::avx512) i = short_keys_avx512::words<N>(first, second, n, flips_, &out[0].h1);
    if (isa_ != Isa::baseline)
      i += short_keys_avx2::words<N>(first + i, N > 8 ? second + i : second, n - i, flips_, &out[i].h1);
#endif
    for (; i < n; ++i) {
      uint8_t key[16];
      __builtin_memcpy(key, &first[i], 8);
      if constexpr (N > 8) __builtin_memcpy(key + 8, &second[i], 8);
      out[i] = fixed<N>(key);
    }
  }

  // The first stage of every bulk path: hash the whole burst, so the filter's
  // prefetch can run ahead on positions before any probe. With AVX-512 (AVX2),
  // each group of eight (four) keys of one length from 4 to 16 bytes is
  // hashed together.
  void hash_bulk(const void* const* keys, const size_t* lengths, size_t n, KeyHash* out) const noexcept {
#if AGEBLOOM_INTRINSICS_DISPATCH
    if (isa_ == Isa::avx512) return hash_groups<8>(short_keys_avx512::pointers, keys, lengths, n, out);
    if (isa_ == Isa::avx2) return hash_groups<4>(short_keys_avx2::pointers, keys, lengths, n, out);
#endif
    for (size_t i = 0; i < n; ++i) out[i] = (*this)(keys[i], lengths[i]);
  }

  // The body hash_bulk runs (the answer is the same bits whichever it is).
  Isa isa() const noexcept { return isa_; }
  // The widest body hash_bulk may run: it runs the widest of those the CPU
  // has (baseline forces the scalar routine; tests and benchmarks compare).
  void use_isa(Isa widest) noexcept { isa_ = widest_isa(widest); }

 private:
  // The widest body up to `widest` that the CPU runs (AVX-512 needs DQ's
  // 64-bit multiply).
  static Isa widest_isa(Isa widest) noexcept {
#if AGEBLOOM_INTRINSICS_DISPATCH
    if (widest >= Isa::avx512 && cpu_has_avx512dq()) return Isa::avx512;
    if (widest >= Isa::avx2 && cpu_has_avx2()) return Isa::avx2;
#endif
    (void)widest;
    return Isa::baseline;
  }

#if AGEBLOOM_INTRINSICS_DISPATCH
  // hash_bulk with a vector body of Group lanes: the keys in groups from the
  // start, each group that shares one length from 4 to 16 bytes hashed
  // together by `group_body` (short_keys_avx512::pointers or
  // short_keys_avx2::pointers), runs of other groups (and the tail) one key at
  // a time by hash_each. One length check per group: long keys lose ~5% to
  // it with groups of eight, ~8% with four (agebloom-bench hash/bulk/len:32).
  template <size_t Group, class Body>
  void hash_groups(Body group_body, const void* const* keys, const size_t* lengths, size_t n,
                   KeyHash* out) const noexcept {
    size_t i = 0;
    while (i < n) {
      size_t j = i;
      while (j + Group <= n && !short_keys::groupable(lengths[j])) j += Group;
      if (j + Group > n) j = n;
      if (j > i) {
        hash_each(keys + i, lengths + i, j - i, out + i);
        i = j;
        continue;
      }
      const size_t done = group_body(keys + i, lengths + i, n - i, flips_, &out[i].h1);
      if (done == 0) hash_each(keys + i, lengths + i, Group, out + i);  // a group of mixed lengths
      i += done == 0 ? Group : done;
    }
  }
  // One key at a time, out of the vector path's loop: inlined into it, the
  // plain loop lost XXH3's inlining and cost long keys up to 2x (the result
  // went through the stack and its reload missed store forwarding).
  [[gnu::noinline, gnu::flatten]] void hash_each(const void* const* keys, const size_t* lengths, size_t n,
                                                 KeyHash* out) const noexcept {
    for (size_t i = 0; i < n; ++i) out[i] = (*this)(keys[i], lengths[i]);
  }
#endif

  // (secret[16..24) ^ secret[24..32)) + the seed with its low word's bytes
  // swapped into the high word: what XXH3's 4-8 byte routine XORs into the
  // key, a function of the seed alone (little-endian reads of the default
  // secret, as XXH3 makes them on every host).
  static constexpr uint64_t short_key_flip(uint64_t seed) noexcept {
    const uint32_t s = static_cast<uint32_t>(seed);
    const uint32_t swapped = (s >> 24) | ((s >> 8) & 0xFF00u) | ((s << 8) & 0xFF0000u) | (s << 24);
    return (secret64(16) ^ secret64(24)) + (seed ^ (uint64_t{swapped} << 32));
  }
  // The default secret's bytes [at, at + 8) read little-endian, as XXH3
  // reads them on every host.
  static constexpr uint64_t secret64(size_t at) noexcept {
    uint64_t v = 0;
    for (size_t i = 0; i < 8; ++i) v |= uint64_t{XXH3_kSecret[at + i]} << (8 * i);
    return v;
  }

  uint64_t seed_;
  // What XXH3's short routines XOR in, from the seed alone: len4to8 is
  // short_key_flip(seed_), len9to16_low and _high XXH3_len_9to16_128b's
  // bitflipl and bitfliph.
  short_keys::Flips flips_;
  Isa isa_;            // the body hash_bulk runs
};
// The vector bodies store {h1, h2} pairs as consecutive words.
static_assert(sizeof(KeyHash) == 16 && alignof(KeyHash) == 8);

// (h * n) >> 64: maps a uniform 64-bit h onto [0, n) without division.
constexpr uint64_t reduce(uint64_t h, uint64_t n) noexcept {
  __extension__ using u128 = unsigned __int128;
  return static_cast<uint64_t>((static_cast<u128>(h) * n) >> 64);
}

// i-th probe by double hashing: h1 + i*h2 (mod 2^64).
constexpr uint64_t double_hash(KeyHash h, uint64_t i) noexcept { return h.h1 + i * h.h2; }

// Enhanced double hashing adds (i^3 - i)/6 so that probes stay distinct even
// when h2 is (nearly) a multiple of the range (Dillinger & Manolios 2004).
constexpr uint64_t enhanced_double_hash(KeyHash h, uint64_t i) noexcept {
  return h.h1 + i * h.h2 + (i * i * i - i) / 6;
}

// splitmix64's finalizer (Steele, Lea, Flood 2014): a bijective 64-bit mixer.
// Used to draw bits independent of the ones a position was reduced from.
constexpr uint64_t mix64(uint64_t z) noexcept {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// In-block bit i: the top log2(B) bits of h2 · salt_i. Each salt is a fixed
// odd constant, so every product is a bijection of h2 and the bits of
// different i behave as independent draws (an arithmetic progression a + i·b
// correlates keys that share b, which measurably raised the blocked FPR).
struct BlockSalts {
  uint64_t salt[32];  // salt_i for in-block bit i
  // Fills the table at compile time from a fixed seed (splitmix64, odd).
  constexpr BlockSalts() : salt() {
    uint64_t x = 0x6167'6562'6c6f'6f6dULL;  // "agebloom": any fixed seed
    for (auto& s : salt) s = mix64(x += 0x9e3779b97f4a7c15ULL) | 1u;
  }
};
// The salts every blocked filter uses (a compile-time constant).
inline constexpr BlockSalts kBlockSalts{};


// A bijection of 64 bits that does not preserve sums: one xor-shift, then a
// multiply by an odd constant (2^64 / the golden ratio) whose top bits
// reduce() then reads.
constexpr uint64_t scatter(uint64_t v) noexcept { return (v ^ (v >> 32)) * 0x9e3779b97f4a7c15ULL; }

// Position of probe i in a range of n: the i-th enhanced double hash,
// scattered, then reduce(). Unscattered, the k values h1 + i*h2 + c_i of two
// keys differ by an arithmetic progression in i, so a key whose (h1, h2) lies
// close to a stored key's lands on that key's bits in every probe at once: a
// floor of ~0.01-0.025 * N / m^2 false positives for N keys in ranges of m
// bits, up to 40x the fill's prediction in small ranges. A multiply alone
// would only map the progression to another; the xor-shift breaks it, and the
// positions then measure as independent draws (docs/ALGORITHMS.md, "Why the
// scatter", has the measurements and the cost).
constexpr uint64_t probe(KeyHash h, uint64_t i, uint64_t n) noexcept {
  return reduce(scatter(enhanced_double_hash(h, i)), n);
}

}  // namespace agebloom
