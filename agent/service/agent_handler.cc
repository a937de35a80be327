#include "agent/service/agent_handler.h"

#include "agent/service/node_info.h"

namespace gdrbench::agent::service {

AgentHandler::AgentHandler(AgentConfig config)
    : config_(std::move(config)), fs_(config_.fs_root) {}

absl::StatusOr<v1::NodeInfo> AgentHandler::GetNodeInfo(const v1::GetNodeInfoRequest&) {
  return CollectNodeInfo(fs_, NodeInfoConfig{.devices = config_.devices});
}

}  // namespace gdrbench::agent::service
