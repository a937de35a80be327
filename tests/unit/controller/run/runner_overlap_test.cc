// The runner sets up the next round's tests while this round's data moves
// (issue 30): checked over what it actually did to each NIC, recorded from
// its calls through the agents' API (NicTimeline), by a validator that fails
// when two data phases share a NIC or a NIC holds more than two targets.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "controller/run/probe.h"
#include "controller/run/runner.h"
#include "controller/run/testing/fake_cluster.h"
#include "controller/run/testing/nic_timeline.h"

namespace gdrbench::controller::run {
namespace {

using ::testing::HasSubstr;
using Kind = NicEvent::Kind;

// The fake cluster's agents behind recorders.
struct Recorded {
  Recorded(uint32_t nodes, uint32_t rails, RecordingOptions o) : cluster(nodes, rails, 100), timeline(o) {
    for (uint32_t i = 0; i < nodes; ++i) {
      wrapped.push_back(timeline.Wrap(cluster.agent(i), "node" + std::to_string(i)));
      agents.push_back(wrapped.back().get());
    }
  }
  absl::StatusOr<Plan> MakeAPlan() {
    v1::SweepParams p;
    p.add_sizes_bytes(65536);
    p.set_iterations(100);
    p.set_qps(1);
    return cluster.PlanFor(p, "host", {}, agents);
  }
  size_t Count(Kind kind) const {
    size_t n = 0;
    for (const auto& e : timeline.events()) n += e.kind == kind;
    return n;
  }

  FakeCluster cluster;
  NicTimeline timeline;
  std::vector<std::unique_ptr<AgentApi>> wrapped;
  std::vector<AgentApi*> agents;
};

RecordingOptions Slow(std::chrono::milliseconds open_wait) {
  RecordingOptions o;
  o.data_time = std::chrono::milliseconds(20);
  o.open_waits_for_data = open_wait;
  return o;
}

// Runs `plan` at 4 tests at once: every test OK, and what the agents saw
// kept NIC exclusivity (ValidateNicTimeline).
void RunEveryTestOkWithinTheBounds(Recorded& rec, const Plan& plan) {
  AgentPairTester tester(rec.agents, {});
  RunnerOptions ro;
  ro.parallelism = 4;
  size_t ok = 0;
  ro.on_result = [&](const v1::PairResult& r, const schedule::Test&) {
    ok += r.status() == v1::RESULT_STATUS_OK;
    return absl::OkStatus();
  };
  ASSERT_TRUE(SweepRunner(plan, tester, ro).Run().ok());
  EXPECT_EQ(ok, plan.schedule.tests());
  EXPECT_TRUE(ValidateNicTimeline(rec.timeline.events()).ok()) << ValidateNicTimeline(rec.timeline.events());
}

TEST(RunnerOverlap, NextRoundsTargetsOpenDuringDataAndNoNicCarriesTwoDataPhases) {
  Recorded rec(5, 2, Slow(std::chrono::milliseconds(300)));
  auto plan = rec.MakeAPlan();
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_GT(plan->schedule.rounds(), 2u);
  RunEveryTestOkWithinTheBounds(rec, *plan);
  // Every test after the second round had its target opened ahead, while
  // the round before moved data (the second round's are opened as the first
  // round's tests start: before or during their data).
  EXPECT_EQ(rec.timeline.opens(), plan->schedule.tests());
  EXPECT_GE(rec.timeline.OpensDuringData(),
            plan->schedule.tests() - plan->schedule.Round(0).size() - plan->schedule.Round(1).size());
  EXPECT_EQ(rec.cluster.open_targets(), 0);
  EXPECT_EQ(rec.Count(Kind::kOpenEnd), rec.Count(Kind::kCloseEnd));
}

// Fewer workers than tests in a round: a round runs in waves, every test of
// the next round still opened ahead, and no NIC over its bound.
TEST(RunnerOverlap, RoundsInWavesKeepTheBoundToo) {
  Recorded rec(7, 2, Slow(std::chrono::milliseconds(300)));
  auto plan = rec.MakeAPlan();
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_GT(plan->schedule.Round(1).size(), 2u);
  AgentPairTester tester(rec.agents, {});
  RunnerOptions ro;
  ro.parallelism = 2;
  ASSERT_TRUE(SweepRunner(*plan, tester, ro).Run().ok());
  EXPECT_TRUE(ValidateNicTimeline(rec.timeline.events()).ok()) << ValidateNicTimeline(rec.timeline.events());
  EXPECT_EQ(rec.timeline.opens(), plan->schedule.tests());
  EXPECT_GE(rec.timeline.OpensDuringData(),
            plan->schedule.tests() - plan->schedule.Round(0).size() - plan->schedule.Round(1).size());
  EXPECT_EQ(rec.cluster.open_targets(), 0);
}

// The measure above can fail: a runner that sets nothing up ahead opens every
// target between data phases.
TEST(RunnerOverlap, WithoutSetUpAheadNoTargetOpensDuringData) {
  Recorded rec(4, 1, Slow(std::chrono::milliseconds(30)));
  auto plan = rec.MakeAPlan();
  ASSERT_TRUE(plan.ok()) << plan.status();
  AgentPairTester tester(rec.agents, {});
  RunnerOptions ro;
  ro.parallelism = 1;
  ro.prepare_next_round = false;
  ASSERT_TRUE(SweepRunner(*plan, tester, ro).Run().ok());
  EXPECT_TRUE(ValidateNicTimeline(rec.timeline.events()).ok());
  EXPECT_EQ(rec.timeline.opens(), plan->schedule.tests());
  EXPECT_EQ(rec.timeline.OpensDuringData(), 0u);
}

// A deliberately broken ordering, run for real through the tester: two tests
// on one initiator NIC at once. The validator names the NIC.
TEST(NicTimelineValidator, CatchesTwoDataPhasesOnOneNic) {
  Recorded rec(3, 1, Slow(std::chrono::milliseconds(0)));
  auto plan = rec.MakeAPlan();
  ASSERT_TRUE(plan.ok()) << plan.status();
  AgentPairTester tester(rec.agents, {});
  auto run = [&](uint32_t dst) {
    PairTestSpec spec{&*plan, schedule::Test{0, dst, 0, false}, 0};
    v1::PairResult r;
    FillIdentity(spec, &r);
    tester.Run(spec, &r);
    EXPECT_EQ(r.status(), v1::RESULT_STATUS_OK) << r.reason();
  };
  std::thread a(run, 1), b(run, 2);
  a.join();
  b.join();
  absl::Status st = ValidateNicTimeline(rec.timeline.events());
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(st.message(), HasSubstr("NIC node0/nic0: data of "));
  EXPECT_THAT(st.message(), HasSubstr("while data of "));
}

TEST(NicTimelineValidator, CatchesAThirdTargetOnANicAndCountsOpensUnderWay) {
  NicTimeline ok;
  ok.Add(Kind::kOpenBegin, "n0/nic0", "open#0");
  ok.Add(Kind::kOpenEnd, "n0/nic0", "open#0", "t0");
  ok.Add(Kind::kDataBegin, "n0/nic0", "t0");
  ok.Add(Kind::kOpenBegin, "n0/nic0", "open#1");  // the next test's, ahead
  ok.Add(Kind::kOpenEnd, "n0/nic0", "open#1", "t1");
  ok.Add(Kind::kDataEnd, "n0/nic0", "t0");
  ok.Add(Kind::kCloseEnd, "n0/nic0", "t0");
  ok.Add(Kind::kOpenBegin, "n0/nic0", "open#2");
  ok.Add(Kind::kOpenFailed, "n0/nic0", "open#2");
  ok.Add(Kind::kDataBegin, "n0/nic0", "t1");
  EXPECT_TRUE(ValidateNicTimeline(ok.events()).ok()) << ValidateNicTimeline(ok.events());

  NicTimeline three;
  three.Add(Kind::kOpenBegin, "n0/nic0", "open#0");
  three.Add(Kind::kOpenEnd, "n0/nic0", "open#0", "t0");
  three.Add(Kind::kOpenBegin, "n0/nic0", "open#1");
  three.Add(Kind::kOpenEnd, "n0/nic0", "open#1", "t1");
  three.Add(Kind::kOpenBegin, "n0/nic0", "open#2");  // a second one ahead: over the bound
  absl::Status st = ValidateNicTimeline(three.events());
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(st.message(), HasSubstr("NIC n0/nic0 holds 3 targets (t0, t1, open#2 (opening)), more than 2"));

  NicTimeline overlap;
  overlap.Add(Kind::kDataBegin, "n1/nic1", "t0");
  overlap.Add(Kind::kDataBegin, "n1/nic1", "t1");
  EXPECT_THAT(ValidateNicTimeline(overlap.events()).message(),
              HasSubstr("NIC n1/nic1: data of t1 began while data of t0"));
}

// A set-up done ahead that failed is its own test's failure, with the agent's
// reason, and is retried as any.
TEST(RunnerOverlap, AFailedOpenAheadIsReportedAgainstItsTest) {
  Recorded rec(4, 1, Slow(std::chrono::milliseconds(300)));
  rec.cluster.SetOpenTargetError(2, absl::ResourceExhaustedError("out of pinned memory"));
  auto plan = rec.MakeAPlan();
  ASSERT_TRUE(plan.ok()) << plan.status();
  AgentPairTester tester(rec.agents, {});
  RunnerOptions ro;
  ro.parallelism = 2;
  ro.retries = 1;
  std::vector<v1::PairResult> results;
  ro.on_result = [&](const v1::PairResult& r, const schedule::Test&) {
    results.push_back(r);
    return absl::OkStatus();
  };
  ASSERT_TRUE(SweepRunner(*plan, tester, ro).Run().ok());
  ASSERT_EQ(results.size(), plan->schedule.tests());
  size_t failed = 0;
  for (const auto& r : results) {
    if (r.dst().node() != "node2") {
      EXPECT_EQ(r.status(), v1::RESULT_STATUS_OK) << r.reason();
      continue;
    }
    ++failed;
    EXPECT_EQ(r.status(), v1::RESULT_STATUS_ERROR);
    EXPECT_EQ(r.attempts(), 2u);
    EXPECT_THAT(r.reason(), HasSubstr("OpenTarget on node2: out of pinned memory"));
  }
  EXPECT_EQ(failed, 3u);
  // Some of those failures were opens ahead (during another test's data).
  size_t failed_ahead = 0;
  int data = 0;
  for (const auto& e : rec.timeline.events()) {
    if (e.kind == Kind::kDataBegin) ++data;
    if (e.kind == Kind::kDataEnd) --data;
    if (e.kind == Kind::kOpenFailed && data > 0) ++failed_ahead;
  }
  EXPECT_GT(failed_ahead, 0u);
  EXPECT_EQ(rec.cluster.open_targets(), 0);
}

// An agent that is full while this round's targets are open (its target
// count or memory limit) refuses the next round's ahead: the test then opens
// its own target when it runs, and passes at its first attempt.
class FullWhileSweeping final : public AgentApi {
 public:
  FullWhileSweeping(AgentApi* agent, std::atomic<int>* sweeping) : agent_(agent), sweeping_(sweeping) {}
  absl::StatusOr<v1::NodeInfo> GetNodeInfo() override { return agent_->GetNodeInfo(); }
  absl::StatusOr<v1::PreflightReport> RunPreflight(const v1::RunPreflightRequest& r) override {
    return agent_->RunPreflight(r);
  }
  // Once tests have run, an open waits (up to 100 ms) for a data phase and
  // is refused during one: the opens ahead are refused, deterministically.
  absl::Status OpenTarget(const v1::OpenTargetRequest& r, v1::OpenTargetResponse* resp) override {
    for (int i = 0; i < 100 && began_.load() && sweeping_->load() == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (sweeping_->load() > 0) {
      refused_.fetch_add(1);
      return absl::ResourceExhaustedError("this agent already holds 64 targets");
    }
    return agent_->OpenTarget(r, resp);
  }
  static int refused() { return refused_.load(); }
  absl::Status RunWriteSweep(const v1::RunWriteSweepRequest& r, std::chrono::milliseconds timeout,
                             const std::function<bool(v1::RunWriteSweepResponse&)>& on_message) override {
    sweeping_->fetch_add(1);
    began_.store(true);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    absl::Status st = agent_->RunWriteSweep(r, timeout, on_message);
    sweeping_->fetch_sub(1);
    return st;
  }
  absl::StatusOr<v1::VerifyTargetResponse> VerifyTarget(const v1::VerifyTargetRequest& r) override {
    return agent_->VerifyTarget(r);
  }
  absl::StatusOr<v1::CloseTargetResponse> CloseTarget(const std::string& id) override {
    return agent_->CloseTarget(id);
  }

 private:
  AgentApi* agent_;
  std::atomic<int>* sweeping_;
  static inline std::atomic<bool> began_{false};
  static inline std::atomic<int> refused_{0};
};

TEST(RunnerOverlap, AnAgentFullAheadLetsTheTestOpenItsOwnTarget) {
  Recorded rec(4, 1, Slow(std::chrono::milliseconds(0)));
  std::atomic<int> sweeping{0};
  std::vector<std::unique_ptr<AgentApi>> full;
  std::vector<AgentApi*> agents;
  for (AgentApi* a : rec.agents) {
    full.push_back(std::make_unique<FullWhileSweeping>(a, &sweeping));
    agents.push_back(full.back().get());
  }
  auto plan = rec.MakeAPlan();
  ASSERT_TRUE(plan.ok()) << plan.status();
  AgentPairTester tester(agents, {});
  RunnerOptions ro;
  ro.parallelism = 1;
  ro.retries = 0;
  size_t ok = 0;
  ro.on_result = [&](const v1::PairResult& r, const schedule::Test&) {
    ok += r.status() == v1::RESULT_STATUS_OK && r.attempts() == 1;
    return absl::OkStatus();
  };
  ASSERT_TRUE(SweepRunner(*plan, tester, ro).Run().ok());
  EXPECT_EQ(ok, plan->schedule.tests());
  EXPECT_GT(FullWhileSweeping::refused(), 0);
  EXPECT_EQ(rec.cluster.open_targets(), 0);
}

// Agents that hold a target's start (hold_start): the next round's
// initiators connect ahead too, during this round's data, and wait for their
// start; still no NIC carries two data phases, nor more than two targets or
// two initiator connections, and nothing is left held or open.
TEST(RunnerOverlap, InitiatorsConnectAheadAndDataPhasesStillNeverShareANic) {
  Recorded rec(5, 2, Slow(std::chrono::milliseconds(300)));
  rec.cluster.SetHoldsStart(true);
  auto plan = rec.MakeAPlan();
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_GT(plan->schedule.rounds(), 2u);
  RunEveryTestOkWithinTheBounds(rec, *plan);
  const size_t ahead =
      plan->schedule.tests() - plan->schedule.Round(0).size() - plan->schedule.Round(1).size();
  EXPECT_GE(rec.timeline.held_connects(), ahead);
  EXPECT_GE(rec.timeline.HeldConnectsDuringData(), ahead);
  EXPECT_EQ(rec.Count(Kind::kDataBegin), 2 * plan->schedule.tests());
  EXPECT_EQ(rec.cluster.open_targets(), 0);
  EXPECT_EQ(rec.cluster.held_targets(), 0u);
}

// The validator over what a runner did can fail: two tests prepared ahead on
// one initiator NIC and both started at once, as a runner that ignored the
// NIC's data phase before would. It names the NIC.
TEST(NicTimelineValidator, CatchesTwoHeldTestsStartedTogetherOnOneNic) {
  // Data phases long enough to overlap however late the second thread is
  // scheduled (20 ms did not, on a loaded host).
  RecordingOptions long_data = Slow(std::chrono::milliseconds(0));
  long_data.data_time = std::chrono::milliseconds(500);
  Recorded rec(3, 1, long_data);
  rec.cluster.SetHoldsStart(true);
  auto plan = rec.MakeAPlan();
  ASSERT_TRUE(plan.ok()) << plan.status();
  AgentPairTester tester(rec.agents, {});
  PairTestSpec a{&*plan, schedule::Test{0, 1, 0, false}, 0}, b{&*plan, schedule::Test{0, 2, 0, false}, 0};
  auto pa = tester.Prepare(a);
  auto pb = tester.Prepare(b);
  ASSERT_NE(pa, nullptr);
  ASSERT_NE(pb, nullptr);
  for (int i = 0; i < 1000 && rec.timeline.held_connects() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));  // the held calls' threads begin
  }
  EXPECT_EQ(rec.timeline.held_connects(), 2u);
  EXPECT_EQ(rec.Count(Kind::kDataBegin), 0u) << "a held initiator moved data before its start";
  auto run = [&](const PairTestSpec& spec, std::unique_ptr<PreparedTest> p) {
    v1::PairResult r;
    FillIdentity(spec, &r);
    tester.RunPrepared(spec, std::move(p), &r);
    EXPECT_EQ(r.status(), v1::RESULT_STATUS_OK) << r.reason();
  };
  std::thread ta(run, a, std::move(pa)), tb(run, b, std::move(pb));
  ta.join();
  tb.join();
  absl::Status st = ValidateNicTimeline(rec.timeline.events());
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(st.message(), HasSubstr("NIC node0/nic0: data of "));
  EXPECT_EQ(rec.cluster.open_targets(), 0);
}

TEST(NicTimelineValidator, CatchesAThirdInitiatorConnectionOnANic) {
  NicTimeline tl;
  tl.Add(Kind::kConnectBegin, "n0/nic0", "t0");
  tl.Add(Kind::kConnectBegin, "n0/nic0", "t1");  // the next test's, ahead
  EXPECT_TRUE(ValidateNicTimeline(tl.events()).ok());
  tl.Add(Kind::kConnectBegin, "n0/nic0", "t2");
  EXPECT_THAT(ValidateNicTimeline(tl.events()).message(),
              HasSubstr("NIC n0/nic0 carries 3 initiator connections (t0, t1, t2), more than 2"));
}

// Runs `plan` one test at a time, cancelled as the first result comes in.
absl::Status RunCancelledAtTheFirstResult(Recorded& rec, const Plan& plan) {
  AgentPairTester tester(rec.agents, {});
  CancelToken cancel;
  RunnerOptions ro;
  ro.parallelism = 1;
  ro.cancel = &cancel;
  ro.on_result = [&](const v1::PairResult&, const schedule::Test&) {
    cancel.Cancel();
    return absl::OkStatus();
  };
  return SweepRunner(plan, tester, ro).Run();
}

// Cancelled with initiators held ahead: they are stopped (no data moves),
// their targets closed, and none is left held.
TEST(RunnerOverlap, CancelStopsTheInitiatorsHeldAhead) {
  Recorded rec(6, 1, Slow(std::chrono::milliseconds(300)));
  rec.cluster.SetHoldsStart(true);
  auto plan = rec.MakeAPlan();
  ASSERT_TRUE(plan.ok()) << plan.status();
  absl::Status st = RunCancelledAtTheFirstResult(rec, *plan);
  EXPECT_EQ(st.code(), absl::StatusCode::kCancelled) << st;
  EXPECT_TRUE(ValidateNicTimeline(rec.timeline.events()).ok());
  EXPECT_EQ(rec.Count(Kind::kDataBegin), 2u);  // the one test that ran
  EXPECT_GT(rec.timeline.held_connects(), 0u);
  EXPECT_EQ(rec.Count(Kind::kConnectBegin), rec.Count(Kind::kConnectEnd));
  EXPECT_EQ(rec.cluster.open_targets(), 0);
  EXPECT_EQ(rec.cluster.held_targets(), 0u);
}

// Cancelled during a round: the next round's targets, opened ahead, are
// closed without moving data; none is left on the agents.
TEST(RunnerOverlap, CancelClosesTheTargetsOpenedAhead) {
  Recorded rec(6, 1, Slow(std::chrono::milliseconds(300)));
  auto plan = rec.MakeAPlan();
  ASSERT_TRUE(plan.ok()) << plan.status();
  absl::Status st = RunCancelledAtTheFirstResult(rec, *plan);
  EXPECT_EQ(st.code(), absl::StatusCode::kCancelled) << st;
  EXPECT_EQ(rec.cluster.open_targets(), 0);
  EXPECT_TRUE(ValidateNicTimeline(rec.timeline.events()).ok());
  // One test ran; the next round's targets were opened during its data and
  // closed unused.
  EXPECT_EQ(rec.Count(Kind::kDataBegin), 2u);
  EXPECT_GT(rec.Count(Kind::kOpenEnd), 1u);
  EXPECT_EQ(rec.Count(Kind::kOpenEnd), rec.Count(Kind::kCloseEnd));
}

}  // namespace
}  // namespace gdrbench::controller::run
