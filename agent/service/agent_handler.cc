#include "agent/service/agent_handler.h"

#include "agent/bench/session.h"
#include "agent/service/node_info.h"

namespace gdrbench::agent::service {

AgentHandler::AgentHandler(AgentConfig config) : AgentHandler(std::move(config), nullptr) {}

AgentHandler::AgentHandler(AgentConfig config, std::shared_ptr<bench::SessionFactory> sessions)
    : config_(std::move(config)), fs_(config_.fs_root), sessions_(std::move(sessions)) {
  if (sessions_ == nullptr) sessions_ = bench::MakeVerbsSessionFactory(fs_);
}

absl::StatusOr<v1::NodeInfo> AgentHandler::GetNodeInfo(const v1::GetNodeInfoRequest&) {
  return CollectNodeInfo(fs_, NodeInfoConfig{.devices = config_.devices});
}

}  // namespace gdrbench::agent::service
