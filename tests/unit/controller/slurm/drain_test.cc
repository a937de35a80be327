// `gdrbench drain`'s reading of a run. The runs are real: run.json files written by
// `gdrbench sweep` in the lab over rxe traffic (tests/testdata/runs/README.md says how each
// was made), not written for this test.
#include "controller/slurm/drain.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

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
  auto f = FindNodesToDrain(run, DrainPolicy{});
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_EQ(f->size(), 1u);
  EXPECT_EQ((*f)[0].node, "node4");
  ASSERT_EQ((*f)[0].reasons.size(), 1u);
  EXPECT_THAT((*f)[0].reasons[0], StartsWith("node: 6 of its 6 cells"));
  EXPECT_EQ(RunNodeCount(run), 4u);
  EXPECT_TRUE(CheckFraction(run, *f, DrainPolicy{}).ok());  // 1 of 4 = the 0.25 limit
}

TEST(Drain, TheReasonNamesTheRunAndScontrolGetsItAsOneArgument) {
  v1::Run run = Load("slurm-lab-node4.json");
  auto f = FindNodesToDrain(run, DrainPolicy{});
  ASSERT_TRUE(f.ok() && f->size() == 1u);
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

TEST(Drain, TooManyNodesIsRefused) {
  v1::Run run = Load("slurm-lab-node4.json");
  DrainPolicy strict;
  strict.max_fraction = 0.2;
  auto f = FindNodesToDrain(run, strict);
  ASSERT_TRUE(f.ok());
  absl::Status st = CheckFraction(run, *f, strict);
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(st.message(), HasSubstr("would drain 1 of its 4 nodes"));
}

TEST(Drain, OnlyTheKindsAsked) {
  v1::Run run = Load("slurm-lab-node4.json");
  auto links_only = ParseDrainKinds("link", 0.25);
  ASSERT_TRUE(links_only.ok());
  auto f = FindNodesToDrain(run, *links_only);
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(f->empty());  // the run blames a node, no link
  EXPECT_FALSE(ParseDrainKinds("node,cable", 0.25).ok());
  EXPECT_FALSE(ParseDrainKinds("", 0.25).ok());
  EXPECT_FALSE(ParseDrainKinds("node", 0).ok());
}

TEST(Drain, ABlameNamingNoNodeOfTheRunIsAnError) {
  v1::Run run = Load("slurm-lab-node4.json");
  run.mutable_blame(0)->set_subject("node9");
  auto f = FindNodesToDrain(run, DrainPolicy{});
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(f.status().message(), HasSubstr("'node9' is not a node of this run"));
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

}  // namespace
}  // namespace gdrbench::controller::slurm
