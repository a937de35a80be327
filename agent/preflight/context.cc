#include "agent/preflight/context.h"

#include <algorithm>
#include <regex>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

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
  topo_ = topology::DiscoverTopology(fs_);
  if (topo_->ok() && !devices_.empty()) {
    // Only the NICs this agent owns; rails recomputed among them.
    auto owned = [&](const std::string& n) {
      return std::find(devices_.begin(), devices_.end(), n) != devices_.end();
    };
    topology::Topology& t = **topo_;
    std::erase_if(t.nics, [&](const topology::Nic& n) { return !owned(n.name); });
    std::erase_if(t.relations, [&](const topology::Relation& r) { return !owned(r.nic); });
    t.rails = topology::ComputeRails(t.gpus, t.nics, t.relations);
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

std::string Context::NvidiaDriverVersion() const {
  auto content = fs_.ReadFile("/proc/driver/nvidia/version");
  if (!content.ok()) return "";
  // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.95.05  Thu Sep ..."
  // "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.133.20  Release Build ..."
  static const std::regex kVersion(R"(Kernel Module(?: for [a-z0-9_]+)?\s+([0-9]+(?:\.[0-9]+)+))");
  std::smatch m;
  if (std::regex_search(*content, m, kVersion)) return m[1];
  return "";
}

bool Context::ModuleLoaded(const std::string& name) const {
  if (fs_.Exists(absl::StrCat("/sys/module/", name, "/initstate")) ||
      fs_.Exists(absl::StrCat("/sys/module/", name, "/version"))) {
    return true;
  }
  auto mods = fs_.ReadFile("/proc/modules");
  if (!mods.ok()) return false;
  for (absl::string_view line : absl::StrSplit(*mods, '\n')) {
    if (absl::StartsWith(line, absl::StrCat(name, " "))) return true;
  }
  return false;
}

}  // namespace gdrbench::agent::preflight
