// GPU buffers: `gpu` (cuMemAlloc, the NIC reads and writes device memory
// directly) and `gpu-staged` (the same GPU buffer plus a pinned, NIC-local
// host bounce buffer; the NIC sees only the host buffer).
//
// gpu-staged semantics (the path GPUDirect removes):
//   - data() is the host bounce buffer: it is what gets registered and what
//     RDMA WRITEs land in / are sent from.
//   - StageToHost copies GPU -> bounce (an initiator does this before sending),
//     StageToGpu copies bounce -> GPU (a target does this after receiving);
//     both are synchronous cuMemcpy on the legacy stream. A sweep that wants
//     to measure staging times these calls around its transfers.
//   - FillPattern fills the GPU buffer with the kernel and stages it to the
//     host; CheckPattern stages host -> GPU and checks on the GPU. So a
//     verified staged test covers GPU -> host -> wire -> host -> GPU.
//
// Every GPU allocation is rounded up to 2 MiB (the GPU page) so the dma-buf
// export covers whole, page-aligned ranges, and carries
// CU_POINTER_ATTRIBUTE_SYNC_MEMOPS so CUDA copies are ordered with RDMA.
//
// Thread safety: the buffers are immutable after creation; FillPattern,
// CheckPattern and the copies may be called from several threads on disjoint
// ranges (the kernels load once, under a mutex; checks on one GPU serialise).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "agent/memory/memory.h"
#include "common/unique_fd.h"

#if GDRBENCH_HAVE_CUDA_H
#include "agent/cuda/context.h"
#include "agent/memory/gpu_pattern.h"
#include "agent/memory/host_buffer.h"
#endif

namespace gdrbench::agent::memory {

inline constexpr size_t kGpuPageBytes = size_t{2} << 20;

#if GDRBENCH_HAVE_CUDA_H

class GpuBuffer final : public Buffer {
 public:
  // `gpu`: a CUDA index or PCI BDF. Errors: NOT_FOUND (no such GPU, with the
  // list), FAILED_PRECONDITION (no driver / no GPU), RESOURCE_EXHAUSTED
  // (cuMemAlloc out of memory), INVALID_ARGUMENT (zero size). `memory` is
  // the spec named in messages (default "gpu:<gpu>").
  static absl::StatusOr<std::unique_ptr<GpuBuffer>> Create(const std::string& gpu, size_t bytes,
                                                           const std::string& memory = "");
  ~GpuBuffer() override;
  GpuBuffer(const GpuBuffer&) = delete;
  GpuBuffer& operator=(const GpuBuffer&) = delete;

  void* data() const override { return reinterpret_cast<void*>(dptr_); }
  size_t size() const override { return size_; }
  Kind kind() const override { return Kind::kGpu; }
  std::string kind_name() const override { return "gpu"; }
  absl::Status FillPattern(size_t offset, size_t length, uint64_t seed) override;
  absl::StatusOr<int64_t> CheckPattern(size_t offset, size_t length, uint64_t seed) override;
  std::string check_method() const override { return "cuda-kernel"; }

  CUdeviceptr device_ptr() const { return dptr_; }
  // The allocation length: size() rounded up to kGpuPageBytes.
  size_t allocated_bytes() const { return allocated_; }
  const cuda::GpuContext& context() const { return *ctx_; }
  // "GPU 0 (0000:17:00.0)", for messages.
  std::string Describe() const;

  // CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED of this GPU (false when unknown).
  bool DmaBufSupported() const;
  // A dma-buf fd for the whole allocation (cuMemGetHandleForAddressRange,
  // CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD). UNIMPLEMENTED when the driver lacks
  // the call or the GPU the attribute; otherwise the CUDA error.
  absl::StatusOr<UniqueFd> ExportDmaBuf() const;

  // Makes every GPUDirect RDMA write a NIC completed into this GPU's memory
  // visible to later work on the GPU (rdma_flush.h): nothing on GPUs that
  // order such writes for their owner, cuFlushGPUDirectRDMAWrites on those
  // that do not. FAILED_PRECONDITION naming the attributes when the GPU
  // neither orders nor can flush (a check there could read stale bytes).
  // CheckPattern calls it before its kernel.
  absl::Status FlushRdmaWrites() const;
  // CheckPattern without the flush, for bytes that reached the GPU through a
  // CUDA copy (gpu-staged), which is ordered with the kernel.
  absl::StatusOr<int64_t> CheckCopiedPattern(size_t offset, size_t length, uint64_t seed);

  // Synchronous copies between [offset, offset+length) and host memory.
  absl::Status CopyToHost(void* dst, size_t offset, size_t length) const;
  absl::Status CopyFromHost(const void* src, size_t offset, size_t length);

 private:
  GpuBuffer(std::shared_ptr<cuda::GpuContext> ctx, CUdeviceptr dptr, size_t size, size_t allocated)
      : ctx_(std::move(ctx)), dptr_(dptr), size_(size), allocated_(allocated) {}
  absl::StatusOr<GpuPattern*> Pattern();
  std::shared_ptr<cuda::GpuContext> ctx_;
  CUdeviceptr dptr_;
  size_t size_;
  size_t allocated_;
  std::mutex pattern_mu_;  // guards the lazy load of pattern_
  std::shared_ptr<GpuPattern> pattern_;
};

class GpuStagedBuffer final : public Buffer {
 public:
  // A GpuBuffer on `gpu` plus a host bounce buffer of the same size on
  // `numa_node` (< 0: no preference), page-locked with cuMemHostRegister.
  // Errors: those of GpuBuffer::Create and HostBuffer::Create, and the
  // cuMemHostRegister error.
  static absl::StatusOr<std::unique_ptr<GpuStagedBuffer>> Create(const std::string& gpu,
                                                                 size_t bytes, int numa_node);
  ~GpuStagedBuffer() override;

  void* data() const override { return host_->data(); }
  size_t size() const override { return gpu_->size(); }
  Kind kind() const override { return Kind::kGpuStaged; }
  std::string kind_name() const override { return "gpu-staged"; }
  absl::Status FillPattern(size_t offset, size_t length, uint64_t seed) override;
  absl::StatusOr<int64_t> CheckPattern(size_t offset, size_t length, uint64_t seed) override;
  std::string check_method() const override { return "cuda-kernel"; }

  absl::Status StageToHost(size_t offset, size_t length) override;
  absl::Status StageToGpu(size_t offset, size_t length);
  GpuBuffer& gpu() { return *gpu_; }

 private:
  GpuStagedBuffer(std::unique_ptr<GpuBuffer> gpu, std::unique_ptr<HostBuffer> host)
      : gpu_(std::move(gpu)), host_(std::move(host)) {}
  std::unique_ptr<GpuBuffer> gpu_;
  std::unique_ptr<HostBuffer> host_;  // registered with CUDA while this lives
};

// dma-buf first, then peermem (see memory.h Register). Used by Register.
absl::StatusOr<Registration> RegisterGpu(ibv_pd* pd, GpuBuffer& buffer, int access);

#endif  // GDRBENCH_HAVE_CUDA_H

}  // namespace gdrbench::agent::memory
