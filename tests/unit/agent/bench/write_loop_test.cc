#include "agent/bench/write_loop.h"

#include <gtest/gtest.h>

#include <atomic>
#include <climits>

#include "tests/unit/agent/bench/fake_nic.h"
#include "agent/bench/write_sweep.h"

namespace gdrbench::agent::bench {
namespace {

using testing::FakeNic;

LoopParams Params(uint32_t qps, uint64_t iters, uint32_t tx = 128, uint32_t cqm = 100,
                  uint32_t pl = 1) {
  return LoopParams{.qps = qps, .tx_depth = tx, .cq_moderation = cqm, .post_list = pl,
                    .iterations = iters};
}

TEST(WriteLoop, IterationModeCompletesEveryWrExactlyOnce) {
  FakeNic nic(1, 128, 100);
  LoopParams p = Params(1, 5000);
  LoopScratch s;
  s.Prepare(p);
  LoopResult r = RunWriteLoop(nic, p, s);
  ASSERT_EQ(r.outcome, LoopOutcome::kOk);
  EXPECT_EQ(r.posted, 5000u);
  EXPECT_EQ(r.completed, 5000u);
  EXPECT_EQ(nic.wrs, 5000u);
  // Every 100th WR signalled: 50 completions, the 5000th among them.
  EXPECT_EQ(nic.signalled, 50u);
  EXPECT_LE(nic.max_outstanding, 128u);
  EXPECT_FALSE(nic.sq_overflow);
  EXPECT_GT(r.last_completion_ns, r.first_post_ns);
}

TEST(WriteLoop, LastWrIsSignalledWhenIterationsAreNotAMultipleOfModeration) {
  FakeNic nic(1, 128, 100);
  LoopParams p = Params(1, 250);
  LoopScratch s;
  s.Prepare(p);
  LoopResult r = RunWriteLoop(nic, p, s);
  ASSERT_EQ(r.outcome, LoopOutcome::kOk);
  EXPECT_EQ(r.completed, 250u);
  EXPECT_EQ(nic.signalled, 3u);  // WR 100, 200 and the last (250)
}

TEST(WriteLoop, ManyQpsShareTheCqAndEachRespectsTxDepth) {
  FakeNic nic(4, 16, 100);
  LoopParams p = Params(4, 1000, 16, 8);
  LoopScratch s;
  s.Prepare(p);
  LoopResult r = RunWriteLoop(nic, p, s);
  ASSERT_EQ(r.outcome, LoopOutcome::kOk);
  EXPECT_EQ(r.completed, 4000u);
  for (uint64_t c : s.completed) EXPECT_EQ(c, 1000u);
  EXPECT_LE(nic.max_outstanding, 16u);
  EXPECT_FALSE(nic.sq_overflow);
}

TEST(WriteLoop, PostListChainsWrsAndSignalsTheLastOfAChain) {
  FakeNic nic(1, 64, 100);
  LoopParams p = Params(1, 640, 64, 32, 8);
  LoopScratch s;
  s.Prepare(p);
  LoopResult r = RunWriteLoop(nic, p, s);
  ASSERT_EQ(r.outcome, LoopOutcome::kOk);
  EXPECT_EQ(nic.posts, 80u);
  EXPECT_EQ(nic.signalled, 20u);
  EXPECT_EQ(r.completed, 640u);
}

TEST(WriteLoop, DurationModeStopsAtTheDeadlineAndSignalsTheTail) {
  FakeNic nic(2, 128, 1000);  // 1 us per WR
  LoopParams p = Params(2, 0);
  p.duration_ns = 5'000'000;  // 5 ms: about 5000 WRs on the shared wire
  LoopScratch s;
  s.Prepare(p, 4096);
  LoopResult r = RunWriteLoop(nic, p, s);
  ASSERT_EQ(r.outcome, LoopOutcome::kOk);
  EXPECT_EQ(r.completed, r.posted);
  for (uint32_t q = 0; q < 2; ++q) EXPECT_TRUE(s.tail_signalled[q]);
  // At most one WR past the deadline per QP beyond the pipeline: no group of
  // 100 is filled up after time is up.
  EXPECT_LE(nic.signalled, r.completed / 100 + 2 + 2);
  int64_t ran = r.last_completion_ns - r.first_post_ns;
  EXPECT_GE(ran, 5'000'000);
  EXPECT_LT(ran, 5'000'000 + 2 * 128 * 1000 + 100'000);  // at most the drain of the pipeline
  EXPECT_GT(r.completed, 4000u);
}

TEST(WriteLoop, CompletionErrorEndsTheLoopWithTheStatus) {
  FakeNic nic(1, 128, 100);
  nic.complete_error_at = 1234;
  LoopParams p = Params(1, 5000);
  LoopScratch s;
  s.Prepare(p);
  LoopResult r = RunWriteLoop(nic, p, s);
  ASSERT_EQ(r.outcome, LoopOutcome::kCompletionError);
  EXPECT_EQ(r.error_code, IBV_WC_REM_ACCESS_ERR);
  EXPECT_LT(r.completed, 1234u);
  std::string msg = DescribeFailure(r, 65536);
  EXPECT_NE(msg.find("65536 B"), std::string::npos) << msg;
  EXPECT_NE(msg.find("remote access error"), std::string::npos) << msg;
}

TEST(WriteLoop, PostFailureIsReportedWithErrno) {
  FakeNic nic(1, 128, 100);
  nic.post_error_at = 3;
  LoopParams p = Params(1, 100);
  LoopScratch s;
  s.Prepare(p);
  LoopResult r = RunWriteLoop(nic, p, s);
  ASSERT_EQ(r.outcome, LoopOutcome::kPostFailed);
  EXPECT_EQ(r.error_code, 12);
  EXPECT_EQ(r.posted, 3u);
}

TEST(WriteLoop, APeerThatNeverCompletesEndsAsStalled) {
  FakeNic nic(1, 128, 100);
  nic.never_complete = true;
  LoopParams p = Params(1, 1000);
  p.stall_timeout_ns = 1'000'000;
  LoopScratch s;
  s.Prepare(p);
  LoopResult r = RunWriteLoop(nic, p, s);
  EXPECT_EQ(r.outcome, LoopOutcome::kStalled);
  EXPECT_EQ(r.completed, 0u);
  EXPECT_GT(r.stalled_ns, p.stall_timeout_ns);
  std::string msg = DescribeFailure(r, 65536);
  EXPECT_NE(msg.find("no completion for 0.00"), std::string::npos) << msg;  // ~1 ms, the guard set above
}

// A slow link that moves is not a stall: at 8 MiB x 100 WRs, tx depth 128,
// CQ moderation 100 (bench/datapath_vs_perftest.sh's 8M row, perftest's
// defaults) the one completion comes after all 839 MB; Soft-RoCE on a loaded
// lab host moved 0.05 Gb/s (134 s), and a flat 30 s guard ended the test.
TEST(WriteLoop, TheStallGuardGrowsWithTheDataBetweenTwoCompletions) {
  const uint64_t mib8 = 8 << 20;
  const double batch_s_at_lab_rate = 100.0 * mib8 * 8 / 0.05e9;
  EXPECT_GT(StallTimeoutNs(mib8, 1, 100, 100) / 1e9, batch_s_at_lab_rate);
  EXPECT_NEAR(StallTimeoutNs(mib8, 1, 100, 100) / 1e9, 100.0 * mib8 * 8 / 0.01e9, 1.0);
  // Four QPs share the wire: four batches may complete together.
  EXPECT_NEAR(StallTimeoutNs(mib8, 4, 100, 100) / 1e9, 4 * 100.0 * mib8 * 8 / 0.01e9, 4.0);
  // Fewer iterations than the moderation: the last WR is the one signalled.
  EXPECT_NEAR(StallTimeoutNs(mib8, 1, 100, 20) / 1e9, 20.0 * mib8 * 8 / 0.01e9, 1.0);
  // Small messages keep the 30 s floor (64 KiB x 100: 5.2 s of data at 0.01 Gb/s).
  EXPECT_EQ(StallTimeoutNs(64 << 10, 1, 100, 1000), kMinStallTimeoutNs);
  EXPECT_EQ(StallTimeoutNs(2, 1, 100, 0), kMinStallTimeoutNs);  // duration mode
}

TEST(WriteLoop, SummaryUsesFirstPostToLastCompletion) {
  FakeNic nic(1, 128, 1000, 0);  // 1 us per 4 KiB WR: 32.768 Gb/s on the wire
  LoopParams p = Params(1, 10000);
  LoopScratch s;
  s.Prepare(p);
  LoopResult r = RunWriteLoop(nic, p, s);
  ASSERT_EQ(r.outcome, LoopOutcome::kOk);
  SizeOutcome o = Summarize(r, s, p, 4096);
  ASSERT_TRUE(o.ok);
  EXPECT_EQ(o.iterations, 10000u);
  EXPECT_EQ(o.duration_ns, r.last_completion_ns - r.first_post_ns);
  EXPECT_NEAR(o.bw_avg_gbps, 32.768, 0.2);
  EXPECT_NEAR(o.msg_rate_mpps, 1.0, 0.01);
  EXPECT_GE(o.bw_peak_gbps, o.bw_avg_gbps);
  EXPECT_LT(o.bw_peak_gbps, 32.768 * 1.05);
}

// The fake NIC with something happening at a chosen moment of its clock:
// the caller's flag set (a cancel, CloseTarget, a port fault), or the
// poller stopped for a while (the thread descheduled) while the NIC keeps
// completing.
struct EventNic {
  FakeNic& nic;
  std::atomic<bool>* abort = nullptr;
  int64_t abort_at_ns = INT64_MAX;
  int64_t abort_set_ns = 0;
  uint64_t stall_at_poll = UINT64_MAX;
  int64_t stall_ns = 0;
  uint64_t polls = 0;

  int Post(uint32_t qp, uint64_t first, uint32_t count, bool signal, uint64_t wr_id) {
    return nic.Post(qp, first, count, signal, wr_id);
  }
  int Poll(int max, ibv_wc* wc) {
    if (++polls == stall_at_poll) nic.Advance(stall_ns);
    if (abort != nullptr && abort_set_ns == 0 && nic.now() >= abort_at_ns) {
      abort->store(true);
      abort_set_ns = nic.now();
    }
    return nic.Poll(max, wc);
  }
  int64_t NowNs() { return nic.NowNs(); }
};

// A cancel while completions never stop coming (line rate, a long size) is
// heard within 100 ms, not when the size ends.
TEST(WriteLoop, ACancelUnderContinuousCompletionsIsHeardWithin100Ms) {
  FakeNic nic(1, 128, 100);  // 100 ns per WR: 2M WRs are 200 ms of traffic
  std::atomic<bool> abort{false};
  EventNic ev{.nic = nic, .abort = &abort, .abort_at_ns = nic.now() + 10'000'000};
  LoopParams p = Params(1, 2'000'000);
  p.abort = &abort;
  LoopScratch s;
  s.Prepare(p);
  LoopResult r = RunWriteLoop(ev, p, s);
  ASSERT_GT(ev.abort_set_ns, 0);
  EXPECT_EQ(r.outcome, LoopOutcome::kAborted);
  EXPECT_LT(nic.now() - ev.abort_set_ns, 100'000'000);
  EXPECT_LT(r.completed, 2'000'000u);
}

// 64 QPs and a poller stopped for 2 ms: the backlog of completions is reaped
// 16 at a time over many polls, yet no window, however it starts, reports
// more than the wire moved (4 KiB per 100 ns: 327.68 Gb/s).
TEST(WriteLoop, PeakAfterAPollingStallWith64QpsStaysUnderTheWire) {
  FakeNic nic(64, 128, 100, 1000);
  EventNic ev{.nic = nic, .stall_at_poll = 200, .stall_ns = 2'000'000};
  LoopParams p = Params(64, 4000, 128, 32);
  LoopScratch s;
  s.Prepare(p);
  LoopResult r = RunWriteLoop(ev, p, s);
  ASSERT_EQ(r.outcome, LoopOutcome::kOk);
  ASSERT_GT(ev.polls, 200u);
  SizeOutcome o = Summarize(r, s, p, 4096);
  ASSERT_TRUE(o.ok);
  const double wire = 4096 * 8 / 100.0;
  EXPECT_LE(o.bw_peak_gbps, wire);
  EXPECT_GE(o.bw_peak_gbps, o.bw_avg_gbps);
  // Not a loose bound either: the bound gives up one pipeline (64 x 128 WRs)
  // per window, and the longest window here holds 2^17 WRs.
  EXPECT_GT(o.bw_peak_gbps, 0.85 * wire);
}

}  // namespace
}  // namespace gdrbench::agent::bench
