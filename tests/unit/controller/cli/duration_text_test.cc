// The dry run's estimate carries its unit (issue 32, item 5).
#include <gtest/gtest.h>

#include <limits>

#include "controller/cli/dry_run_text.h"

namespace gdrbench::controller::cli {
namespace {

TEST(DurationText, EachRangeWithItsUnit) {
  EXPECT_EQ(DurationText(0.083), "0.083 s");
  EXPECT_EQ(DurationText(4.5), "4.5 s");
  EXPECT_EQ(DurationText(42.4), "42 s");
  EXPECT_EQ(DurationText(59.4), "59 s");
  EXPECT_EQ(DurationText(60), "1 min 00 s");
  EXPECT_EQ(DurationText(968), "16 min 08 s");
  EXPECT_EQ(DurationText(3599.4), "59 min 59 s");
  EXPECT_EQ(DurationText(3600), "1 h 00 min");
  EXPECT_EQ(DurationText(7529), "2 h 05 min");  // 2:05:29, to the minute
  EXPECT_EQ(DurationText(3 * 86400), "72 h 00 min");
}

TEST(DurationText, UnknownIsAQuestionMark) {
  EXPECT_EQ(DurationText(-1), "?");
  EXPECT_EQ(DurationText(std::numeric_limits<double>::infinity()), "?");
  EXPECT_EQ(DurationText(std::numeric_limits<double>::quiet_NaN()), "?");
}

}  // namespace
}  // namespace gdrbench::controller::cli
