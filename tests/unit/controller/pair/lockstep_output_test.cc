// Issue 34: what a bidirectional test's output says about its directions
// (SweepSummary.sizes_in_lockstep: both started and ended every size
// together, or not, when the reverse and summed figures may be inflated),
// and the verify seed a test can be run again with.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "controller/cli/pair_command.h"
#include "controller/cli/sweep_output.h"

namespace gdrbench::controller::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

v1::PairResult Bidirectional(bool lockstep) {
  v1::PairResult r;
  r.mutable_src()->set_node("a");
  r.mutable_dst()->set_node("b");
  r.mutable_summary()->set_sizes_in_lockstep(lockstep);
  r.mutable_summary()->set_status(v1::RESULT_STATUS_OK);
  auto* s = r.add_sizes();
  s->set_size_bytes(65536);
  s->set_bw_avg_gbps(40);
  s->set_status(v1::RESULT_STATUS_OK);
  auto* rev = r.add_reverse_sizes();
  rev->set_size_bytes(65536);
  rev->set_bw_avg_gbps(30);
  rev->set_status(v1::RESULT_STATUS_OK);
  r.set_status(v1::RESULT_STATUS_OK);
  return r;
}

TEST(LockstepOutput, ThePairTableSaysWhetherTheDirectionsRanTogether) {
  EXPECT_THAT(FormatPairTable(Bidirectional(true), true), HasSubstr("both directions in lock-step"));
  const std::string apart = FormatPairTable(Bidirectional(false), true);
  EXPECT_THAT(apart, HasSubstr("NOT in lock-step"));
  EXPECT_THAT(apart, HasSubstr("may be inflated"));
  // One direction: nothing to say.
  v1::PairResult one = Bidirectional(false);
  one.clear_reverse_sizes();
  EXPECT_THAT(FormatPairTable(one, false), Not(HasSubstr("lock-step")));
}

TEST(LockstepOutput, ASweepsResultLineFlagsATestWhoseDirectionsOverlapped) {
  EXPECT_THAT(ResultLine(Bidirectional(false)), HasSubstr("OK (directions NOT in lock-step)"));
  EXPECT_THAT(ResultLine(Bidirectional(true)), Not(HasSubstr("lock-step")));
}

TEST(LockstepOutput, TheVerifySeedIsPrintedToRunTheTestAgain) {
  v1::PairResult r = Bidirectional(true);
  r.set_verify_seed(1234567);
  EXPECT_THAT(FormatPairTable(r, true), HasSubstr("verify seed: 1234567 (--seed runs it again)"));
  r.set_verify_seed(0);
  EXPECT_THAT(FormatPairTable(r, true), Not(HasSubstr("verify seed")));
}

// Issue 34 item 10: counters are the port's, and the output says so.
TEST(CountersOutput, ThePortCountersCarryTheirCaveat) {
  v1::PairResult r = Bidirectional(true);
  EXPECT_THAT(FormatPairTable(r, true), Not(HasSubstr("other tenants")));
  r.mutable_src_counters()->set_device("mlx5_0");
  r.mutable_src_counters()->set_port(1);
  EXPECT_THAT(FormatPairTable(r, true),
              HasSubstr("(port counters count every QP on the port: other tests' and other tenants' traffic is "
                        "included)"));
}

}  // namespace
}  // namespace gdrbench::controller::cli
