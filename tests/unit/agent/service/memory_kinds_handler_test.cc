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
#include "tests/unit/agent/service/handler_agent.h"

namespace gdrbench::agent::service {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;
namespace run = controller::run;
using ::gdrbench::agent::service::testing::FakeNicSweepParams;
using ::gdrbench::agent::service::testing::HandlerAgent;

TEST(MemoryKindsOnTheFakeNic, TheGpuHalfFailsWithTheAgentsReasonAndTheHostHalfIsMeasuredAndVerified) {
  auto factory = std::make_shared<bench::testing::FakeSessionFactory>();
  AgentHandler handler{AgentConfig{.fs_root = "/", .devices = {}}, factory};
  HandlerAgent agent(handler);
  const v1::SweepParams p = FakeNicSweepParams();
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
