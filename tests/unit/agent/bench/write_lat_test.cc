// perftest's ib_write_lat statistics (print_report_lat in
// perftest_parameters.c, linux-rdma/perftest): deltas between consecutive
// post times are round trips, halved; the 2 largest are dropped
// (LAT_MEASURE_TAIL); t_max is delta[n], the median of an even count is the
// mean of the middle two, 99 % is delta[ceil(0.99 n)].
#include "agent/bench/write_lat.h"

#include <gtest/gtest.h>

namespace gdrbench::agent::bench {
namespace {

std::vector<int64_t> PostTimes(const std::vector<int64_t>& deltas) {
  std::vector<int64_t> t = {1'000'000};
  for (int64_t d : deltas) t.push_back(t.back() + d);
  return t;
}

TEST(LatencyStats, FollowPerftestsReport) {
  // 12 round trips of 10, 20, ... 120 ns, shuffled: n = 10 kept.
  auto s = LatencyFromPostTimes(PostTimes({70, 10, 120, 40, 30, 110, 60, 20, 90, 50, 100, 80}));
  EXPECT_EQ(s.samples, 10u);
  EXPECT_DOUBLE_EQ(s.t_min_us, 0.005);     // 10 ns / 2
  EXPECT_DOUBLE_EQ(s.t_max_us, 0.055);     // delta[10] = 110 ns
  EXPECT_DOUBLE_EQ(s.t_typical_us, 0.0275);  // (50 + 60) / 2 / 2
  EXPECT_DOUBLE_EQ(s.t_avg_us, 0.0275);    // mean of 10 .. 100, halved
  EXPECT_DOUBLE_EQ(s.p99_us, 0.055);       // delta[ceil(9.9)] = delta[10]
  EXPECT_DOUBLE_EQ(s.p999_us, 0.055);
  EXPECT_NEAR(s.t_stdev_us, 0.0143614, 1e-6);
}

TEST(LatencyStats, OddCountMedianIsTheMiddleOne) {
  // 13 deltas: n = 11, median delta[5] (the sixth smallest).
  auto s = LatencyFromPostTimes(PostTimes({1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000,
                                           10000, 11000, 50000, 60000}));
  EXPECT_EQ(s.samples, 11u);
  EXPECT_DOUBLE_EQ(s.t_typical_us, 3.0);  // 6000 ns / 2
  EXPECT_DOUBLE_EQ(s.t_max_us, 25.0);     // delta[11] = 50000: the first dropped
  EXPECT_DOUBLE_EQ(s.p99_us, 25.0);       // delta[ceil(10.89)] = delta[11]
}

TEST(LatencyStats, TooFewPostsGiveNoSamples) {
  EXPECT_EQ(LatencyFromPostTimes({1, 2, 3}).samples, 0u);
  EXPECT_EQ(LatencyFromPostTimes({}).samples, 0u);
}

TEST(PingValue, NeverZeroAndNeverRepeatsBackToBack) {
  for (uint64_t k = 1; k < 2000; ++k) {
    EXPECT_NE(PingValue(k), 0);
    EXPECT_NE(PingValue(k), PingValue(k + 1));
  }
  EXPECT_EQ(PingValue(1), 1);
  EXPECT_EQ(PingValue(255), 255);
  EXPECT_EQ(PingValue(256), 1);
}

}  // namespace
}  // namespace gdrbench::agent::bench
