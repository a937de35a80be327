// Inventory of RDMA devices through libibverbs plus sysfs (through FsRoot for
// the parts sysfs alone knows: GID types, netdevs, PCI address, NUMA node).
// Thread-safe: no state.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/verbs/port_state.h"
#include "common/fs_root.h"

namespace gdrbench::agent::verbs {

struct GidEntry {
  uint32_t index = 0;
  std::string gid;     // "0000:0000:0000:0000:0000:ffff:0a00:0001"
  std::string type;    // "IB/RoCE v1" or "RoCE v2"
  std::string netdev;
};

struct PortInfo {
  uint32_t port_num = 0;
  PortState state = PortState::kUnread;
  std::string physical_state;  // "LINK_UP", ...
  std::string link_layer;      // "InfiniBand", "Ethernet"
  double active_rate_gbps = 0; // lanes x per-lane rate
  std::string active_speed;    // per lane, "25.0 Gbps"
  uint32_t active_width_lanes = 0;
  uint32_t active_mtu_bytes = 0;
  uint32_t max_mtu_bytes = 0;
  uint32_t lid = 0;
  std::vector<GidEntry> gids;  // only the populated entries
  std::string netdev;                 // the first GID's (the base device)
  // The IPv4/IPv6 addresses of every netdev the port's GIDs sit on (the base
  // device's first, then VLAN netdevs'), and the same with their prefix,
  // "10.0.0.1/24".
  std::vector<std::string> ip_addresses;
  std::vector<std::string> ip_cidrs;
};

struct DeviceInfo {
  std::string name;
  std::string pci_bdf;  // empty for software devices (rxe)
  int numa_node = -1;
  std::string firmware_version;
  std::string node_guid;
  std::string transport;
  std::vector<PortInfo> ports;
};

// Physical port states as ibv_devinfo prints them ("LINK_UP"), from the
// ibv_port_attr codes (the same numbers sysfs prints, "5: LinkUp"); the
// logical state is port_state.h's.
std::string PhysStateName(int phys_state);

// Per-lane rate in Gb/s of an ibv_port_attr active_speed code, and the lane
// count of an active_width code; 0 for unknown codes.
double LaneRateGbps(uint32_t active_speed);
uint32_t WidthLanes(uint32_t active_width);

// Every device libibverbs sees, filtered to `only` when not empty.
// Returns an empty list (not an error) when there are none; `absent_reason`
// then says why (no kernel support, no device, filtered out).
// INVALID_ARGUMENT when `only` names a device that does not exist.
absl::StatusOr<std::vector<DeviceInfo>> ListDevices(const FsRoot& fs,
                                                    const std::vector<std::string>& only,
                                                    std::string* absent_reason);

// The rdma-core version, from the installed libibverbs package (dpkg or rpm
// database under fs), e.g. "44.0-2"; empty when it cannot be told.
std::string RdmaCoreVersion(const FsRoot& fs);

}  // namespace gdrbench::agent::verbs
