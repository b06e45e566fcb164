// The filter options dedup_fwd and agebloom-replay share: what each accepts,
// and the message for what it refuses.
#include "agebloom/dedup/filter_options.hpp"

#include <gtest/gtest.h>

namespace ab = agebloom;
namespace dd = agebloom::dedup;

TEST(SpecOptions, WholeUnsignedNumbersOnly) {
  uint64_t v = 0;
  EXPECT_TRUE(dd::parse_u64("42", v));
  EXPECT_EQ(v, 42u);
  EXPECT_TRUE(dd::parse_u64("ff", v, 16));
  EXPECT_EQ(v, 255u);
  for (const char* bad : {"", "-1", "+1", " 1", "1 ", "1x", "99999999999999999999999"})
    EXPECT_FALSE(dd::parse_u64(bad, v)) << "'" << bad << "'";
}

TEST(SpecOptions, WindowTtlCapacityFprSeed) {
  ab::Window w = ab::Window::count(1);
  EXPECT_EQ(dd::parse_window_option("1000", w), "");
  EXPECT_FALSE(w.is_time());
  EXPECT_EQ(w.span, 1000u);
  EXPECT_EQ(dd::parse_ttl_option("500ms", w), "");
  EXPECT_TRUE(w.is_time());
  EXPECT_EQ(w.span, 500'000'000u);
  uint64_t capacity = 0, seed = 0;
  EXPECT_EQ(dd::parse_capacity_option("5000", capacity), "");
  EXPECT_EQ(capacity, 5000u);
  double fpr = 0;
  EXPECT_EQ(dd::parse_fpr_option("0.01", fpr), "");
  EXPECT_DOUBLE_EQ(fpr, 0.01);
  EXPECT_EQ(dd::parse_seed_option("1f", seed), "");
  EXPECT_EQ(seed, 0x1fu);

  // Refusals name the option and echo the value.
  EXPECT_EQ(dd::parse_window_option("0", w), "--window needs a positive count, not '0'");
  EXPECT_NE(dd::parse_window_option("ten", w).find("'ten'"), std::string::npos);
  EXPECT_NE(dd::parse_ttl_option("0s", w).find("--ttl"), std::string::npos);
  EXPECT_NE(dd::parse_ttl_option("5parsecs", w).find("'5parsecs'"), std::string::npos);
  EXPECT_NE(dd::parse_capacity_option("0", capacity).find("--capacity"), std::string::npos);
  for (const char* bad : {"", "0", "1", "1.5", "-0.1", "0.01x", "nan"})
    EXPECT_NE(dd::parse_fpr_option(bad, fpr).find("--fpr"), std::string::npos) << "'" << bad << "'";
  EXPECT_NE(dd::parse_seed_option("xyz", seed).find("--seed"), std::string::npos);
}
