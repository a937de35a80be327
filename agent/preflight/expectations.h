// What the caller pins or names for a preflight run (the v1
// PreflightExpectations carries the same fields). Empty or 0: not pinned.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gdrbench::agent::preflight {

struct Expectations {
  std::string nvidia_driver;  // "580" pins a branch, "580.95.05" one release
  std::string cuda_driver;
  std::string rdma_core;
  std::string ofed;
  std::string hca_firmware;   // every RDMA NIC's fw_ver, e.g. "28.39.1002"
  uint32_t min_mtu_bytes = 0;
  // NICs the inventory names as rails, beyond each GPU's nearest NIC (the
  // rule: agent/topology/topology.h, "Rail NICs").
  std::vector<std::string> rail_nics;
};

}  // namespace gdrbench::agent::preflight
