#include "server/history/node_stats.h"

#include "gtest/gtest.h"

namespace gdrbench::server::history {
namespace {

TEST(Median, OddEvenEmpty) {
  EXPECT_DOUBLE_EQ(Median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(Median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(Median({}), 0);
}

TEST(NodeStatsBuilder, MediansPerDirectionAndCounts) {
  NodeStatsBuilder b(3);
  b.Add(0, 1, v1::RESULT_STATUS_OK, 100, CellVerdict::kPass);
  b.Add(0, 2, v1::RESULT_STATUS_OK, 50, CellVerdict::kLow);
  b.Add(1, 0, v1::RESULT_STATUS_OK, 80, CellVerdict::kPass);
  b.Add(2, 0, v1::RESULT_STATUS_FAILED, 0, CellVerdict::kFail);
  auto stats = b.Finish();
  ASSERT_EQ(stats.size(), 3u);
  const NodeStat& n0 = stats[0];
  EXPECT_EQ(n0.ok_cells, 3u);
  EXPECT_EQ(n0.low_cells, 1u);
  EXPECT_EQ(n0.failed_cells, 1u);
  EXPECT_DOUBLE_EQ(n0.tx_median_gbps, 75);  // 100, 50
  EXPECT_DOUBLE_EQ(n0.rx_median_gbps, 80);
  EXPECT_DOUBLE_EQ(n0.median_gbps, 80);     // 100, 50, 80
  EXPECT_EQ(stats[2].failed_cells, 1u);
  EXPECT_EQ(stats[2].ok_cells, 1u);
}

TEST(CellVerdict, NamesRoundTripAndUnknownIsRefused) {
  for (auto v : {CellVerdict::kNone, CellVerdict::kPass, CellVerdict::kLow, CellVerdict::kFail}) {
    CellVerdict back;
    ASSERT_TRUE(ParseVerdict(VerdictName(v), &back));
    EXPECT_EQ(back, v);
  }
  CellVerdict x;
  EXPECT_FALSE(ParseVerdict("ok", &x));
}

}  // namespace
}  // namespace gdrbench::server::history
