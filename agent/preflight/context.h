// What every check reads: the filesystem root, the hardware interfaces and the
// expectations, plus facts several checks share (the topology, the RDMA
// devices, the CUDA GPUs), each computed once per run on first use.
//
// Thread safety: not thread-safe; one run, one thread.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/preflight/check.h"
#include "agent/preflight/hardware.h"
#include "agent/topology/topology.h"
#include "common/fs_root.h"

namespace gdrbench::agent::preflight {

class Context {
 public:
  // The interfaces must outlive the Context.
  // `devices` (empty = all): the RDMA devices whose topology is checked.
  Context(const FsRoot& fs, RdmaQuery& rdma, CudaQuery& cuda, RegistrationProbe& probe,
          Expectations expect, std::vector<std::string> devices = {});

  const FsRoot& fs() const { return fs_; }
  RdmaQuery& rdma() { return rdma_; }
  CudaQuery& cuda() { return cuda_; }
  RegistrationProbe& probe() { return probe_; }
  const Expectations& expect() const { return expect_; }

  // "/sys/..." -> the path as an operator sees it in evidence: unchanged on a
  // live node, "<root>/sys/..." offline.
  std::string Where(const std::string& path) const {
    return fs_.is_live() ? path : fs_.root() + path;
  }

  const absl::StatusOr<topology::Topology>& Topo();
  // The RDMA devices and, when there are none, why.
  const absl::StatusOr<std::vector<verbs::DeviceInfo>>& RdmaDevices();
  const std::string& RdmaAbsentReason();
  const absl::StatusOr<std::vector<CudaGpu>>& CudaGpus();

  // NVIDIA kernel module version from /proc/driver/nvidia/version, "" if absent.
  std::string NvidiaDriverVersion() const;
  // Whether a kernel module is loaded (/sys/module/<name> with an initstate,
  // or a /proc/modules line).
  bool ModuleLoaded(const std::string& name) const;

 private:
  const FsRoot& fs_;
  RdmaQuery& rdma_;
  CudaQuery& cuda_;
  RegistrationProbe& probe_;
  Expectations expect_;
  std::vector<std::string> devices_;
  std::optional<absl::StatusOr<topology::Topology>> topo_;
  std::optional<absl::StatusOr<std::vector<verbs::DeviceInfo>>> rdma_devices_;
  std::string rdma_absent_;
  std::optional<absl::StatusOr<std::vector<CudaGpu>>> cuda_gpus_;
};

}  // namespace gdrbench::agent::preflight
