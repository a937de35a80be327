// `gdrbench sweep`'s reports of a streamed run (WriteSweepReports): a run
// within the bound gets every report; a larger one gets run.json alone, with
// the same bytes, and an earlier run's other reports in the folder removed
// (they would read as this run's).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "controller/cli/sweep_output.h"
#include "controller/run/testing/fake_cluster.h"
#include "controller/sweep/streamed_run.h"
#include "controller/sweep/sweep.h"

namespace gdrbench::controller::cli {
namespace {

namespace fs = std::filesystem;

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

class SweepReports : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("sweep-reports-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    run::FakeCluster cluster(4, 2, 100);
    sweep::SweepConfig c;
    c.inventory.source = "test";
    c.inventory.nodes = cluster.InventoryNodes();
    c.agents = cluster.agents();
    c.params.clear_sizes_bytes();
    c.params.add_sizes_bytes(65536);
    c.params.set_seed(7);
    c.run_id = "sweep-reports-test";
    c.journal_path = (dir_ / "journal.bin").string();
    auto run = sweep::RunSweepStreamed(c);
    ASSERT_TRUE(run.ok()) << run.status();
    run_ = *std::move(run);
    ASSERT_TRUE(run_.streamed());
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
  sweep::StreamedRun run_;
};

TEST_F(SweepReports, ARunWithinTheBoundGetsEveryReport) {
  auto written = WriteSweepReports(run_, (dir_ / "small").string());
  ASSERT_TRUE(written.ok()) << written.status();
  for (const char* name : {"run.json", "pairs.csv", "summary.md", "report.html", "junit.xml"}) {
    EXPECT_TRUE(fs::exists(dir_ / "small" / name)) << name;
  }
}

TEST_F(SweepReports, ALargerRunGetsRunJsonAloneWithTheSameBytesAndStaleReportsGo) {
  ASSERT_TRUE(WriteSweepReports(run_, (dir_ / "whole").string()).ok());
  const fs::path big = dir_ / "big";
  fs::create_directories(big);
  for (const char* stale : {"pairs.csv", "summary.md", "report.html", "junit.xml"}) {
    std::ofstream(big / stale) << "an earlier run's\n";
  }
  testing::internal::CaptureStderr();
  auto written = WriteSweepReports(run_, big.string(), /*max_whole_cells=*/run_.cells() - 1);
  const std::string said = testing::internal::GetCapturedStderr();
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_THAT(*written, ::testing::ElementsAre((big / "run.json").string()));
  EXPECT_EQ(Slurp(big / "run.json"), Slurp(dir_ / "whole" / "run.json"));
  for (const char* stale : {"pairs.csv", "summary.md", "report.html", "junit.xml"}) {
    EXPECT_FALSE(fs::exists(big / stale)) << stale;
  }
  EXPECT_THAT(said, ::testing::HasSubstr("are not written for a run of " + std::to_string(run_.cells())));
}

}  // namespace
}  // namespace gdrbench::controller::cli
