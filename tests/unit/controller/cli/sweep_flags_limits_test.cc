// Sweep flags against the agent's limits, before any agent is contacted
// (issue 12, item 13): past them every test used to fail after probing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "controller/cli/sweep_flags.h"

namespace gdrbench::controller::cli {
namespace {

using ::testing::HasSubstr;

std::string Refused(SweepFlags f) {
  f.sizes = "64K";
  auto p = ToSweepParams(f);
  EXPECT_FALSE(p.ok());
  return p.ok() ? "" : std::string(p.status().message());
}

TEST(SweepFlagLimits, ValuesPastTheAgentsLimitsAreRefused) {
  SweepFlags f;
  f.iterations = 99999999999;
  EXPECT_THAT(Refused(f), HasSubstr("--iterations 99999999999: at most 100000000"));
  f = {};
  f.tx_depth = 99999;
  EXPECT_THAT(Refused(f), HasSubstr("--tx-depth 99999: at most 8192"));
  f = {};
  f.post_list = 0;
  EXPECT_THAT(Refused(f), HasSubstr("--post-list 0: give 1 .. 64"));
  f = {};
  f.iterations = 5;
  f.duration_s = 1;
  EXPECT_THAT(Refused(f), HasSubstr("exclude each other"));
}

TEST(SweepFlagLimits, TheLimitsThemselvesPass) {
  SweepFlags f;
  f.sizes = "64K";
  f.iterations = 100'000'000;
  f.tx_depth = 8192;
  f.post_list = 64;
  EXPECT_TRUE(ToSweepParams(f).ok());
}

}  // namespace
}  // namespace gdrbench::controller::cli
