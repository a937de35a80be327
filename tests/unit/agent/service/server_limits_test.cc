// The agent's server under calls that never return (issue 12, items 4 and
// 5): a handler stuck in the kernel is modelled by one blocked on a latch.
// An in-process server on loopback, a real gRPC client.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "agent/service/server.h"
#include "gdrbench/v1/agent.grpc.pb.h"
#include "grpcpp/create_channel.h"

namespace gdrbench::agent::service {
namespace {

using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

// Blocks RunPreflight and RunWriteSweep until released, ignoring
// cancellation, as a read of a hung driver file does.
class StuckHandler : public AgentHandler {
 public:
  struct Latch {
    std::mutex mu;
    std::condition_variable cv;
    bool released = false;
    int entered = 0;
    void Block() {
      std::unique_lock lock(mu);
      ++entered;
      cv.notify_all();
      cv.wait(lock, [&] { return released; });
    }
    void Release() {
      std::lock_guard lock(mu);
      released = true;
      cv.notify_all();
    }
    bool WaitEntered(int n) {
      std::unique_lock lock(mu);
      return cv.wait_for(lock, std::chrono::seconds(5), [&] { return entered >= n; });
    }
  };
  StuckHandler(const AgentConfig& c, std::shared_ptr<Latch> latch)
      : AgentHandler(c), latch_(std::move(latch)) {}
  absl::StatusOr<v1::PreflightReport> RunPreflight(const v1::RunPreflightRequest&) override {
    latch_->Block();
    return v1::PreflightReport();
  }
  absl::Status RunWriteSweep(const v1::RunWriteSweepRequest&,
                             const std::function<bool(const v1::RunWriteSweepResponse&)>&,
                             const std::atomic<bool>&) override {
    latch_->Block();
    return absl::OkStatus();
  }

 private:
  std::shared_ptr<Latch> latch_;
};

class ServerLimits : public ::testing::Test {
 protected:
  void StartServer(PreflightCallLimits limits = {}) {
    AgentServerConfig cfg;
    cfg.listen = "127.0.0.1:0";
    cfg.tls.insecure = true;
    cfg.preflight = limits;
    cfg.make_handler = [latch = latch_](const AgentConfig& c) {
      return std::make_unique<StuckHandler>(c, latch);
    };
    auto s = AgentServer::Start(cfg);
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
    stub_ = v1::Agent::NewStub(grpc::CreateChannel(
        "127.0.0.1:" + std::to_string(server_->port()), grpc::InsecureChannelCredentials()));
  }
  void TearDown() override {
    latch_->Release();
    for (auto& t : calls_) t.join();
    server_.reset();
  }
  // A RunPreflight call on its own thread; its status lands in `out`.
  void PreflightInBackground(grpc::Status* out, int deadline_s = 20) {
    calls_.emplace_back([this, out, deadline_s] {
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(deadline_s));
      v1::PreflightReport report;
      *out = stub_->RunPreflight(&ctx, v1::RunPreflightRequest(), &report);
    });
  }
  grpc::Status NodeInfoWithin(std::chrono::milliseconds d) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + d);
    v1::NodeInfo info;
    return stub_->GetNodeInfo(&ctx, v1::GetNodeInfoRequest(), &info);
  }

  std::shared_ptr<StuckHandler::Latch> latch_ = std::make_shared<StuckHandler::Latch>();
  std::unique_ptr<AgentServer> server_;
  std::unique_ptr<v1::Agent::Stub> stub_;
  std::vector<std::thread> calls_;
  grpc::Status a_, b_;  // joined in TearDown, after the test body
};

// Item 4: two stuck preflight runs used to take both callback threads.
TEST_F(ServerLimits, TwoStuckPreflightRunsLeaveGetNodeInfoAnsweringWithinASecond) {
  StartServer();
  PreflightInBackground(&a_);
  PreflightInBackground(&b_);
  ASSERT_TRUE(latch_->WaitEntered(2));
  for (int i = 0; i < 3; ++i) {
    grpc::Status st = NodeInfoWithin(std::chrono::milliseconds(1000));
    EXPECT_TRUE(st.ok()) << st.error_code() << " " << st.error_message();
  }
  // A third run is refused at once, naming the limit.
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
  v1::PreflightReport report;
  grpc::Status third = stub_->RunPreflight(&ctx, v1::RunPreflightRequest(), &report);
  EXPECT_EQ(third.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << third.error_message();
  EXPECT_THAT(third.error_message(), HasSubstr("2 preflight runs are already in progress"));
}

TEST_F(ServerLimits, AStuckPreflightRunIsAnsweredAtTheRunDeadline) {
  StartServer({.max_runs = 2, .run_deadline_ms = 300});
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1::PreflightReport report;
  auto t0 = Clock::now();
  grpc::Status st = stub_->RunPreflight(&ctx, v1::RunPreflightRequest(), &report);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << st.error_message();
  EXPECT_THAT(st.error_message(), HasSubstr("preflight did not finish within 0.3 s"));
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(3));
}

// Item 5: Shutdown waits for every handler, so a stuck one kept the agent up
// after SIGTERM. Stuck preflights are cancelled; a stuck sweep bounds Drain.
TEST_F(ServerLimits, DrainCancelsStuckPreflightRuns) {
  StartServer();
  PreflightInBackground(&a_);
  ASSERT_TRUE(latch_->WaitEntered(1));
  auto t0 = Clock::now();
  EXPECT_TRUE(server_->Drain(2000));
  EXPECT_LT(Clock::now() - t0, std::chrono::milliseconds(1500));
  calls_.back().join();  // the client got its answer, not its 20 s deadline
  calls_.pop_back();
  EXPECT_LT(Clock::now() - t0, std::chrono::milliseconds(2500));
  // CANCELLED by the reactor, or UNAVAILABLE when the connection closed first.
  EXPECT_FALSE(a_.ok());
}

TEST_F(ServerLimits, DrainReturnsAtItsBoundWhenAHandlerNeverReturns) {
  StartServer();
  calls_.emplace_back([this] {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    auto reader = stub_->RunWriteSweep(&ctx, v1::RunWriteSweepRequest());
    v1::RunWriteSweepResponse msg;
    while (reader->Read(&msg)) {
    }
    (void)reader->Finish();
  });
  ASSERT_TRUE(latch_->WaitEntered(1));
  auto t0 = Clock::now();
  EXPECT_FALSE(server_->Drain(800));
  auto took = Clock::now() - t0;
  EXPECT_GE(took, std::chrono::milliseconds(700));
  EXPECT_LT(took, std::chrono::milliseconds(1500));
}

// Item 11: a request string of 8 KiB or more was echoed into the error; the
// client then got "received initial metadata size exceeds limit" and the
// next call on the connection could fail too.
TEST_F(ServerLimits, AnOverlongRequestStringIsInvalidArgumentAndTheConnectionStaysUsable) {
  StartServer();
  for (int i = 0; i < 2; ++i) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    v1::OpenTargetRequest req;
    req.set_device(std::string(9000 + i, 'x'));
    req.mutable_params()->set_memory("host");
    req.mutable_params()->add_sizes_bytes(65536);
    req.mutable_params()->set_qps(1);
    v1::OpenTargetResponse resp;
    grpc::Status st = stub_->OpenTarget(&ctx, req, &resp);
    // The handler's own answer (no such device here), not gRPC's metadata limit.
    EXPECT_FALSE(st.ok());
    EXPECT_THAT(st.error_message(), ::testing::Not(HasSubstr("metadata"))) << st.error_message().substr(0, 200);
    EXPECT_THAT(st.error_message(), HasSubstr("xxxx"));
    EXPECT_LE(st.error_message().size(), 1100u);
  }
  EXPECT_TRUE(NodeInfoWithin(std::chrono::milliseconds(2000)).ok());
}

}  // namespace
}  // namespace gdrbench::agent::service
