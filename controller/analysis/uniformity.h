// Fleet uniformity: the software and firmware versions that differ across
// the nodes of a fleet, naming the odd nodes out. GPUDirect RDMA needs the
// NVIDIA driver, CUDA, the RDMA stack and the HCA firmware to line up on
// every node; the seed rule is to upgrade the stack together, in one
// maintenance window, so a node on another release is a finding even when
// its own checks pass. Pure functions; thread-safe.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "gdrbench/v1/node.pb.h"

namespace gdrbench::controller::analysis {

// One component across the fleet.
struct VersionSpread {
  std::string component;  // "kernel", "NVIDIA driver", "CUDA driver", "rdma-core", "OFED",
                          // "HCA firmware", "gdrbench agent"
  // Each value seen with its nodes, most nodes first (ties: by value). A
  // node that lacks the component has the value "absent".
  std::vector<std::pair<std::string, std::vector<std::string>>> values;
  // The nodes not on the majority value; empty when uniform. With no strict
  // majority (two values on as many nodes) every node but those of the first
  // value is listed, and `split` is set.
  std::vector<std::string> odd_nodes;
  bool split = false;
  bool uniform() const { return values.size() <= 1; }
};

// `infos[i]` is node `names[i]`'s GetNodeInfo answer; a node whose agent did
// not answer (empty hostname) is left out of every component. Components
// that every answering node lacks are left out of the result.
std::vector<VersionSpread> FleetUniformity(const std::vector<std::string>& names,
                                           const std::vector<v1::NodeInfo>& infos);

// The HCA firmware of a node: the distinct firmware versions of its RDMA
// NICs, sorted, joined by ", " (software devices have none); empty if none.
std::string HcaFirmware(const v1::NodeInfo& info);

// Readable lines, one per component:
//   "  NVIDIA driver  580.95.05 on 3 nodes; 575.57.08 on node4: odd one out: node4"
//   "  kernel         6.1.0-28-amd64 on all 4 nodes"
// The first line says the rule: upgrade the stack together, in one window.
std::string FormatUniformity(const std::vector<VersionSpread>& spreads, size_t nodes_answering);

}  // namespace gdrbench::controller::analysis
