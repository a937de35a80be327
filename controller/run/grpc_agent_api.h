// GrpcAgentApi: AgentApi over gRPC, a thin adapter over AgentClient
// (controller/client: deadlines, TLS). Error codes: agent_api.h's.
// Thread safety: every method may be called concurrently.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "controller/client/agent_client.h"
#include "controller/run/agent_api.h"

namespace gdrbench::controller::run {

class GrpcAgentApi final : public AgentApi {
 public:
  // INVALID_ARGUMENT for a malformed address or TLS config; does not connect.
  static absl::StatusOr<std::unique_ptr<GrpcAgentApi>> Create(AgentClientConfig config);
  // Its channels from `channels`, shared with the fleet's other agents
  // (agent_client.h).
  static absl::StatusOr<std::unique_ptr<GrpcAgentApi>> Create(AgentClientConfig config,
                                                              std::shared_ptr<AgentChannels> channels);

  absl::StatusOr<v1::NodeInfo> GetNodeInfo() override { return client_->GetNodeInfo(); }
  absl::StatusOr<v1::PreflightReport> RunPreflight(const v1::RunPreflightRequest& r) override {
    return client_->RunPreflight(r);
  }
  absl::Status OpenTarget(const v1::OpenTargetRequest& r, v1::OpenTargetResponse* response) override {
    return client_->OpenTarget(r, response);
  }
  absl::Status RunWriteSweep(const v1::RunWriteSweepRequest& r, std::chrono::milliseconds timeout,
                             const std::function<bool(v1::RunWriteSweepResponse&)>& on_message) override {
    return client_->RunWriteSweep(r, timeout, on_message);
  }
  absl::Status RunWriteSweepWithStop(const v1::RunWriteSweepRequest& r, std::chrono::milliseconds timeout,
                                     const std::function<bool(v1::RunWriteSweepResponse&)>& on_message,
                                     StreamStop& stop) override {
    return client_->RunWriteSweep(r, timeout, on_message,
                                  [&stop](std::function<void()> cancel) { stop.Attach(std::move(cancel)); });
  }
  absl::Status ConnectTarget(const v1::ConnectTargetRequest& r) override { return client_->ConnectTarget(r); }
  absl::StatusOr<v1::VerifyTargetResponse> VerifyTarget(const v1::VerifyTargetRequest& r) override {
    return client_->VerifyTarget(r);
  }
  absl::StatusOr<v1::CloseTargetResponse> CloseTarget(const std::string& id) override {
    return client_->CloseTarget(id);
  }

 private:
  explicit GrpcAgentApi(std::unique_ptr<AgentClient> c) : client_(std::move(c)) {}
  std::unique_ptr<AgentClient> client_;
};

}  // namespace gdrbench::controller::run
