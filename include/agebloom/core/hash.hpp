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
  constexpr explicit Hasher(uint64_t seed = 0) noexcept : seed_(seed) {}
  constexpr uint64_t seed() const noexcept { return seed_; }  // the seed it was made with

  // XXH3-128 of key[0, length) under the seed.
  KeyHash operator()(const void* key, size_t length) const noexcept {
    const XXH128_hash_t r = XXH3_128bits_withSeed(key, length, seed_);
    return KeyHash{r.low64, r.high64};
  }

  // The same hash of a key whose length is known at compile time (an IPv4
  // address key, a 5-tuple): XXH3's length dispatch folds away, leaving only
  // its 4-8 or 9-16 byte routine. Equal to (*this)(key, N) bit for bit.
  template <size_t N>
  KeyHash fixed(const void* key) const noexcept {
    const XXH128_hash_t r = XXH3_128bits_withSeed(key, N, seed_);
    return KeyHash{r.low64, r.high64};
  }

  // The first stage of every bulk path: hash the whole burst, so the filter's
  // prefetch can run ahead on positions before any probe.
  void hash_bulk(const void* const* keys, const size_t* lengths, size_t n, KeyHash* out) const noexcept {
    for (size_t i = 0; i < n; ++i) out[i] = (*this)(keys[i], lengths[i]);
  }

 private:
  uint64_t seed_;
};

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


// Position of probe i in a range of n: the two helpers above then reduce().
constexpr uint64_t probe(KeyHash h, uint64_t i, uint64_t n) noexcept {
  return reduce(enhanced_double_hash(h, i), n);
}

}  // namespace agebloom
