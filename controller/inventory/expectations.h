// Fleet expectations: what every node of a cluster must have, the way NHC
// configurations pin a node's hardware and stack ("8 GPUs, 8 rails at
// 400 Gb/s PORT_ACTIVE, driver 580"). From the inventory's `expect:` section
// or the sweep's --expect-* flags (a flag replaces that one key). Plain data.
//
// Checked where the node answers: GPU count, rail count, link rate and
// state per rail by the controller from GetNodeInfo (run/expectations.h);
// versions, firmware and MTU by the agent's preflight (stack_version_alignment,
// mtu), where "580" pins a branch and "580.95.05" one release.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace gdrbench::controller::inventory {

struct Expectations {
  std::optional<uint32_t> gpus;       // GPUs per node
  std::optional<uint32_t> rails;      // rail NICs per node (the sweep's rails)
  std::optional<double> link_gbps;    // every rail's active rate, at least this (Gb/s)
  std::string link_state;             // every rail's port state, e.g. "PORT_ACTIVE"; empty = any
  std::string nvidia_driver;          // exact ("580.95.05") or prefix ("580")
  std::string cuda_driver;            // "13.0"
  std::string rdma_core;              // "44" or "44.0"
  std::string ofed;                   // MLNX_OFED / DOCA version
  std::string hca_firmware;           // "28.39.1002" (applies to NICs of its family)
  uint32_t min_mtu_bytes = 0;         // 0 = the preflight default (4096 FAILs below)

  bool controller_checks() const { return gpus || rails || link_gbps || !link_state.empty(); }
};

// `base` with every field that `over` sets replaced (flags over a file).
inline Expectations Merge(Expectations base, const Expectations& over) {
  if (over.gpus) base.gpus = over.gpus;
  if (over.rails) base.rails = over.rails;
  if (over.link_gbps) base.link_gbps = over.link_gbps;
  for (auto [b, o] : {std::pair{&base.link_state, &over.link_state},
                      std::pair{&base.nvidia_driver, &over.nvidia_driver},
                      std::pair{&base.cuda_driver, &over.cuda_driver}, std::pair{&base.rdma_core, &over.rdma_core},
                      std::pair{&base.ofed, &over.ofed}, std::pair{&base.hca_firmware, &over.hca_firmware}}) {
    if (!o->empty()) *b = *o;
  }
  if (over.min_mtu_bytes) base.min_mtu_bytes = over.min_mtu_bytes;
  return base;
}

}  // namespace gdrbench::controller::inventory
