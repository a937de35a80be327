// The server's sweep executor: --cluster flags, a spec mapped onto the sweep
// library's config with `gdrbench sweep`'s defaults, bad specs refused at
// submit. The sweeps themselves run against real agents in
// integration.server_sweeps_on_request.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "absl/strings/str_cat.h"
#include "common/sweep_limits.h"
#include "server/sweeps/library_executor.h"

// The deprecated string fields of v1.SweepSpec are what older clients send.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

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

  std::string Inventory(const std::string& name, int nodes, int rails = 1) {
    const std::string path = (dir_ / (name + ".yaml")).string();
    std::ofstream f(path);
    f << "tls: {insecure: true}\nrails:\n";
    for (int r = 0; r < rails; ++r) f << "  - {nic: mlx5_" << r << ", gpu: " << r << "}\n";
    f << "nodes:\n";
    for (int i = 0; i < nodes; ++i) f << "  - {name: n" << i << ", address: '127.0.0.1:" << 7070 + i << "'}\n";
    return path;
  }

  std::unique_ptr<LibraryExecutor> Make(int nodes, int rails = 1) {
    auto e = LibraryExecutor::Create({{"fab", Inventory("fab", nodes, rails)}}, (dir_ / "state").string());
    EXPECT_TRUE(e.ok()) << e.status();
    return e.ok() ? std::move(*e) : nullptr;
  }

  // Check refuses the spec `set` makes: INVALID_ARGUMENT with `words`.
  static void ExpectRefused(const LibraryExecutor& e, const std::function<void(v1::SweepSpec&)>& set,
                            const std::string& words) {
    v1::SweepSpec s;
    set(s);
    absl::Status st = e.Check("fab", s);
    EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << words;
    EXPECT_THAT(st.message(), HasSubstr(words));
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

// The defaults of a sweep requested from the server are those of the one
// header (common/sweep_limits.h), as `gdrbench sweep`'s are.
TEST_F(SweepExecutorTest, AnEmptySpecIsGdrbenchSweepsDefaults) {
  namespace limits = sweep_limits;
  auto e = Make(3);
  ASSERT_TRUE(e);
  auto c = e->ToConfig("fab", v1::SweepSpec());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->inventory.nodes.size(), 3u);
  EXPECT_THAT(c->params.sizes_bytes(), ::testing::ElementsAreArray(limits::kDefaultSweepSizes));
  EXPECT_EQ(c->params.iterations(), limits::kDefaultSweepIterations);
  EXPECT_EQ(c->params.qps(), limits::kDefaultQps);
  EXPECT_EQ(c->params.tx_depth(), limits::kDefaultTxDepth);
  EXPECT_EQ(c->params.qp_timeout(), limits::kDefaultQpTimeout);
  EXPECT_EQ(c->schedule.mode, controller::schedule::Mode::kAllPairs);
  EXPECT_EQ(c->schedule.quick_matchings, limits::kDefaultQuickRounds);
  EXPECT_EQ(c->retest_low, limits::kDefaultRetestLow);
  EXPECT_EQ(c->parallel, limits::kDefaultParallel);
  EXPECT_TRUE(c->preflight);
  EXPECT_DOUBLE_EQ(c->policy.min_fraction_of_link(), limits::kDefaultMinFractionOfLink);
  EXPECT_DOUBLE_EQ(c->policy.mad_k(), limits::kDefaultMadK);
  EXPECT_TRUE(e->Check("fab", v1::SweepSpec()).ok());
  // The plan it checks carries them too.
  auto plan = controller::sweep::PlanWithoutAgents(*c);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->params.iterations(), limits::kDefaultSweepIterations);
}

TEST_F(SweepExecutorTest, TypedSpecFieldsAreMapped) {
  auto e = Make(2);
  ASSERT_TRUE(e);
  v1::SweepSpec s;
  s.set_sweep_mode(v1::SWEEP_MODE_RING);
  v1::SweepParams& p = *s.mutable_params();
  p = controller::sweep::SweepConfig::DefaultParams();
  p.set_qps(4);
  p.set_bidirectional(true);
  s.add_memory_kinds(v1::MEMORY_KIND_HOST);
  s.add_memory_kinds(v1::MEMORY_KIND_GPU);
  auto c = e->ToConfig("fab", s);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->schedule.mode, controller::schedule::Mode::kRing);
  EXPECT_EQ(c->params.qps(), 4u);
  EXPECT_TRUE(c->schedule.bidirectional);
  EXPECT_EQ(c->memory, "host,gpu");
  s.set_sweep_mode(v1::SWEEP_MODE_PAIRS);
  EXPECT_THAT(e->Check("fab", s).message(), HasSubstr("needs a pair list file"));
  s.set_sweep_mode(v1::SWEEP_MODE_RING);
  p.set_qps(0);
  EXPECT_THAT(e->Check("fab", s).message(),
              HasSubstr(absl::StrCat("params.qps 0: give 1 .. ", sweep_limits::kMaxQps)));
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
  auto refused = [&](const std::function<void(v1::SweepSpec&)>& set, const std::string& words) {
    ExpectRefused(*e, set, words);
  };
  refused([](v1::SweepSpec& s) { s.set_mode("pairs"); }, "needs a pair list file");
  refused([](v1::SweepSpec& s) { s.set_mode("sideways"); }, "sideways");
  refused([](v1::SweepSpec& s) { s.set_sizes("64Q"); }, "64Q");
  refused([](v1::SweepSpec& s) { s.set_qps(65); }, "qps 65: give 1 .. 64");
  refused([](v1::SweepSpec& s) { s.set_duration_s(-1); }, "duration_s -1: give 0 .. 600 seconds per size");
  refused([](v1::SweepSpec& s) { s.set_min_link_fraction(1.5); }, "min_link_fraction must be 0 to 1");
  refused([](v1::SweepSpec& s) { s.set_retest_low(11); }, "retest_low must be at most 10");
  refused([](v1::SweepSpec& s) { s.set_parallel(0); }, "parallel must be 1 to 4096");
  refused([](v1::SweepSpec& s) { s.set_memory("floppy"); }, "floppy");
}

TEST_F(SweepExecutorTest, IncastAndCrossRailAreMappedAsTheCliMapsThem) {
  auto e = Make(4, 2);
  ASSERT_TRUE(e);
  v1::SweepSpec s;
  s.set_mode("incast");
  s.set_fan_in(2);
  s.set_cm("oob");
  auto c = e->ToConfig("fab", s);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->schedule.mode, controller::schedule::Mode::kIncast);
  EXPECT_EQ(c->schedule.fan_in, 2u);
  EXPECT_EQ(c->params.cm(), v1::CONNECTION_MODE_OOB);
  EXPECT_TRUE(e->Check("fab", s).ok());

  v1::SweepSpec x;
  x.set_mode("cross-rail");
  x.set_cm("rdma_cm");
  c = e->ToConfig("fab", x);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->schedule.mode, controller::schedule::Mode::kCrossRail);
  EXPECT_EQ(c->schedule.fan_in, 0u);
  EXPECT_EQ(c->params.cm(), v1::CONNECTION_MODE_RDMA_CM);
  EXPECT_TRUE(e->Check("fab", x).ok());
  // No cm: auto, as `gdrbench sweep` without --cm.
  EXPECT_EQ(e->ToConfig("fab", v1::SweepSpec())->params.cm(), v1::CONNECTION_MODE_AUTO);
}

TEST_F(SweepExecutorTest, BadIncastCrossRailAndCmSpecsAreRefusedWithASentence) {
  auto e = Make(4, 2);
  ASSERT_TRUE(e);
  auto refused = [&](const std::function<void(v1::SweepSpec&)>& set, const std::string& words) {
    ExpectRefused(*e, set, words);
  };
  refused([](v1::SweepSpec& s) { s.set_mode("incast"); }, "mode incast needs fan_in K");
  refused([](v1::SweepSpec& s) { s.set_mode("ring"); s.set_fan_in(2); }, "fan_in is only for mode incast, not ring");
  refused([](v1::SweepSpec& s) { s.set_fan_in(2); }, "fan_in is only for mode incast, not all-pairs");
  refused([](v1::SweepSpec& s) { s.set_mode("incast"); s.set_fan_in(0); }, "give 1 .. 3");
  refused([](v1::SweepSpec& s) { s.set_mode("incast"); s.set_fan_in(4); }, "give 1 .. 3");
  refused([](v1::SweepSpec& s) { s.set_mode("incast"); s.set_fan_in(2); s.set_bidirectional(true); },
          "incast is one-directional");
  refused([](v1::SweepSpec& s) { s.set_mode("cross-rail"); s.set_bidirectional(true); },
          "cross-rail is one-directional");
  refused([](v1::SweepSpec& s) { s.set_cm("ipoib"); }, "give auto, rdma_cm or oob");
  // One rail per node: there is no other rail to cross to.
  auto one_rail = Make(4, 1);
  ASSERT_TRUE(one_rail);
  v1::SweepSpec x;
  x.set_mode("cross-rail");
  absl::Status st = one_rail->Check("fab", x);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(st.message(), HasSubstr("at least 2 rails"));
}

TEST_F(SweepExecutorTest, AOneNodeClusterCannotBeSwept) {
  auto e = LibraryExecutor::Create({{"solo", Inventory("solo", 1)}}, (dir_ / "state").string());
  ASSERT_TRUE(e.ok()) << e.status();
  absl::Status st = (*e)->Check("solo", v1::SweepSpec());
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gdrbench::server::sweeps
