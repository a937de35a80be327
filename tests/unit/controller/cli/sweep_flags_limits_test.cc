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

// Issue 34: --sl, --tclass and --disable-pcie-relaxed, with perftest's
// bounds; a negative value never wraps into range.
TEST(SweepFlagLimits, ServiceLevelAndTrafficClassAreBounded) {
  SweepFlags f;
  f.sl = 16;
  EXPECT_THAT(Refused(f), HasSubstr("--sl 16: give 0 .. 15"));
  f = {};
  f.sl = -2;
  EXPECT_THAT(Refused(f), HasSubstr("--sl -2: give 0 .. 15"));
  f = {};
  f.tclass = 256;
  EXPECT_THAT(Refused(f), HasSubstr("--tclass 256: give 0 .. 255"));
  f = {};
  f.tclass = int64_t{1} << 32;
  EXPECT_THAT(Refused(f), HasSubstr("--tclass 4294967296: give 0 .. 255"));
  f = {};
  f.sl = 1;
  f.cm = "rdma_cm";
  EXPECT_THAT(Refused(f), HasSubstr("--sl 1 with --cm rdma_cm"));
}

TEST(SweepFlagLimits, QosFlagsReachTheParams) {
  SweepFlags f;
  f.sizes = "64K";
  auto unset = ToSweepParams(f);
  ASSERT_TRUE(unset.ok()) << unset.status();
  EXPECT_FALSE(unset->has_sl());
  EXPECT_FALSE(unset->has_tclass());
  EXPECT_FALSE(unset->disable_pcie_relaxed());
  f.sl = 15;
  f.tclass = 0;
  f.cm = "oob";
  f.disable_pcie_relaxed = true;
  auto set = ToSweepParams(f);
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->sl(), 15u);
  ASSERT_TRUE(set->has_tclass());
  EXPECT_EQ(set->tclass(), 0u);
  EXPECT_TRUE(set->disable_pcie_relaxed());
}

}  // namespace
}  // namespace gdrbench::controller::cli
