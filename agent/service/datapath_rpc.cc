// OpenTarget, RunWriteSweep, VerifyTarget, CloseTarget: the data path RPCs.
#include "agent/service/agent_handler.h"

namespace gdrbench::agent::service {

absl::StatusOr<v1::OpenTargetResponse> AgentHandler::OpenTarget(const v1::OpenTargetRequest&) {
  return absl::UnimplementedError(
      "OpenTarget is not in this agent yet: the RDMA data path (agent/verbs, agent/memory) has "
      "not landed");
}

absl::Status AgentHandler::RunWriteSweep(
    const v1::RunWriteSweepRequest&, const std::function<bool(const v1::RunWriteSweepResponse&)>&,
    const std::atomic<bool>&) {
  return absl::UnimplementedError(
      "RunWriteSweep is not in this agent yet: the RDMA WRITE sweep (agent/bench) has not landed");
}

absl::StatusOr<v1::VerifyTargetResponse> AgentHandler::VerifyTarget(
    const v1::VerifyTargetRequest&) {
  return absl::UnimplementedError(
      "VerifyTarget is not in this agent yet: the RDMA data path has not landed");
}

absl::StatusOr<v1::CloseTargetResponse> AgentHandler::CloseTarget(const v1::CloseTargetRequest&) {
  return absl::UnimplementedError(
      "CloseTarget is not in this agent yet: the RDMA data path has not landed");
}

}  // namespace gdrbench::agent::service
