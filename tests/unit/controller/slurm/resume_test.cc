// `gdrbench resume`'s choices (controller/slurm/resume.h): which drained nodes go back to
// service, sinfo's output read, and the Slurm rights. The sinfo lines are the format
// lab.slurm's real Slurm 22.05 prints for `sinfo -h -N -o '%N|%T|%E'`.
#include "controller/slurm/resume.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gdrbench::controller::slurm {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

DrainPlan Plan() {
  DrainPlan p;
  p.run_id = "r2";
  p.verdicts = {{"node1", Verdict::kPass, ""},
                {"node2", Verdict::kDrain, "gdrbench: node: low (run r2)"},
                {"node3", Verdict::kPass, ""},
                {"node4", Verdict::kSuspect, "link node4->node1: low"}};
  return p;
}

TEST(Resume, OnlyNodesGdrbenchDrainedThatPassed) {
  auto states = ParseSinfoNodes(
      "node1|drained|gdrbench: node: 6 of its 6 cells (run r1)\n"
      "node2|drained|gdrbench: node: low (run r1)\n"
      "node3|drained|bad DIMM, ticket 42\n"
      "node4|draining|gdrbench: nic rail 0: low (run r1)\n"
      "node5|drained|gdrbench: node: low (run r1)\n"
      "node6|idle|none\n"
      "node1|drained|gdrbench: node: 6 of its 6 cells (run r1)\n");  // a second partition
  ASSERT_TRUE(states.ok()) << states.status();
  EXPECT_EQ(states->size(), 6u);
  std::vector<ResumeStep> steps = PlanResume(Plan(), *states);
  ASSERT_EQ(steps.size(), 3u);  // node3: an operator's drain; node5: not in the run; node6: not drained
  EXPECT_EQ(steps[0].node, "node1");
  EXPECT_TRUE(steps[0].resume);
  EXPECT_EQ(steps[0].why, "passed in run r2");
  EXPECT_EQ(steps[1].node, "node2");
  EXPECT_FALSE(steps[1].resume);
  EXPECT_THAT(steps[1].why, HasSubstr("says drain"));
  EXPECT_EQ(steps[2].node, "node4");
  EXPECT_FALSE(steps[2].resume);
  EXPECT_THAT(steps[2].why, HasSubstr("says suspect: link node4->node1"));
}

TEST(Resume, SinfoLinesWithoutThreeFieldsAreAnError) {
  EXPECT_FALSE(ParseSinfoNodes("node1 idle\n").ok());
  auto reason_with_bar = ParseSinfoNodes("node1|DRAINED|a|b\n");
  ASSERT_TRUE(reason_with_bar.ok());
  EXPECT_EQ((*reason_with_bar)[0].state, "drained");
  EXPECT_EQ((*reason_with_bar)[0].reason, "a|b");
}

TEST(Resume, TheScontrolCommand) {
  EXPECT_THAT(ScontrolResumeArgv("scontrol", "node1"),
              ElementsAre("scontrol", "update", "NodeName=node1", "State=RESUME"));
}

TEST(Rights, RootTheSlurmUserAndAdministratorsMay) {
  EXPECT_EQ(ParseSlurmUser("Configuration data as of ...\nSlurmUser               = slurm(64030)\n"
                           "SlurmdUser              = root(0)\n"),
            "slurm");
  EXPECT_EQ(ParseSlurmUser("SlurmdUser = root(0)\n"), "");
  EXPECT_TRUE(CheckAdminRights({0, "root", "", ""}, "drain nodes").ok());
  EXPECT_TRUE(CheckAdminRights({64030, "slurm", "slurm", ""}, "drain nodes").ok());
  EXPECT_TRUE(CheckAdminRights({1000, "bench", "slurm", "Administrator"}, "drain nodes").ok());
}

TEST(Rights, OthersGetWhatIsNeeded) {
  absl::Status st = CheckAdminRights({1000, "bench", "slurm", "Operator"}, "drain nodes");
  EXPECT_EQ(st.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(st.message(), HasSubstr("bench (AdminLevel Operator) may not drain nodes"));
  EXPECT_THAT(st.message(), HasSubstr("root, the SlurmUser (slurm) or a user with AdminLevel=Administrator"));
  EXPECT_THAT(st.message(), HasSubstr("sacctmgr modify user bench set AdminLevel=Administrator"));
  st = CheckAdminRights({1000, "bench", "", ""}, "resume nodes");
  EXPECT_EQ(st.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(st.message(), HasSubstr("cannot tell whether bench may resume nodes"));
}

// `scontrol show config` lines as Slurm 22.05 prints them (a published
// capture of a cluster without accounting: "AccountingStorageType   =
// accounting_storage/none"; slurm.conf(5): that is the default). Slurm's
// "User Permissions" page: AdminLevel is set "in the user's database
// record", so without accounting nobody has one.
TEST(Rights, WithoutAccountingOnlyRootAndTheSlurmUserMay) {
  const std::string config =
      "Configuration data as of 2022-05-26T10:41:42\n"
      "AccountingStorageTRES   = cpu,mem,energy,node,billing,fs/disk,vmem,pages\n"
      "AccountingStorageType   = accounting_storage/none\n"
      "AccountingStorageUser   = root\n"
      "SlurmUser               = slurm(64030)\n";
  EXPECT_EQ(ShowConfigValue(config, "AccountingStorageType"), "accounting_storage/none");
  EXPECT_EQ(ShowConfigValue(config, "AccountingStorage"), "");  // only whole keys
  EXPECT_EQ(ShowConfigValue(config, "SlurmUser"), "slurm(64030)");
  SlurmIdentity id{1000, "bench", ParseSlurmUser(config), ""};
  id.accounting_storage = ShowConfigValue(config, "AccountingStorageType");
  absl::Status st = CheckAdminRights(id, "drain nodes");
  EXPECT_EQ(st.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(st.message(), HasSubstr("bench may not drain nodes: accounting is off (AccountingStorageType = "
                                      "accounting_storage/none)"));
  EXPECT_THAT(st.message(), HasSubstr("only root and the SlurmUser (slurm)"));
  EXPECT_THAT(st.message(), Not(HasSubstr("cannot tell")));
  EXPECT_THAT(st.message(), Not(HasSubstr("sacctmgr modify")));  // no AdminLevel to set
  // The SlurmUser itself still may.
  id.user = "slurm";
  EXPECT_TRUE(CheckAdminRights(id, "drain nodes").ok());
}

TEST(Rights, CannotTellSaysWhatTheCommandAnswered) {
  SlurmIdentity id{1000, "bench", "", ""};
  id.slurm_user_unknown_why = "scontrol show config: no answer in 20 s (killed)";
  absl::Status st = CheckAdminRights(id, "drain nodes");
  EXPECT_EQ(st.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(st.message(),
              HasSubstr("(scontrol show config gave no SlurmUser: scontrol show config: no answer in "
                        "20 s (killed)); slurmctld lets only root"));
  id = {1000, "bench", "root", ""};
  id.admin_level_unknown_why = "sacctmgr exited 1: sacctmgr: error: Problem talking to the database";
  st = CheckAdminRights(id, "drain nodes");
  EXPECT_THAT(st.message(),
              HasSubstr("(sacctmgr gave no AdminLevel: sacctmgr exited 1: sacctmgr: error: Problem "
                        "talking to the database); slurmctld lets only root, the SlurmUser (root)"));
}

}  // namespace
}  // namespace gdrbench::controller::slurm
