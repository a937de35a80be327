// A GPU's primary context, retained for as long as a GpuContext lives, and
// a scope that makes it current on the calling thread.
//
// Thread safety: a GpuContext is immutable and may be shared between threads
// (std::shared_ptr); each thread makes it current with its own ScopedCurrent.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "agent/cuda/driver.h"

namespace gdrbench::agent::cuda {

#if GDRBENCH_HAVE_CUDA_H

class GpuContext {
 public:
  // Retains the primary context of CUDA ordinal `ordinal`.
  // Errors: those of cuDevicePrimaryCtxRetain through CudaDriver::ToStatus
  // (e.g. FAILED_PRECONDITION when the GPU is in a prohibited compute mode).
  static absl::StatusOr<std::shared_ptr<GpuContext>> Retain(const CudaDriver& driver, int ordinal);
  ~GpuContext();
  GpuContext(const GpuContext&) = delete;
  GpuContext& operator=(const GpuContext&) = delete;

  const CudaDriver& driver() const { return driver_; }
  const CudaApi& api() const { return driver_.api(); }
  int ordinal() const { return ordinal_; }
  CUcontext context() const { return context_; }
  const std::string& pci_bdf() const { return pci_bdf_; }

 private:
  GpuContext(const CudaDriver& driver, int ordinal, CUdevice device, CUcontext context)
      : driver_(driver), ordinal_(ordinal), device_(device), context_(context) {}
  const CudaDriver& driver_;
  int ordinal_;
  CUdevice device_;
  CUcontext context_;
  std::string pci_bdf_;
};

// Pushes the context on construction, pops it on destruction. Check ok()
// (or status()) before issuing CUDA calls.
class ScopedCurrent {
 public:
  explicit ScopedCurrent(const GpuContext& ctx);
  ~ScopedCurrent();
  ScopedCurrent(const ScopedCurrent&) = delete;
  ScopedCurrent& operator=(const ScopedCurrent&) = delete;
  const absl::Status& status() const { return status_; }

 private:
  const GpuContext& ctx_;
  absl::Status status_;
};

#endif  // GDRBENCH_HAVE_CUDA_H

}  // namespace gdrbench::agent::cuda
