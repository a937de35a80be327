// The verify pattern's seed (issue 34, item 2: the controller sent seed 1 to
// every test, so a re-test of the same pair and sizes wrote the same
// pattern): each test gets its own, the same one reaches OpenTarget,
// RunWriteSweep and VerifyTarget, and the result records it so
// `gdrbench pair --seed N` runs the test again.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "controller/run/memory_kinds.h"
#include "controller/run/pair_tester.h"
#include "controller/run/runner.h"

namespace gdrbench::controller::run {
namespace {

// Answers every RPC with a passing test and records the seeds it was sent.
class SeedRecordingAgent final : public AgentApi {
 public:
  absl::StatusOr<v1::NodeInfo> GetNodeInfo() override { return v1::NodeInfo(); }
  absl::StatusOr<v1::PreflightReport> RunPreflight(const v1::RunPreflightRequest&) override {
    return v1::PreflightReport();
  }
  absl::Status OpenTarget(const v1::OpenTargetRequest& r, v1::OpenTargetResponse* out) override {
    open_seeds.push_back(r.params().seed());
    out->Clear();
    out->set_target_id("t1");
    out->set_cm(v1::CONNECTION_MODE_RDMA_CM);
    out->add_buffers()->set_rkey(9);
    return absl::OkStatus();
  }
  absl::Status ConnectTarget(const v1::ConnectTargetRequest&) override { return absl::OkStatus(); }
  absl::Status RunWriteSweep(const v1::RunWriteSweepRequest& r, std::chrono::milliseconds,
                             const std::function<bool(v1::RunWriteSweepResponse&)>& on_message) override {
    sweep_seeds.push_back(r.params().seed());
    for (uint64_t size : r.params().sizes_bytes()) {
      v1::RunWriteSweepResponse m;
      m.mutable_size()->set_size_bytes(size);
      m.mutable_size()->set_bw_avg_gbps(90);
      m.mutable_size()->set_status(v1::RESULT_STATUS_OK);
      if (!on_message(m)) return absl::CancelledError("stopped");
    }
    v1::RunWriteSweepResponse s;
    s.mutable_summary()->set_status(v1::RESULT_STATUS_OK);
    return on_message(s) ? absl::OkStatus() : absl::CancelledError("stopped");
  }
  absl::StatusOr<v1::VerifyTargetResponse> VerifyTarget(const v1::VerifyTargetRequest& r) override {
    verify_seeds.push_back(r.seed());
    v1::VerifyTargetResponse v;
    for (uint64_t size : r.sizes_bytes()) {
      v.add_sizes()->set_size_bytes(size);
      v.mutable_sizes()->rbegin()->set_verified(true);
    }
    return v;
  }
  absl::StatusOr<v1::CloseTargetResponse> CloseTarget(const std::string&) override {
    return v1::CloseTargetResponse();
  }

  std::vector<uint64_t> open_seeds, sweep_seeds, verify_seeds;
};

v1::SweepParams Params(bool verify, uint64_t seed) {
  v1::SweepParams p;
  p.add_sizes_bytes(65536);
  p.set_iterations(100);
  p.set_qps(1);
  p.set_verify(verify);
  p.set_seed(seed);
  return p;
}

class VerifySeed : public ::testing::Test {
 protected:
  v1::PairResult Run(const v1::SweepParams& p, const PairTestOptions& o = {}) {
    v1::PairResult r;
    EXPECT_TRUE(RunPairTest(PairSide{&client, "a", "mlx5_0", {}, "host"}, PairSide{&server, "b", "mlx5_0", {}, "host"},
                            p, false, o, &r)
                    .ok());
    EXPECT_EQ(r.status(), v1::RESULT_STATUS_OK) << r.reason();
    return r;
  }
  // The one seed every RPC of the last test carried.
  uint64_t LastSent() {
    EXPECT_EQ(server.open_seeds.back(), client.sweep_seeds.back());
    EXPECT_EQ(server.open_seeds.back(), server.verify_seeds.back());
    return server.open_seeds.back();
  }
  SeedRecordingAgent client, server;
};

TEST_F(VerifySeed, WithoutASeedEachTestDrawsItsOwnAndRecordsIt) {
  const v1::PairResult first = Run(Params(true, 0));
  EXPECT_NE(first.verify_seed(), 0u);
  EXPECT_EQ(LastSent(), first.verify_seed());
  const v1::PairResult second = Run(Params(true, 0));
  EXPECT_EQ(LastSent(), second.verify_seed());
  EXPECT_NE(second.verify_seed(), first.verify_seed());
}

TEST_F(VerifySeed, AGivenSeedRunsTheTestAgainWithIt) {
  // gdrbench pair --seed N: the params' seed as it is.
  EXPECT_EQ(Run(Params(true, 0x5eed)).verify_seed(), 0x5eedu);
  EXPECT_EQ(LastSent(), 0x5eedu);
  // A sweep's test: the options' (derived) seed over the params' (the run's).
  PairTestOptions o;
  o.verify_seed = 42;
  EXPECT_EQ(Run(Params(true, 0x5eed), o).verify_seed(), 42u);
  EXPECT_EQ(LastSent(), 42u);
}

TEST_F(VerifySeed, ATestWithoutVerifyRecordsNone) {
  EXPECT_EQ(Run(Params(false, 0)).verify_seed(), 0u);
  EXPECT_TRUE(server.verify_seeds.empty());
}

TEST_F(VerifySeed, EachMemoryKindOfAPairVerifiesItsOwnPattern) {
  std::vector<KindSides> kinds = {{"host", "host", ""}, {"hugepage", "hugepage", ""}};
  v1::PairResult r;
  PairTestOptions o;
  o.verify_seed = 77;
  ASSERT_TRUE(RunPairTestPerKind(PairSide{&client, "a", "mlx5_0", {}, "host"},
                                 PairSide{&server, "b", "mlx5_0", {}, "host"}, kinds, Params(true, 0), false, o,
                                 &r, [](bool, const absl::Status&) {})
                  .ok());
  ASSERT_EQ(r.memory_halves_size(), 1);
  EXPECT_EQ(r.verify_seed(), 77u);
  EXPECT_EQ(r.memory_halves(0).verify_seed(), DeriveSeed(77, 1));
  EXPECT_NE(r.memory_halves(0).verify_seed(), 77u);
  EXPECT_THAT(server.verify_seeds, ::testing::ElementsAre(77u, DeriveSeed(77, 1)));
}

// Every test of a large run, every retry and retest round: a seed of its
// own, none 0; another run's seeds are others.
TEST(TestSeed, EveryTestOfARunAndEveryAttemptHasItsOwn) {
  std::set<uint64_t> seen, other_run;
  size_t n = 0;
  for (uint32_t src = 0; src < 48; ++src) {
    for (uint32_t dst = 0; dst < 48; ++dst) {
      if (src == dst) continue;
      for (uint32_t rail = 0; rail < 4; ++rail) {
        schedule::Test t{src, dst, rail, false};
        if (rail == 3) t.dst_rail = 1;  // cross-rail
        for (uint32_t attempt = 1; attempt <= 2; ++attempt) {
          const uint32_t round = (src + dst) % 47;
          const uint64_t s = TestSeed(0xabcdef, t, round, attempt);
          EXPECT_NE(s, 0u);
          seen.insert(s);
          other_run.insert(TestSeed(0xabcdf0, t, round, attempt));
          ++n;
        }
      }
    }
  }
  EXPECT_EQ(seen.size(), n);
  for (uint64_t s : other_run) EXPECT_EQ(seen.count(s), 0u);
}

// The runner tells the tester which attempt it runs (a retry must not
// write the pattern of the attempt before).
class FailingOnceTester final : public PairTester {
 public:
  void Run(const PairTestSpec& spec, v1::PairResult* r) override {
    attempts.push_back(spec.attempt);
    r->set_status(spec.attempt == 1 ? v1::RESULT_STATUS_FAILED : v1::RESULT_STATUS_OK);
  }
  std::vector<uint32_t> attempts;
};

TEST(TestSeed, TheRunnerNumbersTheAttempts) {
  std::vector<PlanNode> nodes(2);
  for (uint32_t i = 0; i < 2; ++i) {
    nodes[i].name = "n" + std::to_string(i);
    nodes[i].rails = {inventory::Rail{"nic0", std::nullopt}};
    nodes[i].rail_gbps = {100};
  }
  schedule::ScheduleOptions so;
  so.mode = schedule::Mode::kRing;
  absl::StatusOr<Plan> plan = MakePlan(nodes, "host", so, Params(true, 1));
  ASSERT_TRUE(plan.ok()) << plan.status();
  FailingOnceTester tester;
  RunnerOptions ro;
  ro.parallelism = 1;
  ro.retries = 1;
  ASSERT_TRUE(SweepRunner(*plan, tester, ro).Run({}).ok());
  ASSERT_FALSE(tester.attempts.empty());
  for (size_t i = 0; i < tester.attempts.size(); ++i) EXPECT_EQ(tester.attempts[i], i % 2 + 1);
}

}  // namespace
}  // namespace gdrbench::controller::run
