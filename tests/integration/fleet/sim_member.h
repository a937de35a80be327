// One simulated fleet member's handler (test-only): the agent's own
// AgentHandler, whose data path is SimSessionFactory (the fake NIC on the
// fleet's fabric) and whose node is a captured tree (--fs-root), answering
// as host `hostname` with its NICs' own LIDs and GIDs (MemberDevice), and
// saying in its node info that it is simulated: its agent version is
// "<version> (simulated ...)" (kSimulatedSuffix), which `gdrbench node-info`
// prints and the fleet preflight's uniformity table lists per node; its
// preflight reports name the tree in fs_root, as an offline run's do.
//
// Every member reads the same tree, so what the tree says is read once per
// fleet (SharedNode): the node info once, each distinct preflight request's
// report once (the real checks on the real tree), each port's counters once. A member answers a copy
// stamped with its own host name and NICs. The fleet measures the
// controller: N copies of one file walk on this host's cores would measure
// only the simulation.
//
// Thread safety: as AgentHandler; SharedNode is shared by every member.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "agent/counters/port_counters.h"
#include "agent/service/agent_handler.h"
#include "agent/verbs/device_info.h"
#include "tests/integration/fleet/sim_sessions.h"

namespace gdrbench::testing::fleet {

// Appended to NodeInfo.software.agent.
inline constexpr char kSimulatedSuffix[] =
    " (simulated fleet member, test-only gdrbench-sim-fleet: real gRPC and TLS, data path on a fake NIC, "
    "node read from a captured tree)";

class SharedNode {
 public:
  // Reads `fs_root`'s node info and NICs once. INVALID_ARGUMENT when the tree
  // has no RDMA device.
  static absl::StatusOr<std::shared_ptr<SharedNode>> Read(const std::string& fs_root);

  const std::string& fs_root() const { return fs_root_; }
  const v1::NodeInfo& info() const { return info_; }
  const std::vector<agent::verbs::DeviceInfo>& devices() const { return devices_; }
  // The tree's report for `request` (run on its first ask, then kept).
  absl::StatusOr<v1::PreflightReport> Preflight(const v1::RunPreflightRequest& request);
  // The tree's TestCounters() of `device` port `port` (read on the first
  // ask, then kept: a captured file never changes), taken now.
  agent::counters::Sample Counters(const std::string& device, uint32_t port);

 private:
  std::string fs_root_;
  v1::NodeInfo info_;
  std::vector<agent::verbs::DeviceInfo> devices_;
  std::mutex mu_;
  std::map<std::string, v1::PreflightReport> reports_;  // by serialized request; guarded by mu_
  std::map<std::pair<std::string, uint32_t>, agent::counters::Sample> counters_;  // guarded by mu_
  std::unique_ptr<agent::service::AgentHandler> reader_;  // runs the checks on the tree
};

class SimMemberHandler final : public agent::service::AgentHandler {
 public:
  // Member `index` of the fleet; its NICs are MemberDevice(node devices,
  // index, ...) on `fabric` (which outlives it).
  SimMemberHandler(std::shared_ptr<SharedNode> node, uint32_t index, std::string hostname,
                   agent::bench::testing::FakeFabric* fabric);

  absl::StatusOr<v1::NodeInfo> GetNodeInfo(const v1::GetNodeInfoRequest& request) override;
  absl::StatusOr<v1::PreflightReport> RunPreflight(const v1::RunPreflightRequest& request) override;
  absl::StatusOr<v1::OpenTargetResponse> OpenTarget(const v1::OpenTargetRequest& request) override;
  // Called (on the RPC's thread) with the count after each target opened.
  void OnTargetOpened(std::function<void(uint32_t opened)> hook) { on_target_ = std::move(hook); }

 protected:
  agent::counters::Sample ReadTestCounters(const std::string& device, uint32_t port) override;

 private:
  std::shared_ptr<SharedNode> node_;
  const std::string hostname_;
  v1::NodeInfo info_;                        // the tree's, with this member's name, LIDs and GIDs
  std::function<void(uint32_t)> on_target_;  // set before serving
  std::atomic<uint32_t> targets_opened_{0};
};

}  // namespace gdrbench::testing::fleet
