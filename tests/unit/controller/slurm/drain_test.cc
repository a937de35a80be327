// `gdrbench drain`'s reading of a run. The runs are real: run.json files written by
// `gdrbench sweep` in the lab over rxe traffic (tests/testdata/runs/README.md says how each
// was made), not written for this test.
#include "controller/slurm/drain.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "controller/report/report.h"

namespace gdrbench::controller::slurm {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

v1::Run Load(const std::string& name) {
  auto run = report::LoadRunJson(std::string(GDRBENCH_SOURCE_DIR) + "/tests/testdata/runs/" + name);
  EXPECT_TRUE(run.ok()) << run.status();
  return run.ok() ? *run : v1::Run();
}

TEST(Drain, ASlowNodeIsDrainedOnceWithItsBlame) {
  v1::Run run = Load("slurm-lab-node4.json");
  auto plan = PlanDrain(run, DrainPolicy{});  // 1 of 4 = the 0.25 limit
  ASSERT_TRUE(plan.ok()) << plan.status();
  const auto& f = plan->drain;
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].node, "node4");
  ASSERT_EQ(f[0].reasons.size(), 1u);
  EXPECT_THAT(f[0].reasons[0], StartsWith("node: 6 of its 6 cells"));
  EXPECT_EQ(RunNodeCount(run), 4u);
  EXPECT_EQ(plan->node_count, 4u);
}

TEST(Drain, EveryNodeOfTheRunHasAVerdict) {
  v1::Run run = Load("slurm-lab-node4.json");
  auto plan = PlanDrain(run, DrainPolicy{});
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->verdicts.size(), 4u);
  for (const auto& v : plan->verdicts) {
    if (v.node == "node4") {
      EXPECT_EQ(v.verdict, Verdict::kDrain);
      EXPECT_EQ(v.reason, DrainReason(plan->drain[0], run));
    } else {
      EXPECT_EQ(v.verdict, Verdict::kPass) << v.node;
      EXPECT_EQ(v.reason, "");
    }
  }
}

TEST(Drain, ALinkBlameTheDrainSkipsMakesBothEndsSuspectNotPass) {
  v1::Run run = Load("lab-demo-4node.json");  // a passing run: every node passes
  auto plan = PlanDrain(run, DrainPolicy{});
  ASSERT_TRUE(plan.ok()) << plan.status();
  for (const auto& v : plan->verdicts) EXPECT_EQ(v.verdict, Verdict::kPass) << v.node;
  v1::Blame* b = run.add_blame();
  b->set_kind("link");
  b->set_subject("node1->node3 rail 0");
  b->set_reason("low");
  plan = PlanDrain(run, DrainPolicy{});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(plan->drain.empty());
  std::map<std::string, Verdict> by;
  for (const auto& v : plan->verdicts) by[v.node] = v.verdict;
  EXPECT_EQ(by["node1"], Verdict::kSuspect);
  EXPECT_EQ(by["node3"], Verdict::kSuspect);
  EXPECT_EQ(by["node2"], Verdict::kPass);
  // --what link drains both ends of a multi-rail link subject.
  auto links = ParseDrainKinds("link", 0.5);
  ASSERT_TRUE(links.ok());
  plan = PlanDrain(run, *links);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->drain.size(), 2u);
  EXPECT_EQ(plan->drain[1].node, "node3");
}

TEST(Drain, AFleetBlameLeavesNoNodePassing) {
  v1::Run run = Load("lab-demo-4node.json");
  v1::Blame* b = run.add_blame();
  b->set_kind("fleet");
  b->set_subject("every node");
  b->set_reason("every cell is low");
  auto plan = PlanDrain(run, DrainPolicy{});
  ASSERT_TRUE(plan.ok()) << plan.status();
  for (const auto& v : plan->verdicts) {
    EXPECT_EQ(v.verdict, Verdict::kSuspect) << v.node;
    EXPECT_THAT(v.reason, HasSubstr("fleet every node"));
  }
}

TEST(Drain, ALeftOutNodeIsUntestedUnlessExcludedDrains) {
  v1::Run run = Load("lab-demo-4node.json");
  run.add_excluded_nodes("node5: agent unreachable");
  auto nodes_only = ParseDrainKinds("node,nic", 0.25);
  ASSERT_TRUE(nodes_only.ok());
  auto plan = PlanDrain(run, *nodes_only);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->verdicts.size(), 5u);
  EXPECT_EQ(plan->verdicts[4].node, "node5");
  EXPECT_EQ(plan->verdicts[4].verdict, Verdict::kUntested);
  plan = PlanDrain(run, DrainPolicy{});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->verdicts[4].verdict, Verdict::kDrain);
  EXPECT_THAT(plan->verdicts[4].reason, StartsWith("gdrbench: excluded: agent unreachable"));
}

TEST(Drain, TheReasonNamesTheRunAndScontrolGetsItAsOneArgument) {
  v1::Run run = Load("slurm-lab-node4.json");
  auto plan = PlanDrain(run, DrainPolicy{});
  ASSERT_TRUE(plan.ok() && plan->drain.size() == 1u);
  const auto* f = &plan->drain;
  std::string reason = DrainReason((*f)[0], run);
  EXPECT_THAT(reason, StartsWith("gdrbench: node: "));
  EXPECT_THAT(reason, HasSubstr("(run " + run.run_id() + ")"));
  EXPECT_LE(reason.size(), kMaxReasonBytes);
  auto argv = ScontrolDrainArgv("scontrol", (*f)[0], run);
  EXPECT_THAT(argv, ElementsAre("scontrol", "update", "NodeName=node4", "State=DRAIN",
                                "Reason=" + reason));
  EXPECT_THAT(ShellQuote(argv),
              StartsWith("scontrol update NodeName=node4 State=DRAIN 'Reason=gdrbench: node: "));
}

TEST(Drain, TooManyNodesRefusesTheWholeRun) {
  v1::Run run = Load("slurm-lab-node4.json");
  DrainPolicy strict;
  strict.max_fraction = 0.2;
  auto plan = PlanDrain(run, strict);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(plan.status().message(), HasSubstr("would drain 1 of its 4 nodes"));
  EXPECT_THAT(plan.status().message(), HasSubstr("nothing drained, resumed or published"));
}

TEST(Drain, OnlyTheKindsAsked) {
  v1::Run run = Load("slurm-lab-node4.json");
  auto links_only = ParseDrainKinds("link", 0.25);
  ASSERT_TRUE(links_only.ok());
  auto plan = PlanDrain(run, *links_only);
  ASSERT_TRUE(plan.ok());
  EXPECT_TRUE(plan->drain.empty());  // the run blames a node, no link
  EXPECT_FALSE(ParseDrainKinds("node,cable", 0.25).ok());
  EXPECT_FALSE(ParseDrainKinds("", 0.25).ok());
  EXPECT_FALSE(ParseDrainKinds("node", 0).ok());
}

TEST(Drain, ABlameNamingNoNodeOfTheRunIsAnError) {
  v1::Run run = Load("slurm-lab-node4.json");
  run.mutable_blame(0)->set_subject("node9");
  auto plan = PlanDrain(run, DrainPolicy{});
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(plan.status().message(), HasSubstr("'node9' is not a node of this run"));
}

TEST(Drain, ALongReasonIsCutAtACharacterBoundary) {
  v1::Run run;
  run.set_run_id("r1");
  Finding f{"n1", {std::string(300, 'x') + "\xc3\xa9\"quoted\"\nline"}};
  std::string reason = DrainReason(f, run);
  EXPECT_LE(reason.size(), kMaxReasonBytes);
  EXPECT_THAT(reason, HasSubstr("... (run r1)"));
  EXPECT_EQ(reason.find('"'), std::string::npos);
  EXPECT_EQ(reason.find('\n'), std::string::npos);
}

// Persistence (issue 29): the lab run's node4 blame with the streak a server would give it.
TEST(Drain, ALowNodeSeenOnceIsSuspectUntilItPersists) {
  v1::Run run = Load("slurm-lab-node4.json");
  ASSERT_EQ(run.blame_size(), 1);
  ASSERT_FALSE(run.blame(0).hard()) << "the lab run's node4 read low; it did not error";
  run.mutable_blame(0)->set_confirmed(true);  // its retest read low again (the run predates the field)
  run.mutable_blame(0)->set_streak(1);
  auto plan = PlanDrain(run, DrainPolicy{});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(plan->drain.empty());
  EXPECT_TRUE(plan->streaks_known);
  for (const auto& v : plan->verdicts) {
    if (v.node != "node4") continue;
    EXPECT_EQ(v.verdict, Verdict::kSuspect);
    EXPECT_THAT(v.reason, HasSubstr("(seen in 1 run in a row; acted on at 2)"));
  }
  // The second run in a row: drained.
  run.mutable_blame(0)->set_streak(2);
  plan = PlanDrain(run, DrainPolicy{});
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->drain.size(), 1u);
  EXPECT_EQ(plan->drain[0].node, "node4");
  // --min-streak 3 waits for a third.
  DrainPolicy three;
  three.min_streak = 3;
  plan = PlanDrain(run, three);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(plan->drain.empty());
}

// Confirmation (issue 29): where the server counts streaks, a blame the retest did not
// confirm is suspect whatever its streak; a hard one still acts at once.
TEST(Drain, ABlameSeenOnceIsNeverDrainedWhateverItsStreak) {
  v1::Run run = Load("slurm-lab-node4.json");
  run.mutable_blame(0)->set_confirmed(false);
  run.mutable_blame(0)->set_streak(5);
  auto plan = PlanDrain(run, DrainPolicy{});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(plan->drain.empty());
  EXPECT_EQ(NotYet(run.blame(0), DrainPolicy{}), "seen once: not confirmed by a retest");
  for (const auto& v : plan->verdicts) {
    if (v.node == "node4") {
      EXPECT_EQ(v.verdict, Verdict::kSuspect);
    }
  }
  run.mutable_blame(0)->set_hard(true);
  plan = PlanDrain(run, DrainPolicy{});
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->drain.size(), 1u);
  EXPECT_EQ(NotYet(run.blame(0), DrainPolicy{}), "");
}

TEST(Drain, AHardFailureActsAtOnce) {
  v1::Run run = Load("slurm-lab-node4.json");
  run.mutable_blame(0)->set_streak(1);
  run.mutable_blame(0)->set_hard(true);  // an errored test among its cells
  auto plan = PlanDrain(run, DrainPolicy{});
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->drain.size(), 1u);
  EXPECT_EQ(plan->drain[0].node, "node4");
}

TEST(Drain, ARunWithNoStreaksIsActedOnAloneAndSaysSo) {
  v1::Run run = Load("slurm-lab-node4.json");  // a run file: no server counted anything
  ASSERT_EQ(run.blame(0).streak(), 0u);
  auto plan = PlanDrain(run, DrainPolicy{});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_FALSE(plan->streaks_known);
  ASSERT_EQ(plan->drain.size(), 1u);
}

TEST(Drain, ALeftOutNodeDrainsWhateverTheStreaks) {
  v1::Run run = Load("slurm-lab-node4.json");
  run.mutable_blame(0)->set_streak(1);
  run.add_excluded_nodes("node2: preflight FAIL (peermem_loaded)");
  auto plan = PlanDrain(run, DrainPolicy{false, false, true, false, 0.5});
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->drain.size(), 1u);
  EXPECT_EQ(plan->drain[0].node, "node2");
}

}  // namespace
}  // namespace gdrbench::controller::slurm
