// A CUDA module loaded from embedded PTX (cuModuleLoadData: the driver JITs
// it for the GPU at hand), and kernel launches, without cudart.
//
// Thread safety: a loaded Module is immutable; Launch may be called from any
// thread that can make the module's context current (it does so itself).
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "agent/cuda/context.h"

namespace gdrbench::agent::cuda {

#if GDRBENCH_HAVE_CUDA_H

struct LaunchShape {
  unsigned grid_x = 1;
  unsigned block_x = 1;
};

class Module {
 public:
  // Loads `ptx` (NUL-terminated) into `ctx`. FAILED_PRECONDITION when `ptx`
  // is empty (built without nvcc: `why_empty` says so); otherwise the
  // cuModuleLoadData error (e.g. the driver is older than the PTX ISA).
  static absl::StatusOr<std::unique_ptr<Module>> Load(std::shared_ptr<GpuContext> ctx,
                                                      const char* ptx,
                                                      absl::string_view why_empty);
  ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // NOT_FOUND when the module has no such kernel.
  absl::StatusOr<CUfunction> Function(const char* name) const;
  // Launches `fn` on the legacy default stream and waits for it to finish
  // (cuCtxSynchronize), so launch and execution errors both come back here.
  absl::Status LaunchAndWait(CUfunction fn, LaunchShape shape, void** args,
                             absl::string_view what) const;
  const GpuContext& context() const { return *ctx_; }

 private:
  Module(std::shared_ptr<GpuContext> ctx, CUmodule module) : ctx_(std::move(ctx)), module_(module) {}
  std::shared_ptr<GpuContext> ctx_;
  CUmodule module_;
};

#endif  // GDRBENCH_HAVE_CUDA_H

}  // namespace gdrbench::agent::cuda
