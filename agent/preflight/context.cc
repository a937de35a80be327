#include "agent/preflight/context.h"

#include <algorithm>

#include "agent/preflight/kernel_modules.h"

namespace gdrbench::agent::preflight {

Context::Context(const FsRoot& fs, RdmaQuery& rdma, CudaQuery& cuda, RegistrationProbe& probe,
                 Expectations expect, std::vector<std::string> devices)
    : fs_(fs),
      rdma_(rdma),
      cuda_(cuda),
      probe_(probe),
      expect_(std::move(expect)),
      devices_(std::move(devices)) {}

const absl::StatusOr<topology::Topology>& Context::Topo() {
  if (topo_) return *topo_;
  // NICs named as rails: the agent's own devices (--devices) and the ones
  // the inventory names (expectations.rail_nics).
  std::vector<std::string> named = devices_;
  named.insert(named.end(), expect_.rail_nics.begin(), expect_.rail_nics.end());
  topo_ = topology::DiscoverTopology(fs_, named);
  if (topo_->ok() && !devices_.empty()) {
    // Only the NICs this agent owns; rails recomputed among them.
    auto owned = [&](const std::string& n) {
      return std::find(devices_.begin(), devices_.end(), n) != devices_.end();
    };
    topology::Topology& t = **topo_;
    std::erase_if(t.nics, [&](const topology::Nic& n) { return !owned(n.name); });
    std::erase_if(t.relations, [&](const topology::Relation& r) { return !owned(r.nic); });
    topology::AssignRails(t, named);
  }
  return *topo_;
}

const absl::StatusOr<std::vector<verbs::DeviceInfo>>& Context::RdmaDevices() {
  if (!rdma_devices_) rdma_devices_ = rdma_.ListDevices(&rdma_absent_);
  return *rdma_devices_;
}

const std::string& Context::RdmaAbsentReason() {
  RdmaDevices();
  return rdma_absent_;
}

const absl::StatusOr<std::vector<CudaGpu>>& Context::CudaGpus() {
  if (!cuda_gpus_) cuda_gpus_ = cuda_.ListGpus();
  return *cuda_gpus_;
}

const NvidiaVersion& Context::Nvidia() {
  if (!nvidia_) nvidia_ = ReadNvidiaVersion(fs_);
  return *nvidia_;
}

bool Context::ModuleLoaded(const std::string& name) const { return preflight::ModuleLoaded(fs_, name); }

}  // namespace gdrbench::agent::preflight
