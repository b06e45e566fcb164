// One round of AES (FIPS-197, §5.1), written out in portable C++: what the
// x86 instruction AESENC computes, for CPUs and builds without it. The short
// key hash (short_key_hash.hpp) is four such rounds; its AES-NI and VAES
// bodies use the instruction and must give the same bits as this one
// (tests/core/hash_test.cpp holds this round to FIPS-197's own examples and
// to the instruction).
//
// The 16 bytes are AES's state in its own order (byte i is row i % 4 of
// column i / 4), which is also the byte order of an xmm register loaded from
// them: byte i of a Block is bits [8i, 8i + 8) of lo (i < 8) or hi.
//
// Freestanding: no tables outside this header, the S-box and the round's
// table built at compile time from their definitions (the inverse in
// GF(2^8), the affine map, the MixColumns matrix). The table form costs ~60-80
// instructions a round (16 byte extractions, lookups and XORs); the CPU's instruction, one.
#pragma once

#include <cstddef>
#include <cstdint>

namespace agebloom::aes {

// 128 bits as two little-endian words: bytes [0, 8) in lo, [8, 16) in hi.
struct Block {
  uint64_t lo = 0, hi = 0;  // bytes [0, 8) and [8, 16), little-endian
  constexpr bool operator==(const Block&) const = default;  // word by word
};

// Word by word XOR (AddRoundKey, whitening, differences).
constexpr Block operator^(Block a, Block b) noexcept { return {a.lo ^ b.lo, a.hi ^ b.hi}; }

namespace detail {

// x * 2 in GF(2^8) modulo x^8 + x^4 + x^3 + x + 1 (FIPS-197 §4.2.1, xtime).
constexpr uint8_t xtime(uint8_t b) noexcept {
  return static_cast<uint8_t>((b << 1) ^ ((b & 0x80) ? 0x1b : 0));
}
constexpr uint8_t gf_mul(uint8_t a, uint8_t b) noexcept {
  uint8_t r = 0;
  for (; b; b >>= 1, a = xtime(a))
    if (b & 1) r ^= a;
  return r;
}
// The S-box (FIPS-197 §5.1.1): the multiplicative inverse (0 for 0), then
// the affine map b ^ rotl(b, 1..4) ^ 0x63; and the round's table: for a byte
// x entering row 0 of a column, that column's four bytes after SubBytes and
// MixColumns, {02 S(x), S(x), S(x), 03 S(x)} as one little-endian word. A
// byte entering row r contributes the same word rotated left by 8r bits (the
// circulant matrix's rows are rotations of its first).
struct Tables {
  uint8_t sbox[256] = {};
  uint32_t column[256] = {};
  constexpr Tables() noexcept {
    for (unsigned x = 0; x < 256; ++x) {
      uint8_t inv = 0;  // x^254 = x^-1
      if (x) {
        uint8_t p = static_cast<uint8_t>(x);
        inv = 1;
        for (unsigned e = 254; e; e >>= 1, p = gf_mul(p, p))
          if (e & 1) inv = gf_mul(inv, p);
      }
      unsigned s = inv;
      for (unsigned r = 1; r <= 4; ++r) s ^= static_cast<uint8_t>((inv << r) | (inv >> (8 - r)));
      const uint8_t v = static_cast<uint8_t>(s ^ 0x63);
      sbox[x] = v;
      const uint8_t two = xtime(v), three = static_cast<uint8_t>(two ^ v);
      column[x] = two | (uint32_t{v} << 8) | (uint32_t{v} << 16) | (uint32_t{three} << 24);
    }
  }
};
inline constexpr Tables kTables{};

constexpr uint32_t rotl32(uint32_t v, unsigned r) noexcept { return r ? (v << r) | (v >> (32 - r)) : v; }

}  // namespace detail

// The S-box's value of one byte (FIPS-197 Figure 7).
constexpr uint8_t sub_byte(uint8_t b) noexcept { return detail::kTables.sbox[b]; }

// One full round, as AESENC: ShiftRows, SubBytes, MixColumns, AddRoundKey.
// Column c of the result takes row r's byte from column c + r (ShiftRows,
// FIPS-197 §5.1.2), each through the table (SubBytes and MixColumns,
// §5.1.1 and §5.1.3), then the key's column.
constexpr Block round(Block s, Block key) noexcept {
  const uint32_t col[4] = {static_cast<uint32_t>(s.lo), static_cast<uint32_t>(s.lo >> 32), static_cast<uint32_t>(s.hi),
                           static_cast<uint32_t>(s.hi >> 32)};
  uint32_t out[4] = {};
  for (unsigned c = 0; c < 4; ++c)
    for (unsigned r = 0; r < 4; ++r)
      out[c] ^= detail::rotl32(detail::kTables.column[(col[(c + r) % 4] >> (8 * r)) & 0xff], 8 * r);
  return Block{out[0] | (uint64_t{out[1]} << 32), out[2] | (uint64_t{out[3]} << 32)} ^ key;
}

}  // namespace agebloom::aes
