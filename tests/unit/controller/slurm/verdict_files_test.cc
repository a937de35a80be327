// The per-node verdict files the NHC check reads (controller/slurm/verdict_files.h),
// written from a real lab run (tests/testdata/runs/README.md).
#include "controller/slurm/verdict_files.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "controller/report/report.h"

namespace gdrbench::controller::slurm {
namespace {

using ::testing::HasSubstr;

namespace fs = std::filesystem;

v1::Run Load(const std::string& name) {
  auto run = report::LoadRunJson(std::string(GDRBENCH_SOURCE_DIR) + "/tests/testdata/runs/" + name);
  EXPECT_TRUE(run.ok()) << run.status();
  return run.ok() ? *run : v1::Run();
}

std::string Read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class VerdictFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gdrbench-verdicts-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(VerdictFiles, OneSmallFilePerNodeWithTheDrainReason) {
  v1::Run run = Load("slurm-lab-node4.json");
  auto plan = PlanDrain(run, DrainPolicy{});
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_TRUE(WriteVerdictFiles(*plan, dir_.string()).ok());
  std::string node4 = Read(dir_ / "node4");
  EXPECT_EQ(node4, "gdrbench-verdict 1\nnode node4\nrun " + run.run_id() + "\nverdict drain\nreason " +
                       DrainReason(plan->drain[0], run) + "\n");
  EXPECT_LT(node4.size(), 1024u);
  EXPECT_EQ(Read(dir_ / "node1"), "gdrbench-verdict 1\nnode node1\nrun " + run.run_id() + "\nverdict pass\n");
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir_)) {
    EXPECT_NE(e.path().filename().string()[0], '.') << "a temporary file was left";
    ++files;
  }
  EXPECT_EQ(files, 4u);
}

TEST_F(VerdictFiles, ADrainStandsUntilARunTestsTheNodeAndItPasses) {
  v1::Run bad = Load("slurm-lab-node4.json");
  auto plan = PlanDrain(bad, DrainPolicy{});
  ASSERT_TRUE(plan.ok());
  ASSERT_TRUE(WriteVerdictFiles(*plan, dir_.string()).ok());
  // A later run that left node4 out says nothing new about it.
  v1::Run later = Load("lab-demo-4node.json");
  later.set_run_id("later");
  later.add_excluded_nodes("node4: agent unreachable");
  auto nodes_only = ParseDrainKinds("node,nic", 0.25);
  ASSERT_TRUE(nodes_only.ok());
  auto plan2 = PlanDrain(later, *nodes_only);
  ASSERT_TRUE(plan2.ok()) << plan2.status();
  ASSERT_TRUE(WriteVerdictFiles(*plan2, dir_.string()).ok());
  EXPECT_THAT(Read(dir_ / "node4"), HasSubstr("verdict drain\n"));
  EXPECT_THAT(Read(dir_ / "node1"), HasSubstr("run later\n"));
  // A run that tested node4 and passed it replaces the drain.
  v1::Run pass = Load("lab-demo-4node.json");
  auto plan3 = PlanDrain(pass, DrainPolicy{});
  ASSERT_TRUE(plan3.ok());
  ASSERT_TRUE(WriteVerdictFiles(*plan3, dir_.string()).ok());
  EXPECT_THAT(Read(dir_ / "node4"), HasSubstr("verdict pass\n"));
}

TEST_F(VerdictFiles, ANodeNameThatIsNotAFileNameWritesNothing) {
  DrainPlan plan;
  plan.run_id = "r";
  plan.verdicts = {{"node1", Verdict::kPass, ""}, {"../etc/passwd", Verdict::kDrain, "x"}};
  absl::Status st = WriteVerdictFiles(plan, dir_.string());
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(st.message(), HasSubstr("'../etc/passwd'"));
  EXPECT_FALSE(fs::exists(dir_ / "node1"));
}

TEST_F(VerdictFiles, AnUnwritableDirectoryIsAnErrorNamingIt) {
  fs::create_directories(dir_);
  std::ofstream(dir_ / "file") << "x";
  DrainPlan plan;
  plan.verdicts = {{"node1", Verdict::kPass, ""}};
  absl::Status st = WriteVerdictFiles(plan, (dir_ / "file").string());
  EXPECT_FALSE(st.ok());
  EXPECT_THAT(st.message(), HasSubstr((dir_ / "file").string()));
}

}  // namespace
}  // namespace gdrbench::controller::slurm
