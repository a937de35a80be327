#include "tests/integration/fleet/sim_member.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "agent/preflight/sysfs_rdma.h"
#include "agent/service/node_info.h"
#include "common/fs_root.h"
#include "common/status.h"

namespace gdrbench::testing::fleet {

absl::StatusOr<std::shared_ptr<SharedNode>> SharedNode::Read(const std::string& fs_root) {
  auto node = std::make_shared<SharedNode>();
  node->fs_root_ = fs_root;
  FsRoot fs(fs_root);
  std::string absent;
  agent::preflight::SysfsRdma sysfs(fs);  // the tree's NICs (libibverbs would list this host's)
  GDR_ASSIGN_OR_RETURN(node->devices_, sysfs.ListDevices(&absent));
  if (node->devices_.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--fs-root ", fs_root, " has no RDMA device to simulate: ", absent));
  }
  GDR_ASSIGN_OR_RETURN(node->info_,
                       agent::service::CollectNodeInfo(
                           fs, agent::service::NodeInfoConfig{.devices = {}, .nics = &node->devices_}));
  node->reader_ = std::make_unique<agent::service::AgentHandler>(
      agent::service::AgentConfig{.fs_root = fs_root, .devices = {}},
      std::make_shared<SimSessionFactory>(nullptr, std::vector<agent::verbs::DeviceInfo>{}));
  return node;
}

absl::StatusOr<v1::PreflightReport> SharedNode::Preflight(const v1::RunPreflightRequest& request) {
  const std::string key = request.SerializeAsString();
  std::lock_guard lock(mu_);  // the first ask runs the checks; the others wait for it
  if (auto it = reports_.find(key); it != reports_.end()) return it->second;
  GDR_ASSIGN_OR_RETURN(v1::PreflightReport report, reader_->RunPreflight(request));
  reports_.emplace(key, report);
  return report;
}

agent::counters::Sample SharedNode::Counters(const std::string& device, uint32_t port) {
  agent::counters::Sample s;
  {
    std::lock_guard lock(mu_);
    auto [it, added] = counters_.try_emplace({device, port});
    if (added)
      it->second = agent::counters::ReadPort(FsRoot(fs_root_), device, port, agent::counters::TestCounters());
    s = it->second;
  }
  s.taken_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                   std::chrono::steady_clock::now().time_since_epoch())
                   .count();
  return s;
}

namespace {

std::vector<agent::verbs::DeviceInfo> MemberDevices(const SharedNode& node, uint32_t index) {
  std::vector<agent::verbs::DeviceInfo> out;
  const auto& tree = node.devices();
  for (uint32_t n = 0; n < tree.size(); ++n) {
    out.push_back(MemberDevice(tree[n], index, n, static_cast<uint32_t>(tree.size())));
  }
  return out;
}

// The tree's node info as member `index` has it: its host name, the mark,
// and each NIC's LID and GIDs as its data path uses them.
v1::NodeInfo MemberInfo(const SharedNode& node, const std::vector<agent::verbs::DeviceInfo>& devices,
                        const std::string& hostname) {
  v1::NodeInfo info = node.info();
  info.set_hostname(hostname);
  info.mutable_software()->set_agent(absl::StrCat(info.software().agent(), kSimulatedSuffix));
  for (v1::NicInfo& nic : *info.mutable_nics()) {
    for (const auto& d : devices) {
      if (d.name != nic.device() || nic.ports().empty()) continue;
      v1::RdmaPort* port = nic.mutable_ports(0);
      const agent::verbs::PortInfo& p = d.ports.front();
      port->set_lid(p.lid);
      agent::service::SetPortState(p.state, *port);
      port->set_active_mtu_bytes(p.active_mtu_bytes);
      port->clear_gids();
      for (const auto& g : p.gids) {
        v1::Gid* out = port->add_gids();
        out->set_index(g.index);
        out->set_gid(g.gid);
        out->set_type(g.type);
      }
    }
  }
  return info;
}

}  // namespace

SimMemberHandler::SimMemberHandler(std::shared_ptr<SharedNode> node, uint32_t index, std::string hostname,
                                   agent::bench::testing::FakeFabric* fabric)
    : AgentHandler(agent::service::AgentConfig{.fs_root = node->fs_root(), .devices = {}},
                   std::make_shared<SimSessionFactory>(fabric, MemberDevices(*node, index))),
      node_(std::move(node)),
      hostname_(std::move(hostname)),
      info_(MemberInfo(*node_, MemberDevices(*node_, index), hostname_)) {}

absl::StatusOr<v1::NodeInfo> SimMemberHandler::GetNodeInfo(const v1::GetNodeInfoRequest&) { return info_; }

absl::StatusOr<v1::PreflightReport> SimMemberHandler::RunPreflight(const v1::RunPreflightRequest& request) {
  GDR_ASSIGN_OR_RETURN(v1::PreflightReport report, node_->Preflight(request));
  report.set_hostname(hostname_);
  return report;
}

agent::counters::Sample SimMemberHandler::ReadTestCounters(const std::string& device, uint32_t port) {
  return node_->Counters(device, port);
}

absl::StatusOr<v1::OpenTargetResponse> SimMemberHandler::OpenTarget(const v1::OpenTargetRequest& request) {
  GDR_ASSIGN_OR_RETURN(v1::OpenTargetResponse response, AgentHandler::OpenTarget(request));
  const uint32_t opened = ++targets_opened_;
  if (on_target_) on_target_(opened);
  return response;
}

}  // namespace gdrbench::testing::fleet
