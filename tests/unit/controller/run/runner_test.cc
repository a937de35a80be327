#include "controller/run/runner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <set>
#include <thread>

#include "controller/run/clear_keeping.h"
#include "controller/run/probe.h"
#include "controller/run/testing/fake_cluster.h"
#include "tests/unit/controller/run/unimplemented_agent.h"

namespace gdrbench::controller::run {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

inventory::Inventory Inv(uint32_t n) {
  inventory::Inventory inv;
  for (uint32_t i = 0; i < n; ++i) {
    inv.nodes.push_back({"node" + std::to_string(i), "fake" + std::to_string(i) + ":1", {}, 0, 0});
  }
  return inv;
}

v1::SweepParams Params() {
  v1::SweepParams p;
  p.add_sizes_bytes(65536);
  p.set_iterations(100);
  p.set_qps(1);
  return p;
}

absl::StatusOr<Plan> PlanFor(FakeCluster& c, const ProbeOptions& po = {},
                             ProbeResult* probe_out = nullptr) {
  ProbeResult probe = ProbeNodes(Inv(c.size()), c.agents(), po);
  if (probe_out) *probe_out = probe;
  return MakePlan(probe.nodes, "host", {}, Params());
}

// The runner reuses a result for the next test of its worker; its endpoints
// keep their identity strings and FillIdentity sets only what differs. A
// reused result must be the one a fresh FillIdentity makes: nothing of the
// test before survives (what the agents reported, sizes, summary, status).
TEST(Runner, AReusedResultCarriesNothingOfTheTestBefore) {
  FakeCluster c(4, 3, 200);
  auto plan = PlanFor(c);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const std::vector<schedule::Test> tests = {{0, 1, 0, false}, {0, 1, 2, false}, {2, 3, 1, true},
                                             {3, 0, 0, false}, {1, 2, 2, false}, {0, 1, 2, false}};
  v1::PairResult reused;
  for (size_t i = 0; i < tests.size(); ++i) {
    const PairTestSpec spec{&*plan, tests[i], static_cast<uint32_t>(i)};
    ReadyForNextTest(&reused);
    FillIdentity(spec, &reused);
    v1::PairResult fresh;
    FillIdentity(spec, &fresh);
    EXPECT_EQ(reused.SerializeAsString(), fresh.SerializeAsString())
        << "test " << i << ":\n" << reused.DebugString() << "fresh:\n" << fresh.DebugString();
    // What a test writes, for the next one to drop.
    reused.set_status(v1::RESULT_STATUS_FAILED);
    reused.set_reason("x");
    reused.add_sizes()->set_bw_avg_gbps(1);
    reused.mutable_summary()->set_device("nic9");
    reused.mutable_started_at()->set_seconds(5);
    reused.mutable_src()->set_memory_kind("gpu");
    reused.mutable_dst()->set_registration("peermem");
    reused.add_memory_halves()->set_rail(3);
  }
}

TEST(Probe, DiscoversRailsAndLinkRatesFromTheAgents) {
  FakeCluster c(3, 2, 200);
  auto probe = ProbeNodes(Inv(3), c.agents(), {});
  ASSERT_EQ(probe.nodes.size(), 3u);
  ASSERT_EQ(probe.nodes[1].rails.size(), 2u);
  EXPECT_EQ(probe.nodes[1].rails[1].nic, "nic1");
  EXPECT_EQ(*probe.nodes[1].rails[1].gpu, 1u);
  EXPECT_EQ(probe.nodes[1].rail_gbps[0], 200);
  EXPECT_FALSE(probe.nodes[1].excluded);
}

TEST(Probe, LeavesOutPreflightFailuresUnlessForced) {
  FakeCluster c(4, 1, 100);
  c.SetPreflight(2, v1::CHECK_STATUS_FAIL);
  c.SetDown(3, true);
  auto probe = ProbeNodes(Inv(4), c.agents(), {});
  EXPECT_TRUE(probe.nodes[2].excluded);
  EXPECT_THAT(probe.nodes[2].excluded_reason, HasSubstr("preflight FAIL (fake_check)"));
  EXPECT_TRUE(probe.nodes[3].excluded);
  EXPECT_THAT(probe.nodes[3].excluded_reason, HasSubstr("unreachable"));
  ProbeOptions force;
  force.force = true;
  auto forced = ProbeNodes(Inv(4), c.agents(), force);
  EXPECT_FALSE(forced.nodes[2].excluded);
  EXPECT_TRUE(forced.nodes[3].excluded);  // force cannot reach a dead agent
}

// The agent_reachable check's remedy is the one for its cause: a refused
// connection is an agent to start, a timeout is not a certificate. The
// timeout's words are AgentClient::Connected's (agent_client.cc).
TEST(Probe, AnUnreachableAgentsRemedyIsTheOneForItsCause) {
  FakeCluster c(3, 1, 100);
  c.SetDown(1, true);
  c.SetDown(
      2, true,
      absl::UnavailableError("agent fake2:1 unreachable: gRPC made no connection within 3000 ms, though "
                             "this controller's own connection to it succeeded right after: timed out, "
                             "the agent or this host is overloaded (lower --parallel, or check the "
                             "agent's load)"));
  auto probe = ProbeNodes(Inv(3), c.agents(), {});
  auto remedy = [&](uint32_t node) {
    for (const auto& check : probe.preflight[node].checks()) {
      if (check.id() == "agent_reachable") return check.remediation();
    }
    return std::string("no agent_reachable check");
  };
  EXPECT_THAT(remedy(1), HasSubstr("start gdrbench-agent"));
  EXPECT_THAT(remedy(2), HasSubstr("not overloaded"));
  EXPECT_THAT(remedy(2), Not(HasSubstr("TLS")));
  EXPECT_THAT(remedy(2), HasSubstr("fake2"));
}

TEST(Runner, AllPairsFillsEveryCellAndClosesEveryTarget) {
  FakeCluster c(5, 2, 100);
  auto plan = PlanFor(c);
  ASSERT_TRUE(plan.ok()) << plan.status();
  AgentPairTester tester(c.agents(), {});
  std::vector<v1::PairResult> results;
  RunnerOptions ro;
  ro.parallelism = 4;
  ro.on_result = [&](const v1::PairResult& r, const schedule::Test&) {
    results.push_back(r);
    return absl::OkStatus();
  };
  Progress last;
  ro.on_progress = [&](const Progress& p) { last = p; };
  SweepRunner runner(*plan, tester, ro);
  ASSERT_TRUE(runner.Run().ok());
  EXPECT_EQ(results.size(), 5u * 4 * 2);
  std::set<std::string> keys;
  for (const auto& r : results) {
    EXPECT_EQ(r.status(), v1::RESULT_STATUS_OK) << r.reason();
    EXPECT_EQ(r.attempts(), 1u);
    EXPECT_EQ(r.expected_gbps(), 100);
    EXPECT_EQ(r.src().nic_device(), "nic" + std::to_string(r.rail()));
    keys.insert(TestKey(r));
  }
  EXPECT_EQ(keys.size(), results.size());
  EXPECT_EQ(c.open_targets(), 0);
  EXPECT_EQ(last.tests_done, results.size());
  EXPECT_EQ(last.tests_total, results.size());
  EXPECT_EQ(last.eta_s, 0);
}

// Results a worker could not hand over at once (the other held the lock)
// wait in that worker: every one still arrives, whole, before the next round
// starts, and the concurrent callback names the plan's nodes by index.
TEST(Runner, QueuedResultsArriveWholeAndBeforeTheNextRound) {
  FakeCluster c(9, 2, 100);
  auto plan = PlanFor(c);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_GT(plan->schedule.rounds(), 2u);
  AgentPairTester tester(c.agents(), {});
  std::vector<std::string> keys;
  uint32_t last_round = 0;
  bool out_of_round = false;
  std::atomic<int> mismatched{0};
  RunnerOptions ro;
  ro.parallelism = 4;
  ro.on_result_concurrent = [&](const v1::PairResult& r, const schedule::Test& t) {
    if (r.src().node() != plan->nodes[t.src].name || r.dst().node() != plan->nodes[t.dst].name) ++mismatched;
    return absl::OkStatus();
  };
  ro.on_result = [&](const v1::PairResult& r, const schedule::Test&) {
    out_of_round |= r.round() < last_round;
    last_round = r.round();
    // Slow enough that the other workers find the lock taken and queue.
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    keys.push_back(TestKey(r));
    return absl::OkStatus();
  };
  ASSERT_TRUE(SweepRunner(*plan, tester, ro).Run().ok());
  EXPECT_EQ(keys.size(), plan->schedule.tests());
  EXPECT_EQ(std::set<std::string>(keys.begin(), keys.end()).size(), keys.size());
  EXPECT_FALSE(out_of_round);
  EXPECT_EQ(mismatched.load(), 0);
}

TEST(Runner, AFailedPairIsACellNotAnAbortedSweepAndIsRetried) {
  FakeCluster c(4, 1, 100);
  c.SetOpenTargetError(1, absl::ResourceExhaustedError("OpenTarget: out of pinned memory"));
  auto plan = PlanFor(c);
  ASSERT_TRUE(plan.ok());
  AgentPairTester tester(c.agents(), {});
  std::vector<v1::PairResult> results;
  RunnerOptions ro;
  ro.retries = 2;
  ro.on_result = [&](const v1::PairResult& r, const schedule::Test&) {
    results.push_back(r);
    return absl::OkStatus();
  };
  ASSERT_TRUE(SweepRunner(*plan, tester, ro).Run().ok());
  ASSERT_EQ(results.size(), 12u);
  int failed = 0;
  for (const auto& r : results) {
    if (r.dst().node() == "node1") {
      ++failed;
      EXPECT_EQ(r.status(), v1::RESULT_STATUS_ERROR);
      EXPECT_EQ(r.attempts(), 3u);
      EXPECT_THAT(r.reason(), HasSubstr("OpenTarget on node1: OpenTarget: out of pinned memory"));
    } else {
      EXPECT_EQ(r.status(), v1::RESULT_STATUS_OK);
    }
  }
  EXPECT_EQ(failed, 3);
}

TEST(Runner, ADeadAgentFailsItsCellsFastWithTheReason) {
  FakeCluster c(4, 1, 100);
  auto plan = PlanFor(c);
  ASSERT_TRUE(plan.ok());
  c.SetDown(2, true);  // dies after the probe
  AgentPairTester tester(c.agents(), {});
  std::vector<v1::PairResult> results;
  RunnerOptions ro;
  ro.parallelism = 1;
  ro.on_result = [&](const v1::PairResult& r, const schedule::Test&) {
    results.push_back(r);
    return absl::OkStatus();
  };
  ASSERT_TRUE(SweepRunner(*plan, tester, ro).Run().ok());
  for (const auto& r : results) {
    bool involves = r.src().node() == "node2" || r.dst().node() == "node2";
    EXPECT_EQ(r.status() == v1::RESULT_STATUS_OK, !involves) << r.reason();
    if (involves) {
      EXPECT_THAT(r.reason(), HasSubstr("unreachable"));
    }
  }
  // 6 tests touch node2 with 2 attempts each; after 2 UNAVAILABLE answers the
  // agent counts as down and its later tests cost no RPC.
  EXPECT_LT(c.rpcs(), 4u * 3 * 4 + 10);
}

TEST(Runner, ExcludedNodesBecomeSkippedCells) {
  FakeCluster c(3, 1, 100);
  c.SetPreflight(0, v1::CHECK_STATUS_FAIL);
  auto plan = PlanFor(c);
  ASSERT_TRUE(plan.ok());
  AgentPairTester tester(c.agents(), {});
  int skipped = 0;
  RunnerOptions ro;
  ro.on_result = [&](const v1::PairResult& r, const schedule::Test&) {
    if (r.status() == v1::RESULT_STATUS_SKIPPED) {
      ++skipped;
      EXPECT_THAT(r.reason(), HasSubstr("node0 left out: preflight FAIL"));
    }
    return absl::OkStatus();
  };
  ASSERT_TRUE(SweepRunner(*plan, tester, ro).Run().ok());
  EXPECT_EQ(skipped, 4);
  EXPECT_EQ(c.sweeps(), 2u);
}

TEST(Plan, FingerprintChangesWithThePlan) {
  FakeCluster c(4, 1, 100);
  auto a = PlanFor(c);
  auto b = PlanFor(c);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->fingerprint, b->fingerprint);
  v1::SweepParams p = Params();
  p.set_iterations(101);
  auto d = MakePlan(a->nodes, "host", {}, p);
  EXPECT_NE(d->fingerprint, a->fingerprint);
  auto g = MakePlan(a->nodes, "gpu", {}, Params());
  ASSERT_TRUE(g.ok()) << g.status();  // the fake's rails carry GPUs
  EXPECT_EQ(EndpointMemory(g->nodes[0], 0, "gpu"), "gpu:0");
  std::vector<PlanNode> no_gpu = a->nodes;
  no_gpu[1].rails[0].gpu.reset();
  auto bad = MakePlan(no_gpu, "gpu", {}, Params());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("node1 has no GPU"));
  // A node left out (its agent unreachable) is reported for that, not for its rails.
  no_gpu[1].excluded = true;
  no_gpu[1].excluded_reason = "agent unreachable";
  EXPECT_TRUE(MakePlan(no_gpu, "gpu", {}, Params()).ok());
  EXPECT_TRUE(MakePlan(no_gpu, "host,gpu", {}, Params()).ok());
}

}  // namespace
}  // namespace gdrbench::controller::run

namespace gdrbench::controller::run {
namespace {

// A DGX A100's GetNodeInfo as agent/topology fills it: the rail map holds the
// 8 compute HCAs; the storage HCAs are NICs with active ports but no rail.
v1::NodeInfo DgxA100Info() {
  v1::NodeInfo info;
  const char* nics[] = {"mlx5_0", "mlx5_1", "mlx5_10", "mlx5_11", "mlx5_2", "mlx5_3",
                        "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_7", "mlx5_8", "mlx5_9"};
  for (const char* n : nics) {
    auto* nic = info.add_nics();
    nic->set_device(n);
    nic->add_ports()->set_port_state(v1::PORT_STATE_ACTIVE);
  }
  int gpu = 0;
  for (const char* n : {"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3", "mlx5_6", "mlx5_7", "mlx5_8", "mlx5_9"}) {
    auto* r = info.add_rails();
    r->set_nic_device(n);
    r->set_gpu_index(gpu++);
  }
  return info;
}

TEST(Probe, DefaultNicsAreTheGpuRailsAllAddsTheOthersWithoutAGpu) {
  auto rails = RailsFromNodeInfo(DgxA100Info());
  ASSERT_EQ(rails.size(), 8u);
  EXPECT_EQ(rails[0].nic, "mlx5_0");
  EXPECT_EQ(rails[7].nic, "mlx5_9");
  for (const auto& r : rails) EXPECT_TRUE(r.gpu.has_value()) << r.nic;
  auto all = RailsFromNodeInfo(DgxA100Info(), /*all_nics=*/true);
  ASSERT_EQ(all.size(), 12u);
  EXPECT_EQ(all[7].nic, "mlx5_9");  // the GPU rails first, in rail-map order
  std::vector<std::string> others;
  for (size_t i = 8; i < all.size(); ++i) {
    others.push_back(all[i].nic);
    EXPECT_FALSE(all[i].gpu.has_value()) << all[i].nic;  // tested with host memory
  }
  EXPECT_THAT(others, ::testing::ElementsAre("mlx5_10", "mlx5_11", "mlx5_4", "mlx5_5"));
}

// An agent that records what the controller asks its preflight.
class RecordingAgent : public UnimplementedAgent {
 public:
  v1::RunPreflightRequest last;
  absl::StatusOr<v1::NodeInfo> GetNodeInfo() override { return DgxA100Info(); }
  absl::StatusOr<v1::PreflightReport> RunPreflight(const v1::RunPreflightRequest& request) override {
    last = request;
    v1::PreflightReport r;
    r.set_overall(v1::CHECK_STATUS_PASS);
    return r;
  }
};

TEST(Probe, RailsTheInventoryNamesAreSentToThePreflight) {
  inventory::Inventory inv;
  inv.nodes.push_back({"a", "a:1", {{"mlx5_0", 0}, {"mlx5_4", std::nullopt}}});
  inv.nodes.push_back({"b", "b:1", {}});
  RecordingAgent named, discovered;
  auto probe = ProbeNodes(inv, {&named, &discovered}, {});
  EXPECT_THAT(named.last.expectations().rail_nics(), ::testing::ElementsAre("mlx5_0", "mlx5_4"));
  EXPECT_TRUE(discovered.last.expectations().rail_nics().empty());
  EXPECT_EQ(probe.nodes[1].rails.size(), 8u);
}

}  // namespace
}  // namespace gdrbench::controller::run

namespace gdrbench::controller::run {
namespace {

TEST(ClearKeeping, ClearsLikeClearButKeepsTheNamedSubMessagesAllocated) {
  v1::PairResult r;
  r.mutable_src()->set_node("node1");
  r.mutable_src()->set_memory_kind("gpu");
  r.mutable_dst()->set_node("node2");
  r.set_reason("boom");
  r.add_sizes()->set_size_bytes(65536);
  r.mutable_summary()->set_device("nic0");
  r.mutable_started_at()->set_seconds(7);
  r.set_attempts(2);
  const v1::Endpoint* src = &r.src();
  ClearKeeping(&r, Keep{&v1::PairResult::release_src, &v1::PairResult::set_allocated_src},
               Keep{&v1::PairResult::release_dst, &v1::PairResult::set_allocated_dst});
  EXPECT_EQ(&r.src(), src);  // the same object, not a new one
  EXPECT_TRUE(r.has_src());
  EXPECT_TRUE(r.has_dst());
  EXPECT_EQ(r.src().ByteSizeLong(), 0u);
  EXPECT_EQ(r.dst().ByteSizeLong(), 0u);
  EXPECT_FALSE(r.has_summary());
  EXPECT_FALSE(r.has_started_at());
  EXPECT_EQ(r.sizes_size(), 0);
  EXPECT_EQ(r.reason(), "");
  EXPECT_EQ(r.attempts(), 0u);
  v1::PairResult fresh;
  ClearKeeping(&fresh, Keep{&v1::PairResult::release_summary, &v1::PairResult::set_allocated_summary});
  EXPECT_FALSE(fresh.has_summary());  // not allocated before: stays absent
}

// The runner reuses one result per thread: a failed test must leave nothing
// in the next one, and a passing one nothing in a failed one.
TEST(Runner, AReusedResultCarriesNothingFromTheTestBefore) {
  FakeCluster c(4, 1, 100);
  c.SetOpenTargetError(2, absl::UnavailableError("target refused"));
  auto plan = PlanFor(c);
  ASSERT_TRUE(plan.ok()) << plan.status();
  // node2's refusals are UNAVAILABLE: with the next round's targets opened
  // ahead, two of them can come one after the other and take node2 as down,
  // failing its own tests as initiator too. That rule is not what this test
  // is about: off.
  AgentPairTesterOptions to;
  to.down_after_unavailable = 0;
  AgentPairTester tester(c.agents(), to);
  RunnerOptions ro;
  ro.parallelism = 1;  // every test on the same thread, one after the other
  ro.retries = 0;
  std::vector<v1::PairResult> got;
  ro.on_result = [&](const v1::PairResult& r, const schedule::Test&) {
    got.push_back(r);
    return absl::OkStatus();
  };
  ASSERT_TRUE(SweepRunner(*plan, tester, ro).Run().ok());
  ASSERT_EQ(got.size(), 12u);
  size_t failed = 0;
  for (const auto& r : got) {
    SCOPED_TRACE(r.DebugString());
    if (r.dst().node() == "node2") {
      ++failed;
      EXPECT_EQ(r.status(), v1::RESULT_STATUS_ERROR);
      EXPECT_THAT(r.reason(), HasSubstr("target refused"));
      EXPECT_FALSE(r.has_summary());
      EXPECT_EQ(r.sizes_size(), 0);
      EXPECT_EQ(r.src().memory_kind(), "");  // the summary's: there was none
    } else {
      EXPECT_EQ(r.status(), v1::RESULT_STATUS_OK);
      EXPECT_EQ(r.reason(), "");
      EXPECT_TRUE(r.has_summary());
      EXPECT_EQ(r.sizes_size(), 1);
      EXPECT_EQ(r.src().memory_kind(), "host");  // the fake's summary
    }
    EXPECT_EQ(r.attempts(), 1u);
  }
  EXPECT_EQ(failed, 3u);
}

}  // namespace
}  // namespace gdrbench::controller::run
