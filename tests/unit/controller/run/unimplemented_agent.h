// An AgentApi whose every call answers UNIMPLEMENTED: the base of the unit
// tests' small fakes, which override only the calls they script.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "controller/run/agent_api.h"

namespace gdrbench::controller::run {

class UnimplementedAgent : public AgentApi {
 public:
  absl::StatusOr<v1::NodeInfo> GetNodeInfo() override { return absl::UnimplementedError(""); }
  absl::StatusOr<v1::PreflightReport> RunPreflight(const v1::RunPreflightRequest&) override {
    return absl::UnimplementedError("");
  }
  absl::Status OpenTarget(const v1::OpenTargetRequest&, v1::OpenTargetResponse*) override {
    return absl::UnimplementedError("");
  }
  absl::Status RunWriteSweep(const v1::RunWriteSweepRequest&, std::chrono::milliseconds,
                             const std::function<bool(v1::RunWriteSweepResponse&)>&) override {
    return absl::UnimplementedError("");
  }
  absl::StatusOr<v1::VerifyTargetResponse> VerifyTarget(const v1::VerifyTargetRequest&) override {
    return absl::UnimplementedError("");
  }
  absl::StatusOr<v1::CloseTargetResponse> CloseTarget(const std::string&) override {
    return absl::UnimplementedError("");
  }
};

}  // namespace gdrbench::controller::run
