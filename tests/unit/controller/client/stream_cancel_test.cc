// The controller stops a RunWriteSweep stream at the first impossible answer
// (issue 12, item 7) instead of reading to the sweep's deadline: a real
// agent server on loopback (its handler sends one impossible size, then
// would stream for 30 s) and the real client and pair tester.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "agent/service/server.h"
#include "controller/run/agent_api.h"
#include "controller/run/grpc_agent_api.h"
#include "controller/run/pair_tester.h"

namespace gdrbench::controller {
namespace {

using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

// Answers OpenTarget/CloseTarget; its sweep sends `first`, then a size
// every 10 ms for 30 s unless cancelled. Records whether it saw the cancel.
class ImpossibleAgent : public agent::service::AgentHandler {
 public:
  ImpossibleAgent(const agent::service::AgentConfig& c, std::atomic<int>* cancelled_after_ms)
      : AgentHandler(c), cancelled_after_ms_(cancelled_after_ms) {}
  absl::StatusOr<v1::OpenTargetResponse> OpenTarget(const v1::OpenTargetRequest&) override {
    v1::OpenTargetResponse r;
    r.set_target_id("t1");
    r.set_address("127.0.0.1");
    r.set_cm(v1::CONNECTION_MODE_RDMA_CM);
    return r;
  }
  absl::StatusOr<v1::CloseTargetResponse> CloseTarget(const v1::CloseTargetRequest&) override {
    return v1::CloseTargetResponse();
  }
  absl::Status RunWriteSweep(const v1::RunWriteSweepRequest&,
                             const std::function<bool(const v1::RunWriteSweepResponse&)>& emit,
                             const std::atomic<bool>& cancelled) override {
    const auto t0 = Clock::now();
    v1::RunWriteSweepResponse m;
    m.mutable_size()->set_size_bytes(65536);
    m.mutable_size()->set_bw_avg_gbps(5000);  // no NIC carries 5 Tb/s
    m.mutable_size()->set_status(v1::RESULT_STATUS_OK);
    emit(m);
    m.mutable_size()->set_bw_avg_gbps(90);
    while (Clock::now() - t0 < std::chrono::seconds(30)) {
      if (cancelled || !emit(m)) {
        cancelled_after_ms_->store(static_cast<int>(
            std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count()));
        return absl::CancelledError("the controller went away");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return absl::OkStatus();
  }

 private:
  std::atomic<int>* cancelled_after_ms_;
};

TEST(StreamCancel, TheFirstImpossibleAnswerEndsTheStreamNotTheDeadline) {
  std::atomic<int> cancelled_after_ms{-1};
  agent::service::AgentServerConfig cfg;
  cfg.listen = "127.0.0.1:0";
  cfg.tls.insecure = true;
  cfg.make_handler = [&](const agent::service::AgentConfig& c) {
    return std::make_unique<ImpossibleAgent>(c, &cancelled_after_ms);
  };
  auto server = agent::service::AgentServer::Start(cfg);
  ASSERT_TRUE(server.ok()) << server.status();

  AgentClientConfig client;
  client.address = "127.0.0.1:" + std::to_string((*server)->port());
  client.tls.insecure = true;
  auto api = run::GrpcAgentApi::Create(client);
  ASSERT_TRUE(api.ok()) << api.status();
  run::PairSide a{api->get(), "nodeA", "mlx5_0", "", "host"};
  run::PairSide b{api->get(), "nodeB", "mlx5_1", "", "host"};
  v1::SweepParams p;
  p.add_sizes_bytes(65536);
  p.add_sizes_bytes(1 << 20);
  run::PairTestOptions o;
  o.sweep_timeout = std::chrono::seconds(30);
  v1::PairResult r;
  const auto t0 = Clock::now();
  absl::Status st = run::RunPairTest(a, b, p, false, o, &r);
  const auto took = Clock::now() - t0;

  EXPECT_TRUE(st.ok()) << st;  // the agent answered: not an unreachable agent
  EXPECT_EQ(r.status(), v1::RESULT_STATUS_ERROR) << r.reason();
  EXPECT_THAT(r.reason(), HasSubstr("the agent answered the impossible"));
  EXPECT_EQ(r.sizes_size(), 0);
  EXPECT_LT(took, std::chrono::seconds(5)) << "read to the deadline";
  // The agent's sweep saw the cancellation (within the server's own poll).
  for (int i = 0; i < 200 && cancelled_after_ms.load() < 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_GE(cancelled_after_ms.load(), 0) << "the agent's sweep was never told";
  EXPECT_LT(cancelled_after_ms.load(), 5000);
  (*server)->Shutdown(1000);
}

}  // namespace
}  // namespace gdrbench::controller
