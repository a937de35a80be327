// --memory host,gpu through the real agent handler on the fake NIC (issue 11
// item 3): the controller's per-kind tester drives OpenTarget ->
// RunWriteSweep (out of band, ConnectTarget) -> CloseTarget once per kind.
// The gpu kind asks for a GPU no machine has (gpu:9999), so the memory layer
// refuses it everywhere (no driver, or no such GPU): that half fails with the
// agent's reason and the host half keeps its measured sizes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "agent/service/agent_handler.h"
#include "controller/run/memory_kinds.h"
#include "tests/unit/agent/bench/fake_sessions.h"

namespace gdrbench::agent::service {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;
namespace run = controller::run;

// The controller's AgentApi over an in-process handler.
class HandlerAgent final : public run::AgentApi {
 public:
  explicit HandlerAgent(AgentHandler& h) : h_(h) {}
  absl::StatusOr<v1::NodeInfo> GetNodeInfo() override { return h_.GetNodeInfo({}); }
  absl::StatusOr<v1::PreflightReport> RunPreflight(const v1::RunPreflightRequest& r) override {
    return h_.RunPreflight(r);
  }
  absl::Status OpenTarget(const v1::OpenTargetRequest& r, v1::OpenTargetResponse* out) override {
    auto resp = h_.OpenTarget(r);
    if (!resp.ok()) return resp.status();
    *out = std::move(*resp);
    return absl::OkStatus();
  }
  absl::Status RunWriteSweep(const v1::RunWriteSweepRequest& r, std::chrono::milliseconds,
                             const std::function<bool(v1::RunWriteSweepResponse&)>& on) override {
    std::atomic<bool> cancelled{false};
    // The handler emits const messages; the controller may take a message's
    // parts, so it gets a copy (as a gRPC reader's own message).
    return h_.RunWriteSweep(
        r, [&](const v1::RunWriteSweepResponse& m) {
          v1::RunWriteSweepResponse handed = m;
          return on(handed);
        },
        cancelled);
  }
  absl::Status ConnectTarget(const v1::ConnectTargetRequest& r) override {
    return h_.ConnectTarget(r).status();
  }
  absl::StatusOr<v1::VerifyTargetResponse> VerifyTarget(const v1::VerifyTargetRequest& r) override {
    return h_.VerifyTarget(r);
  }
  absl::StatusOr<v1::CloseTargetResponse> CloseTarget(const std::string& id) override {
    v1::CloseTargetRequest c;
    c.set_target_id(id);
    return h_.CloseTarget(c);
  }

 private:
  AgentHandler& h_;
};

TEST(MemoryKindsOnTheFakeNic, TheGpuHalfFailsWithTheAgentsReasonAndTheHostHalfIsMeasuredAndVerified) {
  auto factory = std::make_shared<bench::testing::FakeSessionFactory>();
  AgentHandler handler{AgentConfig{.fs_root = "/", .devices = {}}, factory};
  HandlerAgent agent(handler);
  v1::SweepParams p;
  for (uint64_t s : {512, 4096}) p.add_sizes_bytes(s);  // the fake NIC stays below 1600 Gb/s here
  p.set_iterations(8);
  p.set_qps(2);
  p.set_tx_depth(4);
  p.set_verify(true);
  p.set_seed(3);
  p.set_cm(v1::CONNECTION_MODE_OOB);
  v1::PairResult r;
  r.mutable_src()->set_node("A");
  r.mutable_dst()->set_node("B");
  run::PairSide init{&agent, "A", "fake0", "", "host"};
  run::PairSide target{&agent, "B", "fake1", "", "host"};
  absl::Status rpc = run::RunPairTestPerKind(
      init, target, {{"host", "host", ""}, {"gpu:9999", "gpu:9999", ""}}, p, false,
      run::PairTestOptions{}, &r, [](bool, const absl::Status&) {});
  EXPECT_FALSE(rpc.ok());  // OpenTarget refused the GPU memory

  EXPECT_EQ(r.status(), v1::RESULT_STATUS_OK) << r.reason();
  EXPECT_EQ(r.dst().memory_kind(), "host");
  ASSERT_EQ(r.sizes_size(), 2);
  for (const auto& s : r.sizes()) {
    EXPECT_EQ(s.status(), v1::RESULT_STATUS_OK) << s.error();
    EXPECT_TRUE(s.verified());
    EXPECT_GT(s.bw_avg_gbps(), 0);
    EXPECT_EQ(s.staged_bw_avg_gbps(), 0);  // host memory stages nothing
  }
  ASSERT_EQ(r.memory_halves_size(), 1);
  const v1::PairResult& gpu = r.memory_halves(0);
  EXPECT_EQ(gpu.status(), v1::RESULT_STATUS_ERROR);
  EXPECT_THAT(gpu.reason(), HasSubstr("OpenTarget on B: "));
  // No driver here, or (on a GPU machine) no such GPU: the memory layer's words.
  EXPECT_THAT(gpu.reason(), AnyOf(HasSubstr("no NVIDIA driver"), HasSubstr("no GPU \"9999\"")));
  EXPECT_EQ(gpu.sizes_size(), 0);
  EXPECT_EQ(r.gpu_host_ratio(), 0);

  // The refused half held nothing: the same handler runs the next test.
  v1::PairResult again;
  ASSERT_TRUE(run::RunPairTestPerKind(init, target, {{"host", "host", ""}}, p, false,
                                      run::PairTestOptions{}, &again, [](bool, const absl::Status&) {})
                  .ok());
  EXPECT_EQ(again.status(), v1::RESULT_STATUS_OK) << again.reason();
}

}  // namespace
}  // namespace gdrbench::agent::service
