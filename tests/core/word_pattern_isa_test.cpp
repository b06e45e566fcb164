// word_pattern<8>'s byte-shuffle path (compiled here with -mssse3, as every
// target that links Debian's DPDK is) gives the bits of the portable path that
// the rest of the core suite and the GPU use: filters built either way agree.
#include <gtest/gtest.h>

#include "agebloom/core/bits.hpp"
#include "agebloom/core/hash.hpp"

namespace ab = agebloom;

#if !defined(__SSSE3__)
#error "this test is meant to be built with -mssse3"
#endif

TEST(WordPatternIsa, ShuffleEqualsPortable) {
  if (!__builtin_cpu_supports("ssse3")) GTEST_SKIP() << "CPU without SSSE3";
  static_assert(ab::bits::word_pattern<8>(0x0706050403020100ULL) == 0x8040201008040201ULL);
  const ab::Hasher hash(3);
  for (uint64_t i = 0; i < 100000; ++i) {
    const uint64_t y = hash(&i, sizeof i).h1;
    ASSERT_EQ(ab::bits::word_pattern<8>(y), ab::bits::word_pattern_scalar<8>(y)) << std::hex << y;
  }
  // Every offset of every byte: the table covers 0..7 in each position.
  for (uint64_t byte = 0; byte < 8; ++byte)
    for (uint64_t v = 0; v < 256; ++v) {
      const uint64_t y = v << (8 * byte);
      ASSERT_EQ(ab::bits::word_pattern<8>(y), ab::bits::word_pattern_scalar<8>(y));
    }
}

// word128_pattern<8>'s shuffles (the 128-bit lanes of "interleaved-128")
// against its loop: every key, and every 4-bit offset in every byte.
TEST(WordPatternIsa, Word128ShuffleEqualsPortable) {
  // Part j (16 bits) takes the low 4 bits of byte j: offsets 0..7 land in its
  // low byte, 8..15 in its high byte (the loop, evaluated at compile time).
  static_assert(ab::bits::word128_pattern<8>(0x0706050403020100ULL) ==
                ab::bits::Word128{0x0008000400020001ULL, 0x0080004000200010ULL});
  static_assert(ab::bits::word128_pattern<8>(0x0F0E0D0C0B0A0908ULL) ==
                ab::bits::Word128{0x0800040002000100ULL, 0x8000400020001000ULL});
  if (!__builtin_cpu_supports("ssse3")) GTEST_SKIP() << "CPU without SSSE3";
  const ab::Hasher hash(5);
  for (uint64_t i = 0; i < 100000; ++i) {
    const uint64_t y = hash(&i, sizeof i).h2;
    ASSERT_EQ(ab::bits::word128_pattern<8>(y), ab::bits::word128_pattern_scalar<8>(y)) << std::hex << y;
  }
  for (uint64_t byte = 0; byte < 8; ++byte)
    for (uint64_t v = 0; v < 256; ++v) {
      const uint64_t y = v << (8 * byte);
      ASSERT_EQ(ab::bits::word128_pattern<8>(y), ab::bits::word128_pattern_scalar<8>(y)) << byte << " " << v;
    }
}
