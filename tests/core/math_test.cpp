#include <gtest/gtest.h>

#include <cmath>

#include "agebloom/agebloom.hpp"

namespace ab = agebloom;

TEST(Math, LnMatchesLibm) {
  for (double x : {1e-300, 1e-20, 0.001, 0.5, 0.9999, 1.0, 1.0001, 2.0, 3.5, 1e6, 1e18, 1e300})
    EXPECT_NEAR(ab::math::ln(x), std::log(x), 1e-13 * std::max(1.0, std::fabs(std::log(x)))) << x;
  EXPECT_TRUE(std::isinf(ab::math::ln(0.0)));
}

TEST(Math, ExpMatchesLibm) {
  for (double x : {-700.0, -50.0, -1.0, -1e-9, 0.0, 1e-9, 0.5, 1.0, 10.0, 100.0, 700.0})
    EXPECT_NEAR(ab::math::exp(x) / std::exp(x), 1.0, 1e-13) << x;
  EXPECT_EQ(ab::math::exp(-800.0), 0.0);
  EXPECT_TRUE(std::isinf(ab::math::exp(800.0)));
}

TEST(Math, PowAndRootComplement) {
  EXPECT_NEAR(ab::math::pow(0.5, 7), std::pow(0.5, 7), 1e-15);
  EXPECT_NEAR(ab::math::pow(0.99, 1e4) / std::pow(0.99, 1e4), 1.0, 1e-9);
  EXPECT_NEAR(ab::math::root_complement(0.01, 9), 1 - std::pow(0.99, 1.0 / 9), 1e-15);
}

TEST(Math, BloomFormulas) {
  // Classic filter: 10 bits/item, k = 7 → 0.0082 (Bloom's formula).
  EXPECT_NEAR(ab::bloom_math::fpr(10000, 1000, 7), std::pow(1 - std::exp(-0.7), 7), 1e-12);
  // A blocked filter is never better than the flat one at the same load...
  const double flat = ab::bloom_math::fpr(1 << 20, 100000, 7);
  const double b512 = ab::bloom_math::blocked_fpr(1 << 20, 100000, 7, 512);
  const double b64 = ab::bloom_math::blocked_fpr(1 << 20, 100000, 7, 64);
  EXPECT_GT(b512, flat);
  EXPECT_GT(b64, b512);
  // ...and converges to it as blocks grow (B = 2^16 ≈ flat within 1%).
  EXPECT_NEAR(ab::bloom_math::blocked_fpr(1 << 20, 100000, 7, 1 << 16) / flat, 1.0, 0.01);
  EXPECT_EQ(ab::bloom_math::optimal_k(10000, 1000, 32), 7u);
  EXPECT_NEAR(ab::bloom_math::bits_for(1000, 0.01), 9585.06, 0.01);
}
