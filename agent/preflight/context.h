// What every check reads: the filesystem root, the hardware interfaces and the
// expectations, plus facts several checks share (the topology, the RDMA
// devices, the CUDA GPUs), each computed once per run on first use.
//
// Thread safety: not thread-safe; one run, one thread.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/counters/counter_history.h"
#include "agent/preflight/expectations.h"
#include "agent/preflight/hardware.h"
#include "agent/preflight/nvidia_version.h"
#include "agent/preflight/results.h"
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
  // The RDMA devices this agent owns (--devices); empty = all.
  const std::vector<std::string>& devices() const { return devices_; }

  // Optional interfaces; absent ones make their checks say they need live
  // hardware. `wait` runs between the two reads of the link error counters
  // (live: sleeps `interval`; tests inject one that changes the tree).
  void set_gpu_load(GpuLoad* load) { gpu_load_ = load; }
  GpuLoad* gpu_load() const { return gpu_load_; }
  void set_kernel_log(KernelLog* log) { kernel_log_ = log; }
  KernelLog* kernel_log() const { return kernel_log_; }
  void set_counter_wait(std::function<void()> wait, absl::Duration interval) {
    counter_wait_ = std::move(wait);
    counter_interval_ = interval;
  }
  const std::function<void()>& counter_wait() const { return counter_wait_; }
  // The agent's background samples (agent/counters/counter_history.h): when
  // every port has one at least counter_interval() old, link_error_counters
  // compares a read now with it and does not wait. Live only.
  void set_counter_history(std::shared_ptr<const counters::CounterHistory> history) {
    counter_history_ = std::move(history);
  }
  const counters::CounterHistory* counter_history() const { return counter_history_.get(); }
  // Put every GPU under load for the link check, not only those below their
  // maximum speed (to prove the reading under load; gdrbench-preflight
  // --pcie-under-load, the gpu tier).
  void set_load_all_gpu_links(bool on) { load_all_gpu_links_ = on; }
  bool load_all_gpu_links() const { return load_all_gpu_links_; }
  absl::Duration counter_interval() const { return counter_interval_; }

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

  // /proc/driver/nvidia/version parsed once (agent/preflight/nvidia_version.h).
  const NvidiaVersion& Nvidia();
  // Whether a kernel module is loaded (/sys/module/<name> with an initstate,
  // or a /proc/modules line).
  bool ModuleLoaded(const std::string& name) const;

 private:
  const FsRoot& fs_;
  RdmaQuery& rdma_;
  CudaQuery& cuda_;
  RegistrationProbe& probe_;
  GpuLoad* gpu_load_ = nullptr;
  KernelLog* kernel_log_ = nullptr;
  std::function<void()> counter_wait_;
  absl::Duration counter_interval_;
  std::shared_ptr<const counters::CounterHistory> counter_history_;
  bool load_all_gpu_links_ = false;
  Expectations expect_;
  std::vector<std::string> devices_;
  std::optional<absl::StatusOr<topology::Topology>> topo_;
  std::optional<absl::StatusOr<std::vector<verbs::DeviceInfo>>> rdma_devices_;
  std::string rdma_absent_;
  std::optional<absl::StatusOr<std::vector<CudaGpu>>> cuda_gpus_;
  std::optional<NvidiaVersion> nvidia_;
};

}  // namespace gdrbench::agent::preflight
