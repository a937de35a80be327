// The outlier retest's rounds: built with schedule::PackRounds, so they keep
// the invariant every schedule keeps, GPUs included.
#include "controller/sweep/retest.h"

#include <set>
#include <tuple>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "controller/analysis/verdicts.h"

namespace gdrbench::controller::sweep {
namespace {

// `n` nodes whose rails' GPUs are `rail_gpu` (one rail per entry).
run::Plan MakeTestPlan(uint32_t n, std::vector<int> rail_gpu, const std::string& memory,
                       bool bidirectional = false, uint32_t cap = 0, uint32_t fan_in = 0) {
  std::vector<run::PlanNode> nodes(n);
  for (uint32_t i = 0; i < n; ++i) {
    nodes[i].name = "node" + std::to_string(i);
    for (size_t r = 0; r < rail_gpu.size(); ++r) {
      inventory::Rail rail{"mlx5_" + std::to_string(r), std::nullopt};
      if (rail_gpu[r] >= 0) rail.gpu = static_cast<uint32_t>(rail_gpu[r]);
      nodes[i].rails.push_back(rail);
      nodes[i].rail_gbps.push_back(100);
    }
  }
  schedule::ScheduleOptions o;
  o.bidirectional = bidirectional;
  o.max_concurrent = cap;
  if (fan_in > 0) {
    o.mode = schedule::Mode::kIncast;
    o.fan_in = fan_in;
  }
  v1::SweepParams p;
  p.add_sizes_bytes(65536);
  auto plan = run::MakePlan(std::move(nodes), memory, o, p);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return *plan;
}

v1::PairResult Result(uint32_t src, uint32_t dst, uint32_t rail, double gbps) {
  v1::PairResult r;
  r.mutable_src()->set_node("node" + std::to_string(src));
  r.mutable_dst()->set_node("node" + std::to_string(dst));
  r.set_rail(rail);
  r.set_status(v1::RESULT_STATUS_OK);
  r.set_expected_gbps(100);
  auto* s = r.add_sizes();
  s->set_size_bytes(65536);
  s->set_bw_avg_gbps(gbps);
  s->set_status(v1::RESULT_STATUS_OK);
  return r;
}

// Every scheduled test at 95 Gb/s except the (src, dst, rail) listed low.
analysis::MatrixSet Judged(const run::Plan& plan,
                           const std::vector<std::tuple<uint32_t, uint32_t, uint32_t>>& low) {
  std::vector<std::string> names;
  for (const auto& n : plan.nodes) names.push_back(n.name);
  analysis::MatrixSet set(names, plan.schedule_options.bidirectional);
  for (const auto& t : plan.schedule.AllTests()) {
    bool is_low = false;
    for (const auto& [s, d, r] : low) is_low |= s == t.src && d == t.dst && r == t.rail;
    set.Add(Result(t.src, t.dst, t.rail, is_low ? 40 : 95));
  }
  v1::VerdictPolicy policy = analysis::DefaultPolicy();
  policy.set_mad_k(0);  // absolute only: 40 of 100 is low
  analysis::Judge(set, policy, nullptr, {});
  return set;
}

// The case the CLI's own packing got wrong: it kept NICs apart but not GPUs,
// so rails 0 and 1 of a node (both moving GPU 0's memory) were retested in
// one round and with --memory gpu one GPU was in two tests at once.
TEST(Retest, AGpuSharedByTwoRailsIsNeverInTwoTestsOfARound) {
  run::Plan plan = MakeTestPlan(4, {0, 0}, "gpu");
  analysis::MatrixSet set = Judged(plan, {{0, 1, 0}, {0, 1, 1}});
  auto s = RetestSchedule(set, plan);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->tests(), 2u);
  EXPECT_TRUE(schedule::ValidateSchedule(*s, run::Shapes(plan.nodes, plan.memory)).ok())
      << schedule::ValidateSchedule(*s, run::Shapes(plan.nodes, plan.memory));
  EXPECT_EQ(s->rounds(), 2u);
}

TEST(Retest, WithHostMemoryTheRailsOfAPairShareARound) {
  run::Plan plan = MakeTestPlan(4, {0, 0}, "host");
  analysis::MatrixSet set = Judged(plan, {{0, 1, 0}, {0, 1, 1}});
  auto s = RetestSchedule(set, plan);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->rounds(), 1u);
  EXPECT_EQ(s->tests(), 2u);
}

TEST(Retest, ANicInTwoLowCellsIsRetestedInTwoRoundsAndTheCapHolds) {
  run::Plan plan = MakeTestPlan(6, {-1}, "host", false, 1);
  analysis::MatrixSet set = Judged(plan, {{0, 1, 0}, {2, 1, 0}, {3, 4, 0}});
  auto s = RetestSchedule(set, plan);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->tests(), 3u);
  EXPECT_EQ(s->rounds(), 3u);  // the cap of 1
  EXPECT_TRUE(schedule::ValidateSchedule(*s, run::Shapes(plan.nodes, plan.memory)).ok());
}

TEST(Retest, BidirectionalReRunsTheScheduledTestOfAReverseCell) {
  run::Plan plan = MakeTestPlan(4, {-1}, "host", true);
  // The scheduled test that covers the pair {1, 2}, whichever way it ran.
  schedule::Test covering{};
  for (const auto& t : plan.schedule.AllTests()) {
    if ((t.src == 1 && t.dst == 2) || (t.src == 2 && t.dst == 1)) covering = t;
  }
  std::vector<std::string> names;
  for (const auto& n : plan.nodes) names.push_back(n.name);
  analysis::MatrixSet set(names, true);
  for (const auto& t : plan.schedule.AllTests()) {
    v1::PairResult r = Result(t.src, t.dst, 0, 95);
    auto* rev = r.add_reverse_sizes();  // the target's direction
    rev->set_size_bytes(65536);
    rev->set_status(v1::RESULT_STATUS_OK);
    rev->set_bw_avg_gbps(t.src == covering.src && t.dst == covering.dst ? 40 : 95);
    set.Add(r);
  }
  v1::VerdictPolicy policy = analysis::DefaultPolicy();
  policy.set_mad_k(0);
  analysis::Judge(set, policy, nullptr, {});
  std::vector<schedule::Test> tests = RetestTests(set, plan);
  ASSERT_EQ(tests.size(), 1u);
  EXPECT_EQ(tests[0].src, covering.src);  // the low cell is (dst, src): the same test again
  EXPECT_EQ(tests[0].dst, covering.dst);
  EXPECT_TRUE(tests[0].bidirectional);
}

// Incast: a low cell's bandwidth depends on its co-senders, so the retest
// re-runs its whole group (the K senders into that target) in one round, and
// only that group.
TEST(Retest, IncastRetestsTheLowCellsWholeGroupInOneRound) {
  run::Plan plan = MakeTestPlan(6, {-1}, "host", false, 0, /*fan_in=*/2);
  // Target 3 is written by 4 and 5; 4 -> 3 is low.
  analysis::MatrixSet set = Judged(plan, {{4, 3, 0}});
  auto s = RetestSchedule(set, plan);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->rounds(), 1u);
  std::set<std::pair<uint32_t, uint32_t>> got;
  for (const auto& t : s->Round(0)) got.insert({t.src, t.dst});
  EXPECT_EQ(got, (std::set<std::pair<uint32_t, uint32_t>>{{4, 3}, {5, 3}}));
  EXPECT_TRUE(schedule::ValidateSchedule(*s, run::Shapes(plan.nodes, plan.memory), 2).ok());
  // Two low cells of different groups: a round each.
  auto two = RetestSchedule(Judged(plan, {{4, 3, 0}, {1, 0, 0}}), plan);
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(two->rounds(), 2u);
  EXPECT_EQ(two->tests(), 4u);
}

// Cross-rail: a low cell re-runs on its own lane (rail 0 of node0 into rail
// 1 of node1), and two low cells of other lanes that write into the same
// target NIC (node1's rail 1) never share a round.
TEST(Retest, CrossRailRetestsTheLowCellsLaneAndKeysTheTargetByItsRail) {
  std::vector<run::PlanNode> nodes(3);
  for (uint32_t i = 0; i < 3; ++i) {
    nodes[i].name = "node" + std::to_string(i);
    for (uint32_t r = 0; r < 3; ++r) {
      nodes[i].rails.push_back(inventory::Rail{"mlx5_" + std::to_string(r), std::nullopt});
      nodes[i].rail_gbps.push_back(100);
    }
  }
  schedule::ScheduleOptions o;
  o.mode = schedule::Mode::kCrossRail;
  v1::SweepParams p;
  p.add_sizes_bytes(65536);
  auto plan = run::MakePlan(std::move(nodes), "host", o, p);
  ASSERT_TRUE(plan.ok()) << plan.status();
  analysis::MatrixSet set({"node0", "node1", "node2"});
  for (const auto& t : plan->schedule.AllTests()) {
    // node0 rail 0 -> node1 rail 1, and node2 rail 2 -> node1 rail 1: low.
    const bool low = t.dst == 1 && t.TargetRail() == 1 && ((t.src == 0 && t.rail == 0) || (t.src == 2 && t.rail == 2));
    v1::PairResult r = Result(t.src, t.dst, t.rail, low ? 40 : 95);
    r.set_dst_rail(t.TargetRail());
    set.Add(r);
  }
  v1::VerdictPolicy policy = analysis::DefaultPolicy();
  policy.set_mad_k(0);
  analysis::Judge(set, policy, nullptr, {});
  auto s = RetestSchedule(set, *plan);
  ASSERT_TRUE(s.ok()) << s.status();
  std::set<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>> got;
  for (const auto& t : s->AllTests()) got.insert({t.src, t.dst, t.rail, t.TargetRail()});
  EXPECT_EQ(got, (std::set<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>>{{0, 1, 0, 1}, {2, 1, 2, 1}}));
  EXPECT_EQ(s->rounds(), 2u);  // both write into node1's rail 1
  EXPECT_TRUE(schedule::ValidateSchedule(*s, run::Shapes(plan->nodes, plan->memory)).ok());
}

}  // namespace
}  // namespace gdrbench::controller::sweep
