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

TEST(BwMath, PeakIsTheBestBoundedInterval) {
  // {t, completed, posted}: 1000 B messages, 100 posted ahead (the pipeline).
  // 100 messages per 1000 ns, a slow stretch, then 200 in 500 ns.
  std::vector<Sample> s = {{0, 0, 0},          {1000, 100, 200},  {2000, 200, 300},
                           {12000, 300, 400},  {12250, 400, 500}, {12500, 500, 600}};
  // Windows of >= 100 bounded messages: [12000, 12500] has 500 - 400 = 100
  // in 500 ns = 1600 Gb/s; [0, 1000] has 100 in 1000 ns = 800.
  EXPECT_DOUBLE_EQ(PeakGbps(s, s.size(), 1000, 100), 1600.0);
  // Windows of >= 200: [0, 2000] = 200 in 2000 ns = 800 Gb/s beats
  // [2000, 12500] (200 in 10500 ns).
  EXPECT_DOUBLE_EQ(PeakGbps(s, s.size(), 1000, 200), 800.0);
  // Only the samples recorded count.
  EXPECT_DOUBLE_EQ(PeakGbps(s, 3, 1000, 100), 800.0);
  EXPECT_EQ(PeakGbps(s, s.size(), 1000, 1000), 0);
  EXPECT_EQ(PeakGbps({}, 0, 1000, 1), 0);
}

// 1000 B messages at 10 ns each on the wire (800 Gb/s), 100 in flight. The
// poller stops from 1000 to 11000 ns; the wire finishes the 100 in flight
// meanwhile, and the backlog is reaped in two batches 100 ns apart, each
// followed by new posts that complete a microsecond later. Counting
// completions alone, [11000, 12200] is 150 messages in 1200 ns (1000 Gb/s,
// above the wire); counting only messages posted after the window opened,
// no interval beats the wire.
TEST(BwMath, ABacklogReapedInBatchesIsNotAPeak) {
  std::vector<Sample> s = {{0, 0, 0},          {1000, 100, 200}, {11000, 150, 250},
                           {11100, 200, 300},  {12200, 300, 400}};
  EXPECT_DOUBLE_EQ(PeakGbps(s, s.size(), 1000, 100), 800.0);
}

}  // namespace
}  // namespace gdrbench::agent::bench
