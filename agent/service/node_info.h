// Builds the NodeInfo message from the hardware libraries. Absent hardware is
// an empty list plus a reason, never an error.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/verbs/device_info.h"
#include "common/fs_root.h"
#include "gdrbench/v1/node.pb.h"

namespace gdrbench::agent::service {

struct NodeInfoConfig {
  std::vector<std::string> devices;  // the RDMA devices this agent owns; empty = all
  // Tests (a simulated node): these NICs, e.g. a captured tree's through
  // preflight::SysfsRdma, instead of libibverbs' (null: libibverbs').
  const std::vector<verbs::DeviceInfo>* nics = nullptr;
};

// INVALID_ARGUMENT when config.devices names a device that does not exist.
absl::StatusOr<v1::NodeInfo> CollectNodeInfo(const FsRoot& fs, const NodeInfoConfig& config);

// The port state as the proto carries it: PORT_STATE_UNSPECIFIED for kUnread
// and for a code the enum does not name (the deprecated string still says
// "PORT_UNKNOWN(N)").
v1::PortState ToProto(verbs::PortState state);
// Both of the port's state fields: port_state, and the deprecated string
// (ibv_devinfo's spelling) that older controllers and stored runs read.
void SetPortState(verbs::PortState state, v1::RdmaPort& port);

}  // namespace gdrbench::agent::service
