// The live-hardware boundaries of the preflight checks. Everything else the
// checks read goes through FsRoot. Each interface has a live implementation
// (live_hardware.h), a sysfs one where sysfs carries the same facts (offline
// mode), and fakes in the unit tests.
//
// Thread safety: implementations need not be thread-safe; one preflight run
// uses them from one thread.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"

#include "absl/status/statusor.h"
#include "agent/cuda/driver.h"
#include "agent/verbs/device_info.h"

namespace gdrbench::agent::preflight {

class RdmaQuery {
 public:
  virtual ~RdmaQuery() = default;
  // "ibv_query_port" or "sysfs": named in the evidence.
  virtual std::string source() const = 0;
  // Every RDMA device with its ports and GIDs. An empty list when there are
  // none, with `absent_reason` saying why. INTERNAL when a device cannot be
  // queried.
  virtual absl::StatusOr<std::vector<verbs::DeviceInfo>> ListDevices(std::string* absent_reason) = 0;
  // Whether ibv_reg_dmabuf_mr is implemented by `device`'s driver: a dummy
  // call with fd -1 fails with EBADF when it is, EOPNOTSUPP when not.
  // UNAVAILABLE when this implementation cannot probe (offline).
  virtual absl::StatusOr<bool> DmabufRegistrationSupported(const std::string& device) = 0;
};

struct CudaGpu {
  cuda::GpuDevice device;
  std::optional<bool> dmabuf_supported;     // CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED
  std::optional<bool> gpudirect_rdma;       // CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED
};

class CudaQuery {
 public:
  virtual ~CudaQuery() = default;
  // UNAVAILABLE when this implementation cannot ask the driver (offline);
  // NOT_FOUND when libcuda is absent; FAILED_PRECONDITION when cuInit fails.
  virtual absl::StatusOr<std::string> DriverVersion() = 0;  // "13.0"
  virtual absl::StatusOr<std::vector<CudaGpu>> ListGpus() = 0;
};

class RegistrationProbe {
 public:
  virtual ~RegistrationProbe() = default;
  // Allocates one page of memory on GPU `gpu` (a CUDA index) and registers it
  // with a protection domain of RDMA `device`; returns the method that worked
  // ("ibv_reg_dmabuf_mr", "ibv_reg_mr+peermem"). UNAVAILABLE when this
  // implementation cannot probe (offline, or built without agent/memory);
  // otherwise the allocation's or registration's error, naming the remedy.
  virtual absl::StatusOr<std::string> RegisterOnePage(const std::string& device, int gpu) = 0;
};

// A short GPU load that makes an idle GPU train its PCIe link back up, so the
// link speed read during it tells an idle (power-saving) link from a
// degraded one.
struct LoadResult {
  std::string method;       // "cuMemcpyDtoH 64 MiB x N"
  uint64_t bytes = 0;       // moved while `during` ran
  double seconds = 0;
};

class GpuLoad {
 public:
  virtual ~GpuLoad() = default;
  // Keeps CUDA GPU `gpu` copying device memory to pinned host memory for
  // about `duration`, calling `during` from the calling thread while the
  // copies run (it reads the link state). UNAVAILABLE when this
  // implementation cannot load a GPU (offline, or built without
  // agent/memory); otherwise the allocation's or copy's error.
  virtual absl::StatusOr<LoadResult> RunWhile(int gpu, absl::Duration duration,
                                              const std::function<void()>& during) = 0;
};

// The kernel log: live from /dev/kmsg, offline from the capture's copy.
class KernelLog {
 public:
  virtual ~KernelLog() = default;
  // "/dev/kmsg", "<root>/gdrbench-capture/dmesg": named in evidence.
  virtual std::string source() const = 0;
  // The messages, oldest first, without priority or timestamp prefixes.
  // UNAVAILABLE when there is no log to read (not captured, or /dev/kmsg not
  // readable: not root, or dmesg_restrict), saying which.
  virtual absl::StatusOr<std::vector<std::string>> Messages() = 0;
};

}  // namespace gdrbench::agent::preflight
