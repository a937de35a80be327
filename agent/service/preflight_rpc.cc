// RunPreflight: the agent side of the GPUDirect RDMA checklist.
#include "agent/service/agent_handler.h"

namespace gdrbench::agent::service {

absl::StatusOr<v1::PreflightReport> AgentHandler::RunPreflight(const v1::RunPreflightRequest&) {
  return absl::UnimplementedError(
      "RunPreflight is not in this agent yet: the preflight checks (agent/preflight) have not "
      "landed");
}

}  // namespace gdrbench::agent::service
