// The integrity pattern on a GPU: the embedded PTX kernels of
// pattern_kernels.cu, loaded once per GPU context.
//
// Thread safety: Fill and Check may be called from any thread; Check
// serialises on an internal mutex (it shares one result word per GPU).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

#include "absl/status/statusor.h"
#include "agent/cuda/module.h"

namespace gdrbench::agent::memory {

// Generated at build time (embed_ptx.cmake). kPatternKernelsPtx is empty when
// gdrbench was built without nvcc; kPatternKernelsMissing then says so.
extern const char kPatternKernelsPtx[];
extern const char kPatternKernelsMissing[];

#if GDRBENCH_HAVE_CUDA_H

class GpuPattern {
 public:
  // The kernels for `ctx`'s GPU, loaded on first use and shared afterwards.
  // FAILED_PRECONDITION when built without nvcc (says so) or when the driver
  // cannot load the PTX.
  static absl::StatusOr<std::shared_ptr<GpuPattern>> ForContext(
      std::shared_ptr<cuda::GpuContext> ctx);
  ~GpuPattern();

  // Device memory at `base` (the buffer start): fill / check buffer offsets
  // [offset, offset+length). Check returns the first bad offset or -1.
  absl::Status Fill(CUdeviceptr base, size_t offset, size_t length, uint64_t seed) const;
  absl::StatusOr<int64_t> Check(CUdeviceptr base, size_t offset, size_t length,
                                uint64_t seed) const;

 private:
  GpuPattern() = default;
  cuda::LaunchShape Shape(size_t length) const;
  std::unique_ptr<cuda::Module> module_;
  CUfunction fill_ = nullptr;
  CUfunction check_ = nullptr;
  CUdeviceptr first_bad_ = 0;  // one device word for Check's result
  unsigned max_blocks_ = 0;
  mutable std::mutex check_mu_;
};

#endif  // GDRBENCH_HAVE_CUDA_H

}  // namespace gdrbench::agent::memory
