#include <gtest/gtest.h>

#include "agebloom/agebloom.hpp"

namespace ab = agebloom;

TEST(Window, ValidationSaysWhichSpanIsZero) {
  EXPECT_EQ(ab::Window::count(0).validate().code(), ab::Errc::window_zero);
  EXPECT_EQ(ab::Window::time(0).validate().code(), ab::Errc::time_span_zero);
  EXPECT_TRUE(ab::Window::count(1).validate());
  EXPECT_TRUE(ab::Window::time(1).validate());
}

// Guarded Epoch Bloom Filters, Algorithm 1: insertion t rotates first when t > 0 and t mod ℓ == 0.
TEST(EpochSchedule, CountRotatesOnEpochBoundaries) {
  auto s = ab::EpochSchedule::make(ab::WindowKind::count, 3);
  std::vector<int> rotations;
  for (int t = 0; t < 10; ++t)
    if (s.rotate_before_insert()) rotations.push_back(t);
  EXPECT_EQ(rotations, (std::vector<int>{3, 6, 9}));
}

TEST(EpochSchedule, TimeCountsElapsedEpochsAndCatchesUp) {
  auto s = ab::EpochSchedule::make(ab::WindowKind::time, 100);
  EXPECT_EQ(*s.epochs_elapsed(1000), 0u);  // anchors the first epoch
  EXPECT_EQ(*s.epochs_elapsed(1099), 0u);
  EXPECT_EQ(*s.epochs_elapsed(1100), 1u);
  EXPECT_EQ(*s.epochs_elapsed(1350), 2u);  // epochs starting at 1200 and 1300
  EXPECT_EQ(*s.epochs_elapsed(1350), 0u);  // same instant twice is fine
  EXPECT_EQ(*s.epochs_elapsed(1'000'001'350), 10'000'000u);  // a long gap, O(1)
  EXPECT_FALSE(s.rotate_before_insert());  // time windows ignore counts
}

TEST(EpochSchedule, TimeGoingBackwardsIsAnErrorAndChangesNothing) {
  auto s = ab::EpochSchedule::make(ab::WindowKind::time, 100);
  ASSERT_TRUE(s.epochs_elapsed(500));
  ASSERT_TRUE(s.epochs_elapsed(650));
  auto back = s.epochs_elapsed(649);
  EXPECT_EQ(back.code(), ab::Errc::time_went_backwards);
  EXPECT_EQ(*s.epochs_elapsed(700), 1u);  // state intact: epoch [600,700) ends at 700
}
