#include "agent/service/agent_handler.h"

#include "agent/bench/session.h"
#include "agent/counters/counter_history.h"
#include "agent/counters/port_counters.h"
#include "agent/service/node_info.h"

namespace gdrbench::agent::service {

AgentHandler::AgentHandler(AgentConfig config) : AgentHandler(std::move(config), nullptr) {}

AgentHandler::AgentHandler(AgentConfig config, std::shared_ptr<bench::SessionFactory> sessions)
    : config_(std::move(config)), fs_(config_.fs_root), sessions_(std::move(sessions)) {
  if (sessions_ == nullptr) sessions_ = bench::MakeVerbsSessionFactory(fs_);
  if (fs_.is_live()) {
    counter_history_ = std::make_shared<counters::CounterHistory>(
        fs_, counters::HistoryOptions{.devices = config_.devices});
  }
}

AgentHandler::~AgentHandler() = default;

counters::Sample AgentHandler::ReadTestCounters(const std::string& device, uint32_t port) {
  std::shared_ptr<counters::PortFiles> files;
  {
    std::lock_guard lock(counter_files_mu_);
    std::shared_ptr<counters::PortFiles>& slot = counter_files_[{device, port}];
    if (slot == nullptr) slot = std::make_shared<counters::PortFiles>(fs_, device, port, counters::TestCounters());
    files = slot;
  }
  return files->Read();
}

absl::StatusOr<v1::NodeInfo> AgentHandler::GetNodeInfo(const v1::GetNodeInfoRequest&) {
  return CollectNodeInfo(fs_, NodeInfoConfig{.devices = config_.devices});
}

}  // namespace gdrbench::agent::service
