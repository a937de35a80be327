#include "controller/run/grpc_agent_api.h"

#include "common/status.h"

namespace gdrbench::controller::run {

absl::StatusOr<std::unique_ptr<GrpcAgentApi>> GrpcAgentApi::Create(AgentClientConfig config) {
  GDR_ASSIGN_OR_RETURN(auto client, AgentClient::Create(std::move(config)));
  return std::unique_ptr<GrpcAgentApi>(new GrpcAgentApi(std::move(client)));
}

absl::StatusOr<std::unique_ptr<GrpcAgentApi>> GrpcAgentApi::Create(AgentClientConfig config,
                                                                   std::shared_ptr<AgentChannels> channels) {
  GDR_ASSIGN_OR_RETURN(auto client, AgentClient::Create(std::move(config), std::move(channels)));
  return std::unique_ptr<GrpcAgentApi>(new GrpcAgentApi(std::move(client)));
}

}  // namespace gdrbench::controller::run
