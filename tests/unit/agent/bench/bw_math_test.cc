#include "agent/bench/bw_math.h"

#include <gtest/gtest.h>

namespace gdrbench::agent::bench {
namespace {

TEST(BwMath, GigabitsAreTenToTheNinthBitsPerSecond) {
  // 1.25 GB in one second is 10 Gb/s.
  EXPECT_DOUBLE_EQ(GbpsOf(1'250'000'000, 1'000'000'000), 10.0);
  EXPECT_DOUBLE_EQ(GbpsOf(65536, 65536), 8.0);
  EXPECT_EQ(GbpsOf(100, 0), 0);
  EXPECT_EQ(GbpsOf(100, -5), 0);
}

TEST(BwMath, MessageRateIsMillionsPerSecond) {
  EXPECT_DOUBLE_EQ(MppsOf(1'000'000, 1'000'000'000), 1.0);
  EXPECT_DOUBLE_EQ(MppsOf(5000, 1'000'000), 5.0);
}

TEST(BwMath, PeakIsTheBestQualifyingInterval) {
  // 100 messages of 1000 B per 1000 ns, then a slow stretch, then a burst.
  std::vector<Sample> s = {{0, 0}, {1000, 100}, {2000, 200}, {12000, 300}, {12500, 400}};
  // Windows of >= 100 messages: the best is 100 msgs in 500 ns = 1.6 Gb/s.
  EXPECT_DOUBLE_EQ(PeakGbps(s, s.size(), 1000, 100), 1600.0);
  // Windows of >= 200 messages: [0,2000] = 200*1000*8/2000 = 800 Gb/s.
  EXPECT_DOUBLE_EQ(PeakGbps(s, s.size(), 1000, 200), 800.0);
  // Only the samples recorded count.
  EXPECT_DOUBLE_EQ(PeakGbps(s, 3, 1000, 100), 800.0);
  EXPECT_EQ(PeakGbps(s, s.size(), 1000, 1000), 0);
  EXPECT_EQ(PeakGbps({}, 0, 1000, 1), 0);
}

}  // namespace
}  // namespace gdrbench::agent::bench
