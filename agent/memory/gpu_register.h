// GPU memory registration policy: dma-buf first, then nvidia-peermem, never
// host memory; on failure one message naming both attempts, why each failed,
// and the remedy. The verbs/CUDA calls sit behind GpuRegistrationOps so the
// order and the wording are unit-tested with a fake (the real ops live in
// gpu_register.cc and need cuda.h; this header does not).
//
// Thread safety: RegisterGpuWith is stateless; ops are used from the calling
// thread only.
#pragma once

#include <infiniband/verbs.h>

#include <string>

#include "absl/status/statusor.h"
#include "agent/memory/memory.h"
#include "common/unique_fd.h"

namespace gdrbench::agent::memory {

class GpuRegistrationOps {
 public:
  virtual ~GpuRegistrationOps() = default;
  virtual std::string NicName() const = 0;  // "mlx5_0"
  virtual std::string GpuName() const = 0;  // "GPU 0 (0000:17:00.0)"
  // A dma-buf fd covering the buffer; UNIMPLEMENTED (with the reason) when the
  // driver or GPU cannot export one, or the CUDA error.
  virtual absl::StatusOr<UniqueFd> ExportDmaBuf() = 0;
  // ibv_reg_dmabuf_mr on `fd` / ibv_reg_mr on the device pointer: the MR, or
  // nullptr with the errno in *err.
  virtual ibv_mr* RegisterDmaBuf(int fd, int* err) = 0;
  virtual ibv_mr* RegisterPeermem(int* err) = 0;
  // Whether nvidia-peermem is loaded (/sys/module/nvidia_peermem).
  virtual bool PeermemLoaded() const = 0;
};

// The policy. OK: the MR and its method ("ibv_reg_dmabuf_mr" or
// "ibv_reg_mr+peermem"). FAILED_PRECONDITION when both attempts fail; the
// message starts "GPU memory on <gpu> cannot be registered with <nic> (no
// fallback to host memory): tried dma-buf: ...; tried peermem: .... Remedy: ...".
absl::StatusOr<Registration> RegisterGpuWith(GpuRegistrationOps& ops);

}  // namespace gdrbench::agent::memory
