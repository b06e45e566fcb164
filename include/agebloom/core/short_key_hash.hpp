// The hash of keys of at most 16 bytes: four AES rounds under keys drawn from
// the seed. Every key dedup_fwd's fast path makes is this short (an IPv4
// source with its tag, 5 bytes; an IPv4 5-tuple, 14), and XXH3-128, which
// hashes longer keys (hash.hpp), cost them 5-12 cycles a key on CPUs without
// AVX-512, where AVX2 has no 64-bit multiply and builds XXH3's from four
// 32-bit ones (docs/PERFORMANCE.md, "Short keys hashed by AES rounds").
//
// The function, for a key of len <= 16 bytes under seed s:
//   B  = the key's bytes, zero-padded to 16, as two little-endian words
//   S  = R(R(R(R(B ^ K0, K1 ^ L(len)), K2), K3), K4),  R = one AES round (AESENC)
//   L(len) = {len * kLenLow, len * kLenHigh}
//   h1 = S's low word, h2 = its high word
// with K0..K4 five 128-bit keys from splitmix64 over s (keys_for()). L(len)
// keeps keys apart that differ only in trailing zero bytes ("a" and "a\0").
// It enters with the first round's key, not with K0: XORed into the input,
// a key of len < 16 and the 16-byte key pad(key) ^ L(len) ^ L(16) would
// meet the same rounds and collide under every seed. Now two keys of lengths
// a != b meet only if round 1's S-box layer, on B ^ K0 with K0 secret, turns
// their difference into L(a) ^ L(b) after MixColumns. For every pair of
// lengths 0-16 the S-box difference that needs is nonzero in 15 or 16 bytes
// (byte 15 among them whenever both are shorter than 16): two keys both
// shorter than 16 bytes, zero in byte 15, cannot meet; a short key and a
// 16-byte one need 15-16 S-boxes each to pass one given difference, at most
// (4/256)^15 = 2^-90 a pair over K0, and no pair can be tried without the
// seed.
//
// Why four rounds: one AES round spreads a byte over its column only; after
// two, every output byte depends on every input byte; and any differential
// trail over four rounds has at least 25 active S-boxes (Daemen & Rijmen,
// The Design of Rijndael, §9.3, the four-round propagation theorem), each
// passing a given difference with probability at most 2^-6, so no two keys'
// hashes are related by a difference more likely than 2^-150 along any one
// trail (keys of one length: for those the rounds are a permutation of B,
// so they never collide; across lengths, the bound above). The filters need
// h1 and h2 to be independent uniform draws per key; tests/core/hash_test.cpp
// measures that (the strict avalanche criterion, where one round fails and
// four pass; uniformity of reductions; independence of the halves and of
// probes), as docs/ALGORITHMS.md records.
//
// Three bodies, the same bits (held equal by the tests): the portable one
// (aes_round.hpp), AES-NI (one key an instruction; every x86-64 server CPU
// since 2010), and VAES with AVX2 (two keys an instruction: Zen 3 and later,
// Intel since Ice Lake). The Hasher picks the widest the CPU runs.
//
// Not a header of its own: hash.hpp includes it before class Hasher.
#pragma once

#include <cstddef>
#include <cstdint>

#include "agebloom/core/aes_round.hpp"
#include "agebloom/core/isa.hpp"

namespace agebloom::short_key_hash {

using aes::Block;  // a key's B, a round key, a hash: 16 bytes as two words

inline constexpr size_t kMaxBytes = 16;  // longer keys are XXH3-128's (hash.hpp)
inline constexpr unsigned kRounds = 4;   // AES rounds after the whitening (above: why four)

// L(len)'s multipliers: odd, so that L is injective over lengths 0..16 in
// each word.
inline constexpr uint64_t kLenLow = 0x9E3779B97F4A7C15ULL;   // 2^64 / the golden ratio
inline constexpr uint64_t kLenHigh = 0xC2B2AE3D27D4EB4FULL;  // XXH_PRIME64_2

// K0 (the whitening key, XORed in before the first round) and the four
// round keys K1..K4.
struct Keys {
  Block k[kRounds + 1];  // k[0] whitens, k[r] ends round r
};

// The five keys of a seed: ten words of splitmix64 (Steele, Lea & Flood,
// "Fast splittable pseudorandom number generators", OOPSLA 2014) from the
// seed XORed with the ASCII of "agebhash". A function of the seed alone, so
// every process and machine given the same seed hashes alike (snapshots,
// agebloom-replay against dedup_fwd, the cluster's workers).
constexpr Keys keys_for(uint64_t seed) noexcept {
  uint64_t state = seed ^ 0x6167656268617368ULL;
  auto next = [&state] {
    uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  };
  Keys keys;
  for (Block& k : keys.k) {
    k.lo = next();
    k.hi = next();
  }
  return keys;
}

// L(len), XORed into round 1's key (K1).
constexpr Block length_mix(size_t len) noexcept { return {len * kLenLow, len * kLenHigh}; }

// B of a key of len <= 16 bytes at p, reading only its bytes (a key may end
// at the last byte of a mapped page; the sanitizers see every read): two
// overlapping 8- or 4-byte reads, the second shifted into place where it
// overlaps the first, as XXH3 reads its short keys.
inline Block load(const void* key, size_t len) noexcept {
  const auto* p = static_cast<const uint8_t*>(key);
  Block b;
  if (len >= 8) {
    __builtin_memcpy(&b.lo, p, 8);
    if (len > 8) {
      __builtin_memcpy(&b.hi, p + len - 8, 8);  // bytes [len - 8, len)
      b.hi >>= 8 * (16 - len);                  // bytes [8, len) from position 0
    }
  } else if (len >= 4) {
    uint32_t first, last;
    __builtin_memcpy(&first, p, 4);
    __builtin_memcpy(&last, p + len - 4, 4);  // bytes [len - 4, len): agrees where they overlap
    b.lo = first | (uint64_t{last} << (8 * (len - 4)));
  } else if (len > 0) {
    b.lo = p[0] | (uint64_t{p[len >> 1]} << (8 * (len >> 1))) | (uint64_t{p[len - 1]} << (8 * (len - 1)));
  }
  return b;
}

// The bytes of a word pair that a key of N bytes keeps: all of lo from 8 on,
// the first N - 8 of hi.
template <size_t N>
inline constexpr Block kKeptBytes = {N >= 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * N)) - 1,
                                     N <= 8 ? 0 : N >= 16 ? ~uint64_t{0} : (uint64_t{1} << (8 * (N - 8))) - 1};

// The lengths of a run of keys given by pointers (Hasher::hash_bulk): each
// its own, or one known at compile time (a run of equal lengths, the usual
// burst: the reads and L(len) then fold to constants).
struct EachLength {
  const size_t* len;  // key i's length is len[i]
  constexpr size_t operator[](size_t i) const noexcept { return len[i]; }  // key i's length
  constexpr EachLength from(size_t i) const noexcept { return {len + i}; }  // the lengths of keys i, i + 1, ...
};
// Every key N bytes long.
template <size_t N>
struct FixedLength {
  static constexpr size_t kLength = N;  // the run's one length
  constexpr size_t operator[](size_t) const noexcept { return N; }  // key i's length: N
  constexpr FixedLength from(size_t) const noexcept { return {}; }  // the lengths of keys i, i + 1, ...: N
};

// The rounds after the whitening, in portable C++: round 1 under K1 ^ l
// (l = L(len)), then K2, K3, K4. Rounds is a parameter only so that a test
// can show what one round lacks; the hash is kRounds.
template <unsigned Rounds = kRounds>
constexpr Block portable_rounds(Block x, Block l, const Keys& keys) noexcept {
  static_assert(Rounds >= 1 && Rounds <= kRounds, "a round key each");
  for (unsigned r = 1; r <= Rounds; ++r) x = aes::round(x, r == 1 ? keys.k[1] ^ l : keys.k[r]);
  return x;
}

// The hash of one key whose B is given, portable.
constexpr Block portable(Block b, size_t len, const Keys& keys) noexcept {
  return portable_rounds(b ^ keys.k[0], length_mix(len), keys);
}

// The bodies a Hasher may run, narrowest first.
enum class Body : unsigned char { portable, aes, vaes };

// Its name, as benchmarks and tests label their runs.
constexpr const char* body_name(Body b) noexcept {
  return b == Body::vaes ? "vaes" : b == Body::aes ? "aes" : "portable";
}

#if AGEBLOOM_INTRINSICS_DISPATCH

// AES-NI: one key at a time, a round an instruction. The keys are loaded
// into registers once per call; a key's B goes from general registers into
// its vector (movq, pinsrq), not through memory, where two 8-byte stores read
// back as one 16-byte load would wait for the stores to drain (no store
// forwarding across two stores).
AGEBLOOM_TARGET_AES inline __m128i to_vector(const Block& b) noexcept {
  return _mm_set_epi64x(static_cast<long long>(b.hi), static_cast<long long>(b.lo));
}
// k[0] = K0, k[1] = K1 ^ l (l = L(len) of a run of one length, folded in
// once; zero where each key brings its own), k[2..4] the other round keys.
AGEBLOOM_TARGET_AES inline void load_keys(const Keys& keys, Block l, __m128i* k) noexcept {
  for (unsigned r = 0; r <= kRounds; ++r) k[r] = to_vector(r == 1 ? keys.k[1] ^ l : keys.k[r]);
}
// The four rounds of a whitened block under round 1's key k1 (k[1], which
// holds a run's L already, or k[1] ^ L(len) for a key that brings its own).
AGEBLOOM_TARGET_AES inline __m128i aes_rounds(__m128i x, const __m128i* k, __m128i k1) noexcept {
  x = _mm_aesenc_si128(x, k1);
  for (unsigned r = 2; r <= kRounds; ++r) x = _mm_aesenc_si128(x, k[r]);
  return x;
}
// The same for a block of a run of one length (round 1's key as loaded).
AGEBLOOM_TARGET_AES inline __m128i aes_rounds(__m128i x, const __m128i* k) noexcept { return aes_rounds(x, k, k[1]); }
// {h1, h2} to out[0], out[1].
AGEBLOOM_TARGET_AES inline void store_hash(__m128i h, uint64_t* out) noexcept {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), h);
}

// True for a run of one length known at compile time.
template <class Len>
inline constexpr bool kOneLength = requires { Len::kLength; };
// L(N) of a run of one length, folded into round 1's key once for the run
// (zero for runs of each its own length, whose L goes with each key).
template <class Len>
constexpr Block fixed_length_mix() noexcept {
  if constexpr (kOneLength<Len>) return length_mix(Len::kLength);
  else return Block{};
}

// A key's B as a vector from general registers: a key of at most 8 bytes of
// a run of one length in one movq (the high word zero), any other with
// pinsrq.
template <class Len>
AGEBLOOM_TARGET_AES inline __m128i key_vector_of(const void* key, size_t len) noexcept {
  const Block b = load(key, len);
  if constexpr (kOneLength<Len>)
    if constexpr (Len::kLength <= 8) return _mm_cvtsi64_si128(static_cast<long long>(b.lo));
  return to_vector(b);
}

// One key whose B is given.
AGEBLOOM_TARGET_AES inline Block aes_one(Block b, size_t len, const Keys& keys) noexcept {
  __m128i k[kRounds + 1];
  load_keys(keys, length_mix(len), k);
  Block out;
  store_hash(aes_rounds(_mm_xor_si128(to_vector(b), k[0]), k), &out.lo);
  return out;
}

// n keys of len[i] <= 16 bytes at key[i] (Hasher::hash_bulk's runs; Len is
// EachLength or FixedLength<N>), hashes as {h1, h2} pairs to out[0 .. 2n).
template <class Len>
AGEBLOOM_TARGET_AES inline void aes_pointers(const void* const* key, Len len, size_t n, const Keys& keys,
                                             uint64_t* out) noexcept {
  __m128i k[kRounds + 1];
  load_keys(keys, fixed_length_mix<Len>(), k);
  for (size_t i = 0; i < n; ++i) {
    const __m128i x = _mm_xor_si128(key_vector_of<Len>(key[i], len[i]), k[0]);
    if constexpr (kOneLength<Len>) store_hash(aes_rounds(x, k), out + 2 * i);
    else store_hash(aes_rounds(x, k, _mm_xor_si128(k[1], to_vector(length_mix(len[i])))), out + 2 * i);
  }
}

// n keys of N bytes held as words (Hasher::fixed_bulk): key i's bytes
// [0, 8) in first[i], [8, 16) in second[i] (unread for N <= 8), bytes past N
// ignored.
template <size_t N>
AGEBLOOM_TARGET_AES inline void aes_words(const uint64_t* first, const uint64_t* second, size_t n, const Keys& keys,
                                          uint64_t* out) noexcept {
  __m128i k[kRounds + 1];
  load_keys(keys, length_mix(N), k);
  const __m128i kept = to_vector(kKeptBytes<N>);
  for (size_t i = 0; i < n; ++i) {
    const __m128i lo = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(first + i));
    const __m128i b =
        N > 8 ? _mm_unpacklo_epi64(lo, _mm_loadl_epi64(reinterpret_cast<const __m128i*>(second + i))) : lo;
    store_hash(aes_rounds(_mm_xor_si128(_mm_and_si128(b, kept), k[0]), k), out + 2 * i);
  }
}

// VAES: two keys in one 256-bit register, a round an instruction for both.
// Each returns the keys it did (whole pairs); the caller does an odd last
// one with AES-NI.
// load_keys() in both halves of each register.
AGEBLOOM_TARGET_VAES inline void broadcast_keys(const Keys& keys, Block l, __m256i* k) noexcept {
  for (unsigned r = 0; r <= kRounds; ++r)
    k[r] = _mm256_broadcastsi128_si256(to_vector(r == 1 ? keys.k[1] ^ l : keys.k[r]));
}
// aes_rounds() for two blocks, one in each half of x and of k1.
AGEBLOOM_TARGET_VAES inline __m256i vaes_rounds(__m256i x, const __m256i* k, __m256i k1) noexcept {
  x = _mm256_aesenc_epi128(x, k1);
  for (unsigned r = 2; r <= kRounds; ++r) x = _mm256_aesenc_epi128(x, k[r]);
  return x;
}
// The same for two blocks of a run of one length.
AGEBLOOM_TARGET_VAES inline __m256i vaes_rounds(__m256i x, const __m256i* k) noexcept {
  return vaes_rounds(x, k, k[1]);
}
// Two 128-bit vectors as one register, lo in the low half.
AGEBLOOM_TARGET_VAES inline __m256i pair(__m128i lo, __m128i hi) noexcept {
  return _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
}

// aes_pointers() two keys at a time.
template <class Len>
AGEBLOOM_TARGET_VAES inline size_t vaes_pointers(const void* const* key, Len len, size_t n, const Keys& keys,
                                                 uint64_t* out) noexcept {
  __m256i k[kRounds + 1];
  broadcast_keys(keys, fixed_length_mix<Len>(), k);
  size_t i = 0;
  for (; i + 2 <= n; i += 2) {
    const __m256i x =
        _mm256_xor_si256(pair(key_vector_of<Len>(key[i], len[i]), key_vector_of<Len>(key[i + 1], len[i + 1])), k[0]);
    __m256i h;
    if constexpr (kOneLength<Len>) h = vaes_rounds(x, k);
    else
      h = vaes_rounds(x, k,
                      _mm256_xor_si256(k[1], pair(to_vector(length_mix(len[i])), to_vector(length_mix(len[i + 1])))));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 2 * i), h);
  }
  return i;
}

// aes_words() two keys at a time.
template <size_t N>
AGEBLOOM_TARGET_VAES inline size_t vaes_words(const uint64_t* first, const uint64_t* second, size_t n,
                                              const Keys& keys, uint64_t* out) noexcept {
  __m256i k[kRounds + 1];
  broadcast_keys(keys, length_mix(N), k);
  const __m256i kept = _mm256_broadcastsi128_si256(to_vector(kKeptBytes<N>));
  size_t i = 0;
  for (; i + 2 <= n; i += 2) {
    const __m128i f = _mm_loadu_si128(reinterpret_cast<const __m128i*>(first + i));  // first[i], first[i + 1]
    __m256i b;
    if constexpr (N > 8) {
      const __m128i s = _mm_loadu_si128(reinterpret_cast<const __m128i*>(second + i));
      // {first[i], first[i + 1], second[i], second[i + 1]} -> {first[i], second[i], first[i + 1], second[i + 1]}
      b = _mm256_permute4x64_epi64(_mm256_set_m128i(s, f), 0xD8);
    } else {
      b = _mm256_permute4x64_epi64(_mm256_castsi128_si256(f), 0x50);  // {first[i], -, first[i + 1], -}, masked below
    }
    const __m256i x = _mm256_xor_si256(_mm256_and_si256(b, kept), k[0]);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 2 * i), vaes_rounds(x, k));
  }
  return i;
}

#endif  // AGEBLOOM_INTRINSICS_DISPATCH

}  // namespace agebloom::short_key_hash
