// --memory host,gpu (issue 11 item 3): every test once per kind, back to back
// on the same pair, NICs and QP count; a kind that fails fails only its own
// half; the GPU/host ratios. Agents scripted per memory kind.
#include "controller/run/memory_kinds.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "controller/run/plan.h"
#include "tests/unit/controller/run/unimplemented_agent.h"

namespace gdrbench::controller::run {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string KindOf(const std::string& spec) { return spec.substr(0, spec.find(':')); }

// One agent playing either side. A target refuses GPU memory when
// `gpu_refused` is set (as an agent on a node without a GPU does); the
// initiator streams each size at `gbps[kind][size]` (gpu-staged: `staged`
// as copy + wire).
class KindAgent final : public UnimplementedAgent {
 public:
  absl::Status OpenTarget(const v1::OpenTargetRequest& r, v1::OpenTargetResponse* out) override {
    calls.push_back("OpenTarget " + r.params().memory());
    opens.push_back(r);
    if (!gpu_refused.empty() && KindOf(r.params().memory()).rfind("gpu", 0) == 0) {
      return absl::FailedPreconditionError(gpu_refused);
    }
    v1::OpenTargetResponse resp;
    resp.set_target_id("t" + std::to_string(opens.size()));
    resp.set_memory_kind(KindOf(r.params().memory()));
    resp.set_registration("ibv_reg_mr");
    resp.set_cm(v1::CONNECTION_MODE_RDMA_CM);
    for (uint32_t q = 0; q < r.params().qps(); ++q) resp.add_buffers()->set_rkey(q + 1);
    *out = std::move(resp);
    return absl::OkStatus();
  }
  absl::Status RunWriteSweep(const v1::RunWriteSweepRequest& r, std::chrono::milliseconds,
                             const std::function<bool(v1::RunWriteSweepResponse&)>& on) override {
    calls.push_back("RunWriteSweep " + r.params().memory());
    sweeps.push_back(r);
    const std::string kind = KindOf(r.params().memory());
    for (uint64_t size : r.params().sizes_bytes()) {
      v1::RunWriteSweepResponse m;
      v1::SizeResult* s = m.mutable_size();
      s->set_size_bytes(size);
      s->set_iterations(100);
      s->set_status(v1::RESULT_STATUS_OK);
      s->set_bw_avg_gbps(gbps[kind][size]);
      if (kind == "gpu-staged") s->set_staged_bw_avg_gbps(staged[size]);
      if (!on(m)) return absl::CancelledError("stopped");
    }
    v1::RunWriteSweepResponse m;
    m.mutable_summary()->set_status(v1::RESULT_STATUS_OK);
    m.mutable_summary()->set_memory_kind(kind);
    m.mutable_summary()->set_registration("ibv_reg_mr");
    m.mutable_summary()->set_qps(r.params().qps());
    on(m);
    return absl::OkStatus();
  }
  absl::StatusOr<v1::CloseTargetResponse> CloseTarget(const std::string& id) override {
    calls.push_back("CloseTarget " + id);
    return v1::CloseTargetResponse{};
  }

  std::string gpu_refused;
  std::map<std::string, std::map<uint64_t, double>> gbps;
  std::map<uint64_t, double> staged;
  std::vector<std::string> calls;
  std::vector<v1::OpenTargetRequest> opens;
  std::vector<v1::RunWriteSweepRequest> sweeps;
};

v1::SweepParams Params() {
  v1::SweepParams p;
  p.add_sizes_bytes(65536);
  p.add_sizes_bytes(1 << 20);
  p.set_iterations(100);
  p.set_qps(2);
  return p;
}

class PerKind : public ::testing::Test {
 protected:
  PerKind() {
    for (auto* a : {&client, &server}) {
      a->gbps["host"] = {{65536, 80}, {1 << 20, 100}};
      a->gbps["gpu"] = {{65536, 70}, {1 << 20, 50}};
      a->gbps["gpu-staged"] = {{65536, 80}, {1 << 20, 99}};
      a->staged = {{65536, 30}, {1 << 20, 40}};
    }
    result.mutable_src()->set_node("nodeA");
    result.mutable_src()->set_nic_device("mlx5_0");
    result.mutable_dst()->set_node("nodeB");
    result.mutable_dst()->set_nic_device("mlx5_1");
    result.set_rail(1);
    result.set_round(3);
    result.set_expected_gbps(200);
  }
  absl::Status Run(const std::vector<KindSides>& kinds) {
    PairSide init{&client, "nodeA", "mlx5_0", "", "ignored"};
    PairSide target{&server, "nodeB", "mlx5_1", "", "ignored"};
    return RunPairTestPerKind(init, target, kinds, Params(), false, PairTestOptions{}, &result,
                              [](bool, const absl::Status&) {});
  }
  KindAgent client, server;
  v1::PairResult result;
};

TEST_F(PerKind, AGpuHalfRefusedByTheTargetFailsAloneAndTheHostHalfKeepsItsNumbers) {
  server.gpu_refused = "gpu:0: no NVIDIA driver on this node (libcuda.so.1 not found); no host fallback";
  absl::Status rpc = Run({{"host", "host", ""}, {"gpu:0", "gpu:0", ""}});
  EXPECT_EQ(rpc.code(), absl::StatusCode::kFailedPrecondition);  // the first RPC error, as RunPairTest
  // The host half is the result itself, untouched by the GPU failure.
  EXPECT_EQ(result.status(), v1::RESULT_STATUS_OK) << result.reason();
  ASSERT_EQ(result.sizes_size(), 2);
  EXPECT_EQ(result.sizes(1).bw_avg_gbps(), 100);
  EXPECT_EQ(result.src().memory(), "host");
  EXPECT_EQ(result.dst().memory_kind(), "host");
  ASSERT_EQ(result.memory_halves_size(), 1);
  const v1::PairResult& gpu = result.memory_halves(0);
  EXPECT_EQ(gpu.status(), v1::RESULT_STATUS_ERROR);
  EXPECT_THAT(gpu.reason(), HasSubstr("OpenTarget on nodeB: gpu:0: no NVIDIA driver"));
  EXPECT_EQ(gpu.sizes_size(), 0);
  // The same pair: identity copied, the kind's own memory.
  EXPECT_EQ(gpu.src().node(), "nodeA");
  EXPECT_EQ(gpu.dst().nic_device(), "mlx5_1");
  EXPECT_EQ(gpu.rail(), 1u);
  EXPECT_EQ(gpu.round(), 3u);
  EXPECT_EQ(gpu.expected_gbps(), 200);
  EXPECT_EQ(gpu.src().memory(), "gpu:0");
  EXPECT_EQ(gpu.memory_halves_size(), 0);
  // Back to back: host's whole sequence, then the gpu kind's OpenTarget.
  EXPECT_THAT(server.calls, ElementsAre("OpenTarget host", "CloseTarget t1", "OpenTarget gpu:0"));
  EXPECT_THAT(client.calls, ElementsAre("RunWriteSweep host"));
  EXPECT_EQ(result.gpu_host_ratio(), 0);
}

TEST_F(PerKind, EveryKindRunsOnTheSameNicsAndQpsAndTheRatiosUseTheLargestCommonSize) {
  absl::Status rpc = Run({{"host", "host", ""}, {"gpu:0", "gpu:1", ""}, {"gpu-staged:0", "gpu-staged:1", ""}});
  ASSERT_TRUE(rpc.ok()) << rpc;
  ASSERT_EQ(server.opens.size(), 3u);
  ASSERT_EQ(client.sweeps.size(), 3u);
  for (size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(server.opens[k].device(), "mlx5_1");
    EXPECT_EQ(server.opens[k].params().qps(), 2u);
    EXPECT_EQ(client.sweeps[k].device(), "mlx5_0");
    EXPECT_EQ(client.sweeps[k].params().qps(), 2u);
  }
  EXPECT_EQ(server.opens[1].params().memory(), "gpu:1");  // each side its own GPU
  EXPECT_EQ(client.sweeps[1].params().memory(), "gpu:0");
  ASSERT_EQ(result.memory_halves_size(), 2);
  for (const auto& h : result.memory_halves()) EXPECT_EQ(h.status(), v1::RESULT_STATUS_OK) << h.reason();
  EXPECT_DOUBLE_EQ(result.gpu_host_ratio(), 50.0 / 100);     // at 1 MiB
  EXPECT_DOUBLE_EQ(result.staged_host_ratio(), 40.0 / 100);  // copy + wire, not the wire's 99
}

TEST_F(PerKind, AKindThatCannotRunOnThePairMakesNoCallAndSaysWhy) {
  absl::Status rpc = Run({{"host", "host", ""}, {"gpu", "gpu", "gpu memory: rail 1 of node nodeB has no GPU"}});
  EXPECT_TRUE(rpc.ok()) << rpc;
  ASSERT_EQ(result.memory_halves_size(), 1);
  EXPECT_EQ(result.memory_halves(0).status(), v1::RESULT_STATUS_ERROR);
  EXPECT_EQ(result.memory_halves(0).reason(), "gpu memory: rail 1 of node nodeB has no GPU");
  EXPECT_EQ(server.opens.size(), 1u);
  EXPECT_EQ(result.status(), v1::RESULT_STATUS_OK);
}

TEST_F(PerKind, AFailedFirstKindDoesNotStopTheNext) {
  server.gpu_refused = "no GPU";
  EXPECT_EQ(Run({{"gpu:0", "gpu:0", ""}, {"host", "host", ""}}).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(result.status(), v1::RESULT_STATUS_ERROR);
  ASSERT_EQ(result.memory_halves_size(), 1);
  EXPECT_EQ(result.memory_halves(0).status(), v1::RESULT_STATUS_OK);
  EXPECT_EQ(result.memory_halves(0).sizes(1).bw_avg_gbps(), 100);
}

TEST(SplitMemoryKinds, ListsOneOrMoreKindsAndRefusesEmptyOrRepeatedOnes) {
  EXPECT_THAT(*SplitMemoryKinds("host"), ElementsAre("host"));
  EXPECT_THAT(*SplitMemoryKinds("host, gpu,gpu-staged"), ElementsAre("host", "gpu", "gpu-staged"));
  auto empty = SplitMemoryKinds("host,,gpu");
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(empty.status().message()), HasSubstr("an empty kind"));
  auto twice = SplitMemoryKinds("gpu,host,gpu");
  EXPECT_THAT(std::string(twice.status().message()), HasSubstr("gpu is named twice"));
  EXPECT_TRUE(AnyGpuKind("host,gpu-staged"));
  EXPECT_FALSE(AnyGpuKind("host,hugepage"));
}

// The sweep's tester: a list runs each kind with each rail's GPU; a rail
// without a GPU fails only the GPU half (a one-kind gpu plan is refused by
// MakePlan instead).
TEST(AgentPairTesterKinds, ARailWithoutAGpuFailsOnlyTheGpuHalf) {
  KindAgent a, b;
  for (auto* x : {&a, &b}) x->gbps["host"] = {{65536, 80}, {1 << 20, 100}};
  std::vector<PlanNode> nodes(2);
  nodes[0].name = "a";
  nodes[0].rails = {inventory::Rail{"mlx5_0", 2}};
  nodes[1].name = "b";
  nodes[1].rails = {inventory::Rail{"mlx5_0", std::nullopt}};
  schedule::ScheduleOptions so;
  so.mode = schedule::Mode::kPairs;
  so.pairs = {{0, 1}};
  // MakePlan refuses both a one-kind gpu plan and a list naming gpu on such
  // a rail (issue 32: the list used to run, exit 0); the tester still fails
  // only the GPU half of a plan whose rail lost its GPU after planning.
  auto single = MakePlan(nodes, "gpu", so, Params());
  EXPECT_EQ(single.status().code(), absl::StatusCode::kInvalidArgument);
  auto list = MakePlan(nodes, "host,gpu", so, Params());
  EXPECT_EQ(list.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(list.status().message()),
              HasSubstr("rail 0 (NIC 'mlx5_0') of node b has no GPU: give rails as {nic, gpu} in the inventory, "
                        "or leave the GPU kinds out of the list"));
  nodes[1].rails[0].gpu = 3;
  auto plan = MakePlan(nodes, "host,gpu", so, Params());
  ASSERT_TRUE(plan.ok()) << plan.status();
  plan->nodes[1].rails[0].gpu.reset();

  AgentPairTester tester({&a, &b}, AgentPairTesterOptions{});
  PairTestSpec spec{&*plan, schedule::Test{0, 1, 0, false}, 0};
  v1::PairResult r;
  FillIdentity(spec, &r);
  EXPECT_EQ(r.src().memory(), "host");
  tester.Run(spec, &r);
  EXPECT_EQ(r.status(), v1::RESULT_STATUS_OK) << r.reason();
  ASSERT_EQ(r.memory_halves_size(), 1);
  EXPECT_EQ(r.memory_halves(0).src().memory(), "gpu:2");
  EXPECT_EQ(r.memory_halves(0).status(), v1::RESULT_STATUS_ERROR);
  EXPECT_THAT(r.memory_halves(0).reason(), HasSubstr("gpu memory: rail 0 of node b has no GPU"));
  EXPECT_THAT(b.calls, ElementsAre("OpenTarget host", "CloseTarget t1"));
}

}  // namespace
}  // namespace gdrbench::controller::run
