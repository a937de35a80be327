// The server's sweep executor: --cluster flags, a spec mapped onto the sweep
// library's config with `gdrbench sweep`'s defaults, bad specs refused at
// submit. The sweeps themselves run against real agents in
// integration.server_sweeps_on_request.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "server/sweeps/library_executor.h"

namespace gdrbench::server::sweeps {
namespace {

using ::testing::HasSubstr;

class SweepExecutorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("sweep_executor." + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Inventory(const std::string& name, int nodes) {
    const std::string path = (dir_ / (name + ".yaml")).string();
    std::ofstream f(path);
    f << "tls: {insecure: true}\nrails:\n  - {nic: mlx5_0, gpu: 0}\nnodes:\n";
    for (int i = 0; i < nodes; ++i) f << "  - {name: n" << i << ", address: '127.0.0.1:" << 7070 + i << "'}\n";
    return path;
  }

  std::unique_ptr<LibraryExecutor> Make(int nodes) {
    auto e = LibraryExecutor::Create({{"fab", Inventory("fab", nodes)}}, (dir_ / "state").string());
    EXPECT_TRUE(e.ok()) << e.status();
    return e.ok() ? std::move(*e) : nullptr;
  }

  std::filesystem::path dir_;
};

TEST_F(SweepExecutorTest, ClusterFlagsAreNameEqualsInventory) {
  std::map<std::string, std::string> m;
  EXPECT_TRUE(ParseClusterFlag("fab=/etc/gdrbench/fab.yaml", &m).ok());
  EXPECT_EQ(m["fab"], "/etc/gdrbench/fab.yaml");
  for (const char* bad : {"fab", "=x.yaml", "fab="}) {
    absl::Status st = ParseClusterFlag(bad, &m);
    EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(st.message(), HasSubstr("expected NAME=INVENTORY.yaml"));
  }
  EXPECT_THAT(ParseClusterFlag("fab=other.yaml", &m).message(), HasSubstr("--cluster fab given twice"));
}

TEST_F(SweepExecutorTest, AnInventoryThatDoesNotLoadStopsTheStart) {
  auto e = LibraryExecutor::Create({{"fab", (dir_ / "missing.yaml").string()}}, (dir_ / "state").string());
  EXPECT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(e.status().message(), HasSubstr("--cluster fab="));
  auto ok = Make(2);
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->clusters(), std::set<std::string>{"fab"});
  EXPECT_TRUE(std::filesystem::is_directory(dir_ / "state"));
}

TEST_F(SweepExecutorTest, AnEmptySpecIsGdrbenchSweepsDefaults) {
  auto e = Make(3);
  ASSERT_TRUE(e);
  auto c = e->ToConfig("fab", v1::SweepSpec());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->inventory.nodes.size(), 3u);
  EXPECT_THAT(c->params.sizes_bytes(), ::testing::ElementsAre(64 << 10, 1 << 20));
  EXPECT_EQ(c->params.iterations(), 1000u);
  EXPECT_EQ(c->params.qps(), 1u);
  EXPECT_EQ(c->schedule.mode, controller::schedule::Mode::kAllPairs);
  EXPECT_EQ(c->schedule.quick_matchings, 3u);
  EXPECT_EQ(c->retest_low, 1u);
  EXPECT_EQ(c->parallel, 64u);
  EXPECT_TRUE(c->preflight);
  EXPECT_DOUBLE_EQ(c->policy.min_fraction_of_link(), 0.9);
  EXPECT_TRUE(e->Check("fab", v1::SweepSpec()).ok());
}

TEST_F(SweepExecutorTest, SpecFieldsAreMapped) {
  auto e = Make(2);
  ASSERT_TRUE(e);
  v1::SweepSpec s;
  s.set_mode("ring");
  s.set_sizes("2-8M");
  s.set_duration_s(2.5);
  s.set_qps(4);
  s.set_bidirectional(true);
  s.set_memory("hugepage");
  s.set_retest_low(0);
  s.set_mad_k(4);
  s.set_fleet_min_drop(0.2);
  s.set_parallel(8);
  s.set_no_preflight(true);
  auto c = e->ToConfig("fab", s);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->schedule.mode, controller::schedule::Mode::kRing);
  EXPECT_EQ(c->params.sizes_bytes_size(), 23);  // 2 B .. 8 MiB
  EXPECT_EQ(c->params.iterations(), 0u);
  EXPECT_EQ(c->params.duration_ns(), 2500000000);
  EXPECT_EQ(c->params.qps(), 4u);
  EXPECT_TRUE(c->schedule.bidirectional);
  EXPECT_EQ(c->memory, "hugepage");
  EXPECT_EQ(c->retest_low, 0u);
  EXPECT_DOUBLE_EQ(c->policy.mad_k(), 4);
  EXPECT_DOUBLE_EQ(c->policy.fleet_min_drop(), 0.2);
  EXPECT_EQ(c->parallel, 8u);
  EXPECT_FALSE(c->preflight);
}

TEST_F(SweepExecutorTest, BadSpecsAreRefusedAtSubmitWithASentence) {
  auto e = Make(2);
  ASSERT_TRUE(e);
  auto refused = [&](auto set, const std::string& words) {
    v1::SweepSpec s;
    set(s);
    absl::Status st = e->Check("fab", s);
    EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << words;
    EXPECT_THAT(st.message(), HasSubstr(words));
  };
  refused([](v1::SweepSpec& s) { s.set_mode("pairs"); }, "needs a pair list file");
  refused([](v1::SweepSpec& s) { s.set_mode("sideways"); }, "sideways");
  refused([](v1::SweepSpec& s) { s.set_sizes("64Q"); }, "64Q");
  refused([](v1::SweepSpec& s) { s.set_qps(65); }, "qps must be at most 64");
  refused([](v1::SweepSpec& s) { s.set_duration_s(-1); }, "duration_s must be 0 to 3600");
  refused([](v1::SweepSpec& s) { s.set_min_link_fraction(1.5); }, "min_link_fraction must be 0 to 1");
  refused([](v1::SweepSpec& s) { s.set_retest_low(11); }, "retest_low must be at most 10");
  refused([](v1::SweepSpec& s) { s.set_parallel(0); }, "parallel must be 1 to 4096");
  refused([](v1::SweepSpec& s) { s.set_memory("floppy"); }, "floppy");
}

TEST_F(SweepExecutorTest, AOneNodeClusterCannotBeSwept) {
  auto e = LibraryExecutor::Create({{"solo", Inventory("solo", 1)}}, (dir_ / "state").string());
  ASSERT_TRUE(e.ok()) << e.status();
  absl::Status st = (*e)->Check("solo", v1::SweepSpec());
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gdrbench::server::sweeps
