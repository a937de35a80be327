// HandlerAgent: the controller's AgentApi (controller/run/agent_api.h) over
// an in-process AgentHandler, for tests that drive the agent's handler on the
// fake NIC through the controller's pair tester: no gRPC, the same calls.
// Thread safety: as AgentHandler's; `sizes` is atomic.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <string>

#include "agent/service/agent_handler.h"
#include "controller/run/agent_api.h"

namespace gdrbench::agent::service::testing {

namespace run = controller::run;

// The controller's AgentApi over an in-process handler; counts the sizes
// its sweeps answered, and stops a sweep as a cancelled gRPC call would.
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
  absl::Status RunWriteSweep(const v1::RunWriteSweepRequest& r, std::chrono::milliseconds timeout,
                             const std::function<bool(v1::RunWriteSweepResponse&)>& on) override {
    run::StreamStop never;
    return RunWriteSweepWithStop(r, timeout, on, never);
  }
  absl::Status RunWriteSweepWithStop(const v1::RunWriteSweepRequest& r, std::chrono::milliseconds,
                                     const std::function<bool(v1::RunWriteSweepResponse&)>& on,
                                     run::StreamStop& stop) override {
    std::atomic<bool> cancelled{false};
    stop.Attach([&cancelled] { cancelled.store(true); });
    // The handler emits const messages; the controller may take a message's
    // parts, so it gets a copy (as a gRPC reader's own message).
    absl::Status st = h_.RunWriteSweep(
        r,
        [&](const v1::RunWriteSweepResponse& m) {
          if (m.has_size()) sizes.fetch_add(1);
          v1::RunWriteSweepResponse handed = m;
          return on(handed);
        },
        cancelled);
    stop.Attach(nullptr);
    if (cancelled.load()) return absl::CancelledError("RunWriteSweep: stopped by the controller");
    return st;
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

  std::atomic<int> sizes{0};

 private:
  AgentHandler& h_;
};

// The sweep these tests run through the handler on the fake NIC: two small
// sizes (the fake NIC stays below 1600 Gb/s at them), 8 iterations on 2 QPs,
// verified, out of band.
inline v1::SweepParams FakeNicSweepParams() {
  v1::SweepParams p;
  for (uint64_t s : {512, 4096}) p.add_sizes_bytes(s);
  p.set_iterations(8);
  p.set_qps(2);
  p.set_tx_depth(4);
  p.set_verify(true);
  p.set_seed(3);
  p.set_cm(v1::CONNECTION_MODE_OOB);
  return p;
}

}  // namespace gdrbench::agent::service::testing
