// Hash once, probe many: every filter takes a KeyHash, never key bytes.
//
// A key is hashed once under a per-instance secret seed into two 64-bit
// halves that drive every probe of every segment (Kirsch & Mitzenmacher,
// "Less hashing, same performance", ESA 2006): keys of at most 16 bytes by
// four AES rounds under keys drawn from the seed (short_key_hash.hpp: every
// key of dedup_fwd's fast path, at about a third of XXH3's cost on CPUs
// without AVX-512: 1.7-2.5 against 5.2-8.4 cycles a key on Zen 3), longer
// keys by XXH3-128 under the seed. The seed is what stops an attacker from
// grinding keys that collide or saturate the filter, so callers should draw
// it at random per process (dedup_fwd does, unless --seed is set).
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
#include <utility>

#include "agebloom/core/isa.hpp"
#include "agebloom/core/short_key_hash.hpp"

namespace agebloom {

// A key hashed once: the two halves of its hash under the Hasher's seed.
struct KeyHash {
  uint64_t h1 = 0;  // low half: the block or line, and the first probe position
  uint64_t h2 = 0;  // high half: the probe step, and the in-block pattern
  constexpr bool operator==(const KeyHash&) const = default;  // field by field
};

// Hashes key bytes into KeyHash under a seed: one per filter (or per process),
// the same seed wherever the same keys must meet the same bits.
class Hasher {
 public:
  using Body = short_key_hash::Body;  // the short-key bodies, narrowest first
  static constexpr size_t kShortKeyBytes = short_key_hash::kMaxBytes;  // keys up to this long take the AES rounds

  // Seed 0 is fixed and known: draw the seed at random where keys come from
  // outside (above). Short keys are hashed by the widest body the CPU has
  // (asked once, here).
  // Not constexpr: a Hasher made at compile time could not ask the CPU, and
  // a constant-initialised one at namespace scope would keep the portable
  // body without a word.
  explicit Hasher(uint64_t seed = 0) noexcept
      : seed_(seed), keys_(short_key_hash::keys_for(seed)), body_(widest_body(Body::vaes)) {}
  constexpr uint64_t seed() const noexcept { return seed_; }  // the seed it was made with

  // The hash of key[0, length) under the seed.
  KeyHash operator()(const void* key, size_t length) const noexcept {
    if (length <= kShortKeyBytes) return one_short(short_key_hash::load(key, length), length);
    return long_key(key, length);
  }

  // The same hash of a key whose length is known at compile time (an IPv4
  // address key, a 5-tuple): the short key's reads are fixed, XXH3's length
  // dispatch folds away. Equal to (*this)(key, N) bit for bit.
  template <size_t N>
  KeyHash fixed(const void* key) const noexcept {
    if constexpr (N <= kShortKeyBytes) {
      return one_short(short_key_hash::load(key, N), N);
    } else {
      const XXH128_hash_t r = XXH3_128bits_withSeed(key, N, seed_);
      return KeyHash{r.low64, r.high64};
    }
  }

  // fixed<N> of n keys held as little-endian words: key i's bytes [0, 8) in
  // first[i] and, for N > 8, its bytes [8, 16) in second[i] (second may be
  // null for N <= 8; bytes past N are ignored). A packet parser's keys of
  // constant length, hashed after the whole burst is parsed: with VAES, two
  // keys an instruction straight from the arrays (dedup_fwd's stage 1).
  template <size_t N>
  void fixed_bulk(const uint64_t* first, const uint64_t* second, size_t n, KeyHash* out) const noexcept {
    static_assert(N >= 1 && N <= kShortKeyBytes, "keys of 1 to 16 bytes");
    size_t i = 0;
#if AGEBLOOM_INTRINSICS_DISPATCH
    if (body_ == Body::vaes) i = short_key_hash::vaes_words<N>(first, second, n, keys_, &out[0].h1);
    if (body_ != Body::portable) {
      short_key_hash::aes_words<N>(first + i, N > 8 ? second + i : second, n - i, keys_, &out[i].h1);
      return;
    }
#endif
    constexpr short_key_hash::Block kept = short_key_hash::kKeptBytes<N>;
    for (; i < n; ++i) {
      const short_key_hash::Block b = {first[i] & kept.lo, N > 8 ? second[i] & kept.hi : 0};
      out[i] = as_hash(short_key_hash::portable(b, N, keys_));
    }
  }

  // The first stage of every bulk path: hash the whole burst, so the filter's
  // prefetch can run ahead on positions before any probe. Runs of short keys
  // are hashed together (two an instruction with VAES), those of one length
  // with that length fixed at compile time; runs of long keys by XXH3-128.
  void hash_bulk(const void* const* keys, const size_t* lengths, size_t n, KeyHash* out) const noexcept {
    if (n == 0) return;
    // The usual burst: one key mode, one length. Checked in one pass the
    // compiler vectorises, where the run-by-run scan below costs ~2 cycles a
    // key (a third of a short key's whole hash).
    size_t differ = 0;
    for (size_t j = 1; j < n; ++j) differ |= lengths[j] ^ lengths[0];
    if (differ == 0) {
      if (lengths[0] <= kShortKeyBytes) return (this->*kFixedRuns.run[lengths[0]])(keys, n, out);
      return long_run(keys, lengths, n, out);
    }
    size_t i = 0;
    while (i < n) {
      const bool is_short = lengths[i] <= kShortKeyBytes;
      bool one_length = true;
      size_t m = 1;
      for (; i + m < n && (lengths[i + m] <= kShortKeyBytes) == is_short; ++m)
        one_length &= lengths[i + m] == lengths[i];
      if (!is_short) long_run(keys + i, lengths + i, m, out + i);
      else if (one_length) (this->*kFixedRuns.run[lengths[i]])(keys + i, m, out + i);
      else short_run(keys + i, short_key_hash::EachLength{lengths + i}, m, out + i);
      i += m;
    }
  }

  // The body that hashes short keys (the answer is the same bits whichever
  // it is).
  constexpr Body body() const noexcept { return body_; }
  // The widest body short keys may take: they take the widest of those the
  // CPU has (portable forces the C++ rounds; tests and benchmarks compare).
  void use_body(Body widest) noexcept { body_ = widest_body(widest); }
  // A line for the user where short keys take the portable body (a CPU
  // without AES-NI, or a build without intrinsics), whose rounds cost about
  // ten times AES-NI's (docs/PERFORMANCE.md); null where they take AES-NI or
  // VAES. The bits are the same either way.
  constexpr const char* slow_body_note() const noexcept {
    return body_ == Body::portable ? "keys of at most 16 bytes are hashed by the portable AES rounds (no AES-NI on "
                                     "this CPU, or a build without intrinsics): about 60-110 cycles a key where "
                                     "AES-NI takes 2-6, the same hashes"
                                   : nullptr;
  }

 private:
  // The widest body up to `widest` that the CPU runs.
  static Body widest_body(Body widest) noexcept {
#if AGEBLOOM_INTRINSICS_DISPATCH
    if (widest >= Body::vaes && cpu_has_vaes()) return Body::vaes;
    if (widest >= Body::aes && cpu_has_aes()) return Body::aes;
#endif
    (void)widest;
    return Body::portable;
  }

  static constexpr KeyHash as_hash(short_key_hash::Block b) noexcept { return {b.lo, b.hi}; }

  KeyHash one_short(short_key_hash::Block b, size_t len) const noexcept {
#if AGEBLOOM_INTRINSICS_DISPATCH
    if (body_ != Body::portable) return as_hash(short_key_hash::aes_one(b, len, keys_));
#endif
    return as_hash(short_key_hash::portable(b, len, keys_));
  }

  // n keys of at most 16 bytes, their lengths given by Len (EachLength or
  // FixedLength<N>).
  template <class Len>
  void short_run(const void* const* keys, Len len, size_t n, KeyHash* out) const noexcept {
    size_t i = 0;
#if AGEBLOOM_INTRINSICS_DISPATCH
    if (body_ == Body::vaes) i = short_key_hash::vaes_pointers(keys, len, n, keys_, &out[0].h1);
    if (body_ != Body::portable) {
      short_key_hash::aes_pointers(keys + i, len.from(i), n - i, keys_, &out[i].h1);
      return;
    }
#endif
    for (; i < n; ++i) out[i] = as_hash(short_key_hash::portable(short_key_hash::load(keys[i], len[i]), len[i], keys_));
  }
  template <size_t N>
  void fixed_run(const void* const* keys, size_t n, KeyHash* out) const noexcept {
    short_run(keys, short_key_hash::FixedLength<N>{}, n, out);
  }
  // fixed_run<N> for each N from 0 to 16, by length.
  using FixedRun = void (Hasher::*)(const void* const*, size_t, KeyHash*) const noexcept;
  struct FixedRuns {
    FixedRun run[kShortKeyBytes + 1];
  };
  static constexpr FixedRuns kFixedRuns = []<size_t... N>(std::index_sequence<N...>) {
    return FixedRuns{{&Hasher::fixed_run<N>...}};
  }(std::make_index_sequence<kShortKeyBytes + 1>{});

  // XXH3-128 of a key longer than 16 bytes, and of a run of them, out of the
  // bulk loop: inlined into it, the loop lost XXH3's inlining and cost long
  // keys up to 2x (the result went through the stack and its reload missed
  // store forwarding).
  [[gnu::noinline]] KeyHash long_key(const void* key, size_t length) const noexcept {
    const XXH128_hash_t r = XXH3_128bits_withSeed(key, length, seed_);
    return KeyHash{r.low64, r.high64};
  }
  [[gnu::noinline, gnu::flatten]] void long_run(const void* const* keys, const size_t* lengths, size_t n,
                                                KeyHash* out) const noexcept {
    for (size_t i = 0; i < n; ++i) {
      const XXH128_hash_t r = XXH3_128bits_withSeed(keys[i], lengths[i], seed_);
      out[i] = KeyHash{r.low64, r.high64};
    }
  }

  uint64_t seed_;
  short_key_hash::Keys keys_;  // K0..K4 of the short key hash, from the seed alone
  Body body_;                  // the body short keys take
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
