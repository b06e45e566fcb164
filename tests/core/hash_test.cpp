#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "agebloom/agebloom.hpp"

namespace ab = agebloom;

// Reference values printed by the xxHash project's own CLI, `xxhsum -H2`
// (canonical form: high 64 bits first), for seed 0.
struct Vector {
  std::string input;
  uint64_t high, low;
};

TEST(Hash, Xxh3_128ReferenceVectors) {
  const std::vector<Vector> vectors = {
      {"", 0x99aa06d3014798d8ULL, 0x6001c324468d497fULL},
      {"abc", 0x06b05ab6733a6185ULL, 0x78af5f94892f3950ULL},
      {"agebloom", 0x89a49aadfb64d9faULL, 0xb9b2e95f96cfb41cULL},
      {std::string(1000, 'a'), 0xb01da365eddaa29cULL, 0xb3e7af627147db7cULL},
  };
  std::string printable;
  for (int i = 0; i < 200; ++i) printable += static_cast<char>(32 + i % 90);
  const ab::Hasher hash(0);
  for (const auto& v : vectors) {
    const ab::KeyHash h = hash(v.input.data(), v.input.size());
    EXPECT_EQ(h.h1, v.low) << "input of length " << v.input.size();
    EXPECT_EQ(h.h2, v.high) << "input of length " << v.input.size();
  }
  const ab::KeyHash p = hash(printable.data(), printable.size());
  EXPECT_EQ(p.h2, 0x5665be66ef6f2cd1ULL);
  EXPECT_EQ(p.h1, 0x9ca8c9a76a6792dfULL);
}

TEST(Hash, SeedChangesHashesAndPositions) {
  const ab::Hasher a(1), b(2);
  int same_positions = 0;
  for (uint64_t key = 0; key < 1000; ++key) {
    const ab::KeyHash ha = a(&key, sizeof key), hb = b(&key, sizeof key);
    EXPECT_NE(ha, hb);
    if (ab::probe(ha, 0, 1 << 20) == ab::probe(hb, 0, 1 << 20)) ++same_positions;
    EXPECT_EQ(ha, a(&key, sizeof key));  // deterministic per seed
  }
  EXPECT_LE(same_positions, 2);  // ~1000 / 2^20 expected by chance
}

TEST(Hash, ReduceStaysInRangeAtExtremes) {
  for (uint64_t n : {1ULL, 2ULL, 3ULL, 1000ULL, (1ULL << 40) + 7, ~0ULL}) {
    EXPECT_EQ(ab::reduce(0, n), 0u);
    EXPECT_LT(ab::reduce(~0ULL, n), n);
  }
  EXPECT_EQ(ab::reduce(1ULL << 63, 10), 5u);
}

// Chi-square goodness of fit of reduce() over a range that is not a power of
// two (where a biased reduction would show): 1,000,003 hashes into 1000 bins.
// With 999 degrees of freedom the statistic has mean 999 and sd ~44.7; the
// bound (mean + 6 sd) fails for a reduction with even a 1% per-bin bias.
TEST(Hash, ReduceIsUniform) {
  const ab::Hasher hash(7);
  const uint64_t bins = 1000, n = 1'000'003;
  std::vector<uint64_t> count(bins);
  for (uint64_t i = 0; i < n; ++i) ++count[ab::reduce(hash(&i, sizeof i).h1, bins)];
  const double expected = static_cast<double>(n) / bins;
  double chi2 = 0;
  for (uint64_t c : count) chi2 += (c - expected) * (c - expected) / expected;
  EXPECT_LT(chi2, 999 + 6 * 44.7);
  EXPECT_GT(chi2, 999 - 6 * 44.7);  // too perfect would mean the test is not sampling
}

// The same check catches a real defect: `h % bins` over a non-uniform input
// (low 10 bits only) is detected as non-uniform by the statistic above.
TEST(Hash, UniformityTestDetectsBias) {
  const uint64_t bins = 1000, n = 1'000'003;
  std::vector<uint64_t> count(bins);
  for (uint64_t i = 0; i < n; ++i) ++count[(i * 2654435761ULL % 1024) % bins];
  const double expected = static_cast<double>(n) / bins;
  double chi2 = 0;
  for (uint64_t c : count) chi2 += (c - expected) * (c - expected) / expected;
  EXPECT_GT(chi2, 999 + 6 * 44.7);
}

TEST(Hash, EnhancedDoubleHashingGivesDistinctProbes) {
  // h2 == 0 would make plain double hashing probe one position k times; the
  // cubic term of enhanced double hashing keeps the probes apart.
  const ab::KeyHash degenerate{12345, 0};
  std::set<uint64_t> plain, enhanced;
  for (uint64_t i = 0; i < 8; ++i) {
    plain.insert(ab::double_hash(degenerate, i));
    enhanced.insert(ab::enhanced_double_hash(degenerate, i));
  }
  EXPECT_EQ(plain.size(), 1u);
  EXPECT_EQ(enhanced.size(), 7u);  // i = 0 and i = 1 coincide: (i^3 - i)/6 = 0 for both
  EXPECT_EQ(ab::double_hash({10, 3}, 4), 22u);
  EXPECT_EQ(ab::enhanced_double_hash({10, 3}, 4), 22u + 10u);
}

// Two keys' probes are independent draws, so a filter's false positives are
// what its fill predicts (the product over its ranges of the fraction of bits
// set) even where ranges are small: k = 16 ranges of m = 256 bits, half full.
// Unscattered double hashing measured 5.7x the prediction here: keys whose (h1,
// h2) lie close to a stored key's hit that key's bits in every range at once.
TEST(Hash, ProbesOfDifferentKeysAreIndependentDraws) {
  const ab::Hasher hash(31);
  constexpr uint32_t k = 16;
  constexpr uint64_t m = 256, stored = 177;  // m ln 2: half full
  constexpr uint64_t filters = 10, probes = 200'000;
  double predicted = 0;
  uint64_t found = 0, id = 0;
  for (uint64_t f = 0; f < filters; ++f) {
    std::vector<std::vector<bool>> range(k, std::vector<bool>(m));
    for (uint64_t j = 0; j < stored; ++j, ++id) {
      const ab::KeyHash h = hash(&id, sizeof id);
      for (uint32_t i = 0; i < k; ++i) range[i][ab::probe(h, i, m)] = true;
    }
    double fill = 1;
    for (const auto& r : range) fill *= static_cast<double>(std::count(r.begin(), r.end(), true)) / m;
    predicted += fill * probes;
    for (uint64_t j = 0; j < probes; ++j, ++id) {
      const ab::KeyHash h = hash(&id, sizeof id);
      bool all = true;
      for (uint32_t i = 0; i < k && all; ++i) all = range[i][ab::probe(h, i, m)];
      found += all;
    }
  }
  // ~30 predicted: the bounds are ~3 standard deviations of a Poisson count.
  ASSERT_GT(predicted, 20);
  EXPECT_LT(static_cast<double>(found), predicted + 3 * std::sqrt(predicted) + 3) << "predicted " << predicted;
  EXPECT_GT(static_cast<double>(found), predicted - 3 * std::sqrt(predicted) - 3) << "predicted " << predicted;
}

// Block index (h1) and in-block bits (h2) come from independent halves: over
// many keys, the block chosen tells nothing about the first in-block bit.
TEST(Hash, HalvesAreIndependent) {
  const ab::Hasher hash(99);
  const uint64_t n = 200'000;
  uint64_t joint[4][4] = {};
  for (uint64_t i = 0; i < n; ++i) {
    const ab::KeyHash h = hash(&i, sizeof i);
    ++joint[ab::reduce(h.h1, 4)][h.h2 >> 62];
  }
  double chi2 = 0;
  const double expected = n / 16.0;
  for (auto& row : joint)
    for (uint64_t c : row) chi2 += (c - expected) * (c - expected) / expected;
  EXPECT_LT(chi2, 40.0);  // 15 dof: p < 1e-3 beyond ~37.7
}

TEST(Hash, BulkHashingEqualsOneByOne) {
  const ab::Hasher hash(123);
  std::vector<std::string> keys = {"", "a", "10.0.0.1", std::string(300, 'x'), "GET /ad?id=7"};
  std::vector<const void*> ptrs;
  std::vector<size_t> lens;
  for (auto& k : keys) {
    ptrs.push_back(k.data());
    lens.push_back(k.size());
  }
  std::vector<ab::KeyHash> out(keys.size());
  hash.hash_bulk(ptrs.data(), lens.data(), keys.size(), out.data());
  for (size_t i = 0; i < keys.size(); ++i) EXPECT_EQ(out[i], hash(keys[i].data(), keys[i].size()));
}

// The one-word pattern: one bit in each of the b parts, at the offset held
// in y's bits at that part's own position (a reference written bit by bit).
TEST(Bits, WordPatternSetsOneBitPerPartFromItsOwnField) {
  const ab::Hasher hash(77);
  for (uint32_t b : {1u, 2u, 4u, 8u, 16u, 32u})
    for (uint64_t i = 0; i < 2000; ++i) {
      const uint64_t y = hash(&i, sizeof i).h2;
      const uint32_t span = 64 / b;
      uint64_t want = 0;
      for (uint32_t part = 0; part < b; ++part) {
        uint32_t offset = 0;
        for (uint32_t bit = 0; (1u << bit) < span; ++bit) offset |= ((y >> (part * span + bit)) & 1u) << bit;
        want |= uint64_t{1} << (part * span + offset);
      }
      ASSERT_EQ(ab::bits::word_pattern(y, b), want) << "b=" << b;
      ASSERT_EQ(ab::bits::word_pattern_scalar<8>(y), ab::bits::word_pattern<8>(y));
      ASSERT_EQ(static_cast<uint32_t>(__builtin_popcountll(want)), b);
    }
}

// The compile-time-length form is the same function: the fast paths of
// dedup_fwd hash IPv4 keys (5 and 14 bytes) with it.
// Lengths 4 to 8 are XXH3's routine written out with the seed's constant
// hoisted into the Hasher: held to libxxhash's own XXH3-128 for every such
// length, under seeds whose low word's byte swap matters (and 0, and all
// ones).
TEST(Hasher, FixedLengthEqualsRuntimeLength) {
  for (const uint64_t seed : {uint64_t{0x5eed}, uint64_t{0}, ~uint64_t{0}, uint64_t{0x0123456789abcdefULL},
                              uint64_t{0x6167656200000002ULL}, uint64_t{0x80000001ULL}}) {
    const ab::Hasher hash(seed);
    uint8_t key[16];
    for (uint64_t i = 0; i < 1000; ++i) {
      const ab::KeyHash x = hash(&i, sizeof i);
      __builtin_memcpy(key, &x, sizeof key);
      auto xxh = [&](size_t n) {
        const XXH128_hash_t r = XXH3_128bits_withSeed(key, n, seed);
        return ab::KeyHash{r.low64, r.high64};
      };
      ASSERT_EQ(hash.fixed<4>(key), xxh(4)) << seed;
      ASSERT_EQ(hash.fixed<5>(key), xxh(5)) << seed;
      ASSERT_EQ(hash.fixed<6>(key), xxh(6)) << seed;
      ASSERT_EQ(hash.fixed<7>(key), xxh(7)) << seed;
      ASSERT_EQ(hash.fixed<8>(key), xxh(8)) << seed;
      ASSERT_EQ(hash.fixed<5>(key), hash(key, 5));
      ASSERT_EQ(hash.fixed<14>(key), hash(key, 14));
      ASSERT_EQ(hash.fixed<16>(key), hash(key, 16));
    }
  }
}

// fixed_bulk<N>: keys held as two little-endian words each, hashed in groups
// of eight by the AVX-512 body, of four by the AVX2 one (after AVX-512's, on
// its tail) and one by one by the scalar one, all equal to
// libxxhash's XXH3-128 of the key's N bytes. The bytes past N in the words
// are noise, which must not reach the hash; counts that leave a tail, and
// every length from 4 to 16.
template <size_t N>
void check_fixed_bulk(const ab::Hasher& hash, uint64_t seed) {
  constexpr size_t kKeys = 39;  // groups of eight, one of four and a tail of three
  uint64_t first[kKeys], second[kKeys];
  for (size_t i = 0; i < kKeys; ++i) {
    first[i] = ab::mix64(i * 2 + seed);
    second[i] = ab::mix64(i * 2 + 1 + seed);
  }
  for (const size_t n : {size_t{0}, size_t{1}, size_t{4}, size_t{7}, kKeys}) {
    ab::KeyHash out[kKeys];
    hash.fixed_bulk<N>(first, N > 8 ? second : nullptr, n, out);
    for (size_t i = 0; i < n; ++i) {
      uint8_t key[16];
      __builtin_memcpy(key, &first[i], 8);
      __builtin_memcpy(key + 8, &second[i], 8);
      const XXH128_hash_t r = XXH3_128bits_withSeed(key, N, seed);
      ASSERT_EQ(out[i], (ab::KeyHash{r.low64, r.high64}))
          << ab::isa_name(hash.isa()) << " N " << N << " n " << n << " key " << i << " seed " << seed;
    }
  }
}

TEST(Hasher, FixedBulkFromWordsEqualsXxh3) {
  for (const uint64_t seed : {uint64_t{0x5eed}, uint64_t{0}, ~uint64_t{0}, uint64_t{0x0123456789abcdefULL}})
    for (const ab::Isa isa : {ab::Isa::avx512, ab::Isa::avx2, ab::Isa::baseline}) {
      ab::Hasher hash(seed);
      hash.use_isa(isa);
      RecordProperty(std::string("fixed_bulk_") + ab::isa_name(isa), ab::isa_name(hash.isa()));
      [&]<size_t... L>(std::index_sequence<L...>) {
        (check_fixed_bulk<L + 4>(hash, seed), ...);
      }(std::make_index_sequence<13>{});
    }
}

// hash_bulk's vector bodies take only groups of eight (AVX-512) or four
// (AVX2) keys that share one length from 4 to 16; every other group (a mixed
// group, empty keys, long keys) and the tail go one by one, and all of them
// keep their own hash, the one libxxhash gives.
TEST(Hasher, HashBulkGroupsOfShortKeysEqualOneByOne) {
  std::vector<size_t> lengths;
  for (size_t len = 4; len <= 16; ++len) lengths.insert(lengths.end(), 8, len);  // 13 qualifying groups
  lengths.insert(lengths.end(), {5, 5, 5, 5, 5, 5, 5, 6});                      // one length differs
  lengths.insert(lengths.end(), {13, 13, 13, 8, 13, 13, 13, 13});               // across the two routines
  lengths.insert(lengths.end(), {0, 1, 2, 3, 9, 16, 17, 300});                  // mixed, some outside 4-16
  lengths.insert(lengths.end(), 8, 3);                                            // equal, but too short
  lengths.insert(lengths.end(), 8, 17);                                           // equal, but too long
  lengths.insert(lengths.end(), {8, 8, 8, 8, 8});                                 // a tail
  std::vector<std::vector<uint8_t>> keys(lengths.size());
  std::vector<const void*> ptrs;
  for (size_t i = 0; i < keys.size(); ++i) {
    keys[i].resize(lengths[i]);
    for (size_t b = 0; b < lengths[i]; ++b) keys[i][b] = static_cast<uint8_t>(ab::mix64(i * 1000 + b));
    ptrs.push_back(keys[i].data());
  }
  for (const uint64_t seed : {uint64_t{0x5eed}, uint64_t{0}, ~uint64_t{0}, uint64_t{0x0123456789abcdefULL}})
    for (const ab::Isa isa : {ab::Isa::avx512, ab::Isa::avx2, ab::Isa::baseline}) {
      ab::Hasher hash(seed);
      hash.use_isa(isa);
      RecordProperty(ab::isa_name(isa), ab::isa_name(hash.isa()));  // what this CPU ran for it
      // Every start, so groups fall on every alignment of the list.
      for (size_t start = 0; start < 9; ++start) {
        const size_t n = lengths.size() - start;
        std::vector<ab::KeyHash> out(n);
        hash.hash_bulk(ptrs.data() + start, lengths.data() + start, n, out.data());
        for (size_t i = 0; i < n; ++i) {
          const XXH128_hash_t r = XXH3_128bits_withSeed(ptrs[start + i], lengths[start + i], seed);
          ASSERT_EQ(out[i], (ab::KeyHash{r.low64, r.high64}))
              << ab::isa_name(hash.isa()) << " seed " << seed << " start " << start << " key " << i;
        }
      }
    }
}

// Gathering a short key reads its first and last four bytes and nothing
// else: keys that end at the last byte of a page followed by an unmapped one
// hash without a fault.
TEST(Hasher, HashBulkReadsNoByteBeyondAKey) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* map = mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(map, MAP_FAILED);
  ASSERT_EQ(mprotect(static_cast<uint8_t*>(map) + page, page, PROT_NONE), 0);
  uint8_t* end = static_cast<uint8_t*>(map) + page;
  for (size_t b = 0; b < 16; ++b) end[-1 - static_cast<ptrdiff_t>(b)] = static_cast<uint8_t>(b * 37 + 1);
  for (const ab::Isa isa : {ab::Isa::avx512, ab::Isa::avx2, ab::Isa::baseline})
    for (size_t len = 4; len <= 16; ++len) {
      const void* ptrs[8];
      size_t lens[8];
      for (auto& p : ptrs) p = end - len;
      for (auto& l : lens) l = len;
      ab::KeyHash out[8];
      ab::Hasher hash(7);
      hash.use_isa(isa);
      hash.hash_bulk(ptrs, lens, 8, out);
      for (const auto& h : out) EXPECT_EQ(h, hash(end - len, len)) << ab::isa_name(hash.isa()) << " " << len;
    }
  munmap(map, 2 * page);
}
