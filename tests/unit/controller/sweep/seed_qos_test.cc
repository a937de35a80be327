// Issue 34 at the controller: a sweep's verify seed is drawn per run,
// each test's is derived from it and recorded (run.json, the journal), a
// resume keeps it; --sl / --tclass / --disable-pcie-relaxed reach the params
// through the typed request with their bounds, and the inventory's qos:
// fills what the request leaves unset, the request overriding it and the
// plan saying which was used.
#include <gmock/gmock.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <set>

#include "common/sweep_limits.h"
#include "controller/run/journal.h"
#include "controller/run/pair_tester.h"
#include "controller/run/testing/fake_cluster.h"
#include "controller/sweep/spec.h"
#include "controller/sweep/sweep.h"

namespace gdrbench::controller::sweep {
namespace {

namespace limits = sweep_limits;
using ::testing::HasSubstr;

SweepConfig Config(run::FakeCluster& cluster) {
  SweepConfig c;
  c.inventory.source = "test.yaml";
  c.inventory.nodes = cluster.InventoryNodes();
  c.agents = cluster.agents();
  c.parallel = 2;
  c.params.clear_sizes_bytes();
  c.params.add_sizes_bytes(65536);
  c.params.set_verify(true);
  return c;
}

// Each pair's seed is the run's with the test's identity and attempt.
void ExpectDerivedSeeds(const v1::Run& run) {
  std::set<uint64_t> seeds;
  for (const auto& p : run.pairs()) {
    schedule::Test t;
    t.src = static_cast<uint32_t>(std::stoul(p.src().node().substr(4)));
    t.dst = static_cast<uint32_t>(std::stoul(p.dst().node().substr(4)));
    t.rail = p.rail();
    EXPECT_EQ(p.verify_seed(), run::TestSeed(run.params().seed(), t, p.round(), p.attempts()))
        << p.src().node() << "->" << p.dst().node();
    seeds.insert(p.verify_seed());
  }
  EXPECT_EQ(seeds.size(), static_cast<size_t>(run.pairs_size()));
}

TEST(SweepSeed, EachRunDrawsItsSeedAndEachTestVerifiesItsOwn) {
  run::FakeCluster cluster(4, 2, 100);
  SweepConfig c = Config(cluster);
  ASSERT_EQ(c.params.seed(), limits::kDefaultPatternSeed);
  absl::StatusOr<v1::Run> first = RunSweep(c);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_NE(first->params().seed(), 0u);
  ExpectDerivedSeeds(*first);
  absl::StatusOr<v1::Run> second = RunSweep(c);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_NE(second->params().seed(), first->params().seed());
  ExpectDerivedSeeds(*second);
  // A seed given in the request is the run's.
  c.params.set_seed(99);
  absl::StatusOr<v1::Run> given = RunSweep(c);
  ASSERT_TRUE(given.ok()) << given.status();
  EXPECT_EQ(given->params().seed(), 99u);
  ExpectDerivedSeeds(*given);
}

TEST(SweepSeed, TheJournalRecordsTheSeedsAndAResumeKeepsTheRunsSeed) {
  run::FakeCluster cluster(3, 1, 100);
  SweepConfig c = Config(cluster);
  c.journal_path = (std::filesystem::temp_directory_path() / ("seed.journal." + std::to_string(::getpid()))).string();
  absl::StatusOr<v1::Run> run = RunSweep(c);
  ASSERT_TRUE(run.ok()) << run.status();
  absl::StatusOr<run::JournalContents> j = run::ReadJournal(c.journal_path);
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_EQ(j->header.params().seed(), run->params().seed());
  ASSERT_EQ(j->pairs.size(), static_cast<size_t>(run->pairs_size()));
  for (const auto& p : j->pairs) EXPECT_NE(p.verify_seed(), 0u);
  std::set<uint64_t> journaled, returned;
  for (const auto& p : j->pairs) journaled.insert(p.verify_seed());
  for (const auto& p : run->pairs()) returned.insert(p.verify_seed());
  EXPECT_EQ(journaled, returned);
  c.resume = true;
  absl::StatusOr<v1::Run> resumed = RunSweep(c);
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_EQ(resumed->params().seed(), run->params().seed());
  std::filesystem::remove(c.journal_path);
}

std::string Refused(const std::function<void(v1::SweepParams&)>& set, const FieldNames& names = kSpecFields) {
  v1::SweepSpec s;
  *s.mutable_params() = SweepConfig::DefaultParams();
  set(*s.mutable_params());
  absl::StatusOr<SweepConfig> c = ConfigFromSpec(s, names);
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument) << s.ShortDebugString();
  return std::string(c.status().message());
}

TEST(SweepQos, OutOfRangeValuesAndASlOverRdmaCmAreRefused) {
  EXPECT_THAT(Refused([](v1::SweepParams& p) { p.set_sl(16); }), HasSubstr("params.sl 16: give 0 .. 15"));
  EXPECT_THAT(Refused([](v1::SweepParams& p) { p.set_tclass(256); }),
              HasSubstr("params.tclass 256: give 0 .. 255"));
  EXPECT_THAT(Refused(
                  [](v1::SweepParams& p) {
                    p.set_sl(3);
                    p.set_cm(v1::CONNECTION_MODE_RDMA_CM);
                  },
                  kFlagNames),
              HasSubstr("--sl 3 with --cm rdma_cm: rdma_cm takes the service level from the path"));
  // The bounds themselves, and sl out of band, pass.
  v1::SweepSpec s;
  *s.mutable_params() = SweepConfig::DefaultParams();
  s.mutable_params()->set_sl(limits::kMaxServiceLevel);
  s.mutable_params()->set_tclass(limits::kMaxTrafficClass);
  s.mutable_params()->set_cm(v1::CONNECTION_MODE_OOB);
  EXPECT_TRUE(ConfigFromSpec(s).ok());
}

TEST(SweepQos, ATypedRequestCarriesThemToTheTests) {
  v1::SweepSpec s;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(
                  R"({"params": {"sizesBytes": ["65536"], "iterations": "100", "qps": 1, "txDepth": 128,
                      "postList": 1, "qpTimeout": 14, "cm": "CONNECTION_MODE_OOB", "sl": 3, "tclass": 106,
                      "disablePcieRelaxed": true}})",
                  &s)
                  .ok());
  absl::StatusOr<SweepConfig> c = ConfigFromSpec(s);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->params.sl(), 3u);
  EXPECT_EQ(c->params.tclass(), 106u);
  EXPECT_TRUE(c->params.disable_pcie_relaxed());
}

SweepConfig DryConfig() {
  SweepConfig c;
  c.inventory.source = "fabric.yaml";
  c.inventory.nodes = {{"a", "a:1", {}, 0, 0}, {"b", "b:1", {}, 0, 0}};
  return c;
}

TEST(SweepQos, TheInventoryGivesTheDefaultAndTheRequestOverridesIt) {
  SweepConfig c = DryConfig();
  c.params.set_cm(v1::CONNECTION_MODE_OOB);
  c.inventory.qos.sl = 3;
  c.inventory.qos.tclass = 106;
  absl::StatusOr<run::Plan> plan = PlanWithoutAgents(c);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->params.sl(), 3u);
  EXPECT_EQ(plan->params.tclass(), 106u);
  EXPECT_EQ(DescribeQos(c, kFlagNames),
            "service level 3 (the inventory's qos.sl), traffic class 106 (the inventory's qos.tclass)");
  c.params.set_tclass(96);
  plan = PlanWithoutAgents(c);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->params.tclass(), 96u);
  EXPECT_EQ(plan->params.sl(), 3u);
  EXPECT_EQ(DescribeQos(c, kFlagNames),
            "service level 3 (the inventory's qos.sl), traffic class 96 (--tclass, over the inventory's qos.tclass "
            "106)");
  // Neither: nothing to say, nothing set.
  SweepConfig none = DryConfig();
  EXPECT_EQ(DescribeQos(none), "");
  plan = PlanWithoutAgents(none);
  ASSERT_TRUE(plan.ok());
  EXPECT_FALSE(plan->params.has_sl());
  EXPECT_FALSE(plan->params.has_tclass());
}

TEST(SweepQos, TheInventorysServiceLevelOverRdmaCmIsRefused) {
  SweepConfig c = DryConfig();
  c.params.set_cm(v1::CONNECTION_MODE_RDMA_CM);
  c.inventory.qos.sl = 3;
  absl::StatusOr<run::Plan> plan = PlanWithoutAgents(c);
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(plan.status().message(), HasSubstr("fabric.yaml: qos.sl 3 with rdma_cm"));
  // The request's own service level 0 wins over it.
  c.params.set_sl(0);
  EXPECT_TRUE(PlanWithoutAgents(c).ok());
}

}  // namespace
}  // namespace gdrbench::controller::sweep
