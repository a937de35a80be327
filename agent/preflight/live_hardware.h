// The hardware interfaces' real implementations, and the factory that picks
// live ones on a live node ("/") and offline ones under --fs-root, where
// every live-only answer is UNAVAILABLE with the reason (the checks turn that
// into SKIP).
// Thread safety: see hardware.h.
#pragma once

#include <memory>

#include "agent/preflight/hardware.h"
#include "common/fs_root.h"

namespace gdrbench::agent::preflight {

struct Hardware {
  std::unique_ptr<RdmaQuery> rdma;
  std::unique_ptr<CudaQuery> cuda;
  std::unique_ptr<RegistrationProbe> probe;
  std::unique_ptr<GpuLoad> load;
  std::unique_ptr<KernelLog> kernel_log;
};

// Live (libibverbs, libcuda, a real registration, a real GPU load,
// /dev/kmsg) when fs.is_live(); sysfs RDMA, the captured kernel log and
// UNAVAILABLE CUDA, probe and load otherwise. `fs` must outlive the result.
Hardware MakeHardware(const FsRoot& fs);

// Individually, for tests and tools.
std::unique_ptr<RdmaQuery> MakeLiveRdma(const FsRoot& fs);
std::unique_ptr<CudaQuery> MakeLiveCuda();
std::unique_ptr<RegistrationProbe> MakeLiveRegistrationProbe();
std::unique_ptr<GpuLoad> MakeLiveGpuLoad();

}  // namespace gdrbench::agent::preflight
