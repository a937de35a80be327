// The Kubernetes counterpart of drain (controller/slurm/taint.h): kubectl's argv, and its
// node listing read as states for the same resume plan. The listing lines are the format
// of `kubectl get nodes -o jsonpath=...` as KubectlListArgv asks it (NAME|EFFECT).
#include "controller/slurm/taint.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gdrbench::controller::slurm {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(Taint, DrainIsANoScheduleTaintAndTheReasonInAnAnnotation) {
  v1::Run run;
  run.set_run_id("r1");
  auto argvs = KubectlDrainArgvs("kubectl", Finding{"gpu7", {"node: low"}}, run);
  ASSERT_EQ(argvs.size(), 2u);
  EXPECT_THAT(argvs[0], ElementsAre("kubectl", "taint", "nodes", "gpu7", "gdrbench.io/fabric=drain:NoSchedule",
                                    "--overwrite"));
  EXPECT_THAT(argvs[1], ElementsAre("kubectl", "annotate", "nodes", "gpu7",
                                    "gdrbench.io/fabric-reason=gdrbench: node: low (run r1)", "--overwrite"));
  auto undo = KubectlResumeArgvs("kubectl", "gpu7");
  ASSERT_EQ(undo.size(), 2u);
  EXPECT_THAT(undo[0], ElementsAre("kubectl", "taint", "nodes", "gpu7", "gdrbench.io/fabric:NoSchedule-"));
  EXPECT_THAT(undo[1], ElementsAre("kubectl", "annotate", "nodes", "gpu7", "gdrbench.io/fabric-reason-"));
  EXPECT_THAT(KubectlListArgv("kubectl")[4], HasSubstr("@.key==\"gdrbench.io/fabric\""));
}

TEST(Taint, OnlyNodesWithGdrbenchsTaintAreResumedAndOnlyWhenTheyPassed) {
  auto states = ParseKubectlNodes("gpu1|NoSchedule\ngpu2|\ngpu3|NoSchedule\n");
  ASSERT_TRUE(states.ok()) << states.status();
  ASSERT_EQ(states->size(), 3u);
  EXPECT_TRUE(DrainedByGdrbench((*states)[0]));
  EXPECT_FALSE(DrainedByGdrbench((*states)[1]));
  DrainPlan plan;
  plan.run_id = "r2";
  plan.verdicts = {{"gpu1", Verdict::kPass, ""}, {"gpu2", Verdict::kPass, ""}, {"gpu3", Verdict::kDrain, "x"}};
  auto steps = PlanResume(plan, *states);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].node, "gpu1");
  EXPECT_TRUE(steps[0].resume);
  EXPECT_EQ(steps[1].node, "gpu3");
  EXPECT_FALSE(steps[1].resume);
  EXPECT_FALSE(ParseKubectlNodes("gpu1 NoSchedule\n").ok());
}

}  // namespace
}  // namespace gdrbench::controller::slurm
