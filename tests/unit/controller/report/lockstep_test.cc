// Issue 34: a bidirectional run's report says whether every test ran its
// two directions in lock-step, and names the tests that did not.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "controller/report/report.h"
#include "report/report_util.h"

namespace gdrbench::controller::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

v1::Run BidirectionalRun(int tests, int apart) {
  v1::Run run;
  run.set_run_id("r1");
  run.mutable_params()->set_bidirectional(true);
  for (int i = 0; i < tests; ++i) {
    v1::PairResult* p = run.add_pairs();
    p->mutable_src()->set_node("n" + std::to_string(i));
    p->mutable_dst()->set_node("n" + std::to_string(i + 1));
    p->set_status(v1::RESULT_STATUS_OK);
    p->add_reverse_sizes()->set_size_bytes(65536);
    p->mutable_summary()->set_sizes_in_lockstep(i >= apart);
  }
  return run;
}

TEST(Lockstep, EveryTestInLockStepIsSaidOnce) {
  const v1::Run run = BidirectionalRun(3, 0);
  EXPECT_EQ(
      gdrbench::report::LockstepNote(run),
      "both directions of all 3 bidirectional tests in lock-step (each size started and ended together)");
  EXPECT_THAT(RenderMarkdown(run), HasSubstr("- both directions of all 3 bidirectional tests in lock-step"));
}

TEST(Lockstep, TestsNotInLockStepAreNamed) {
  const v1::Run run = BidirectionalRun(8, 7);
  const std::string note = gdrbench::report::LockstepNote(run);
  EXPECT_THAT(note, HasSubstr("7 of 8 bidirectional tests NOT in lock-step"));
  EXPECT_THAT(note, HasSubstr("n0<->n1 rail 0, n1<->n2 rail 0"));
  EXPECT_THAT(note, HasSubstr(" and 2 more"));
  EXPECT_THAT(RenderMatrixText(run), HasSubstr("NOT in lock-step"));
}

TEST(Lockstep, NothingIsClaimedWithoutBidirectionalResults) {
  v1::Run one_way = BidirectionalRun(2, 0);
  one_way.mutable_params()->set_bidirectional(false);
  EXPECT_EQ(gdrbench::report::LockstepNote(one_way), "");
  v1::Run failed = BidirectionalRun(2, 2);
  for (auto& p : *failed.mutable_pairs()) p.set_status(v1::RESULT_STATUS_FAILED);
  EXPECT_EQ(gdrbench::report::LockstepNote(failed), "");
  EXPECT_THAT(RenderMarkdown(failed), Not(HasSubstr("lock-step")));
}

// Issue 34 item 10: flagged links' counters are the ports', not the tests'.
TEST(Lockstep, FlaggedLinksSayTheirCountersAreThePorts) {
  v1::Run run = BidirectionalRun(1, 0);
  run.mutable_pairs(0)->set_link_flag("the link retransmitted: rcvd_seq_err +812 on n1 rxe0");
  EXPECT_THAT(RenderMarkdown(run), HasSubstr(std::string(kPortCountersCaveat)));
  EXPECT_THAT(RenderHtml(run), HasSubstr(std::string(kPortCountersCaveat)));
}

}  // namespace
}  // namespace gdrbench::controller::report
