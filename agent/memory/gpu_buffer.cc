#include "agent/memory/gpu_buffer.h"

#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "agent/memory/rdma_flush.h"
#include "common/status.h"
#include "spdlog/spdlog.h"

namespace gdrbench::agent::memory {

#if GDRBENCH_HAVE_CUDA_H

absl::StatusOr<std::unique_ptr<GpuBuffer>> GpuBuffer::Create(const std::string& gpu,
                                                             size_t bytes,
                                                             const std::string& memory) {
  if (bytes == 0) return absl::InvalidArgumentError("buffer size must be at least 1 byte");
  absl::StatusOr<const cuda::CudaDriver*> driver = cuda::CudaDriver::Shared();
  if (!driver.ok()) {
    // No host fallback: say that GPU memory was asked for and why there is none.
    return absl::Status(
        driver.status().code() == absl::StatusCode::kNotFound
            ? absl::StatusCode::kFailedPrecondition
            : driver.status().code(),
        absl::StrCat("memory ", memory.empty() ? absl::StrCat("gpu:", gpu) : memory,
                     " needs a GPU (no fallback to host memory): ", driver.status().message()));
  }
  const std::string name = memory.empty() ? absl::StrCat("gpu:", gpu) : memory;
  absl::StatusOr<int> resolved = (*driver)->ResolveDevice(gpu);
  if (!resolved.ok()) {
    return absl::Status(resolved.status().code(),
                        absl::StrCat("memory ", name, ": ", resolved.status().message()));
  }
  const int ordinal = *resolved;
  GDR_ASSIGN_OR_RETURN(std::shared_ptr<cuda::GpuContext> ctx, cuda::GpuContext::Retain(**driver, ordinal));
  cuda::ScopedCurrent current(*ctx);
  GDR_RETURN_IF_ERROR(current.status());
  const cuda::CudaApi& api = ctx->api();
  const size_t allocated = (bytes + kGpuPageBytes - 1) / kGpuPageBytes * kGpuPageBytes;
  CUdeviceptr dptr = 0;
  if (CUresult r = api.cuMemAlloc(&dptr, allocated); r != CUDA_SUCCESS) {
    size_t free_bytes = 0, total = 0;
    api.cuMemGetInfo(&free_bytes, &total);
    absl::Status st = (*driver)->ToStatus(
        r, absl::StrCat("cuMemAlloc of ", allocated, " bytes on GPU ", ordinal, " (",
                        ctx->pci_bdf(), "; ", free_bytes, " of ", total, " bytes free)"));
    return st;
  }
  std::unique_ptr<GpuBuffer> buf(new GpuBuffer(ctx, dptr, bytes, allocated));
  // Every synchronous CUDA memory operation on this range completes before
  // returning, so a cuMemcpy the agent issues is ordered with the NIC's DMA.
  unsigned int one = 1;
  if (CUresult r = api.cuPointerSetAttribute(&one, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, dptr);
      r != CUDA_SUCCESS) {
    return (*driver)->ToStatus(r, "cuPointerSetAttribute(CU_POINTER_ATTRIBUTE_SYNC_MEMOPS)");
  }
  spdlog::debug("memory: gpu buffer of {} bytes ({} allocated) on {}", bytes, allocated,
                buf->Describe());
  return buf;
}

GpuBuffer::~GpuBuffer() {
  cuda::ScopedCurrent current(*ctx_);
  if (!current.status().ok()) {
    spdlog::error("memory: freeing the buffer on {}: {}", Describe(), std::string(current.status().message()));
    return;
  }
  if (CUresult r = ctx_->api().cuMemFree(dptr_); r != CUDA_SUCCESS) {
    spdlog::error("memory: {}", std::string(ctx_->driver().ToStatus(r, "cuMemFree").message()));
  }
}

std::string GpuBuffer::Describe() const {
  return absl::StrCat("GPU ", ctx_->ordinal(), " (", ctx_->pci_bdf(), ")");
}

bool GpuBuffer::DmaBufSupported() const {
  CUdevice dev;
  int supported = 0;
  const cuda::CudaApi& api = ctx_->api();
  if (api.cuDeviceGet(&dev, ctx_->ordinal()) != CUDA_SUCCESS) return false;
  if (api.cuDeviceGetAttribute(&supported, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, dev) !=
      CUDA_SUCCESS) {
    return false;
  }
  return supported != 0;
}

absl::StatusOr<UniqueFd> GpuBuffer::ExportDmaBuf() const {
  const cuda::CudaApi& api = ctx_->api();
  if (api.cuMemGetHandleForAddressRange == nullptr) {
    return absl::UnimplementedError(
        "the NVIDIA driver lacks cuMemGetHandleForAddressRange (CUDA driver older than 11.7)");
  }
  if (!DmaBufSupported()) {
    return absl::UnimplementedError(absl::StrCat(
        Describe(), " reports CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED=0 (dma-buf needs the NVIDIA "
                    "open kernel modules, driver >= 515 and Linux >= 5.12)"));
  }
  cuda::ScopedCurrent current(*ctx_);
  GDR_RETURN_IF_ERROR(current.status());
  int fd = -1;
  if (CUresult r = api.cuMemGetHandleForAddressRange(&fd, dptr_, allocated_,
                                                     CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
      r != CUDA_SUCCESS) {
    return ctx_->driver().ToStatus(
        r, absl::StrCat("cuMemGetHandleForAddressRange(DMA_BUF_FD, ", allocated_, " bytes on ",
                        Describe(), ")"));
  }
  return UniqueFd(fd);
}

absl::Status GpuBuffer::CopyToHost(void* dst, size_t offset, size_t length) const {
  GDR_RETURN_IF_ERROR(CheckRange(size_, offset, length, "CopyToHost"));
  cuda::ScopedCurrent current(*ctx_);
  GDR_RETURN_IF_ERROR(current.status());
  if (CUresult r = ctx_->api().cuMemcpyDtoH(dst, dptr_ + offset, length); r != CUDA_SUCCESS) {
    return ctx_->driver().ToStatus(r, absl::StrCat("cuMemcpyDtoH of ", length, " bytes from ",
                                                   Describe()));
  }
  return absl::OkStatus();
}

absl::Status GpuBuffer::CopyFromHost(const void* src, size_t offset, size_t length) {
  GDR_RETURN_IF_ERROR(CheckRange(size_, offset, length, "CopyFromHost"));
  cuda::ScopedCurrent current(*ctx_);
  GDR_RETURN_IF_ERROR(current.status());
  if (CUresult r = ctx_->api().cuMemcpyHtoD(dptr_ + offset, src, length); r != CUDA_SUCCESS) {
    return ctx_->driver().ToStatus(r, absl::StrCat("cuMemcpyHtoD of ", length, " bytes to ",
                                                   Describe()));
  }
  return absl::OkStatus();
}

absl::StatusOr<GpuPattern*> GpuBuffer::Pattern() {
  std::lock_guard<std::mutex> lock(pattern_mu_);
  if (pattern_ == nullptr) {
    GDR_ASSIGN_OR_RETURN(pattern_, GpuPattern::ForContext(ctx_));
  }
  return pattern_.get();
}

absl::Status GpuBuffer::FillPattern(size_t offset, size_t length, uint64_t seed) {
  GDR_RETURN_IF_ERROR(CheckRange(size_, offset, length, "FillPattern"));
  GDR_ASSIGN_OR_RETURN(GpuPattern * pattern, Pattern());
  return pattern->Fill(dptr_, offset, length, seed);
}

absl::Status GpuBuffer::FlushRdmaWrites() const {
  const cuda::CudaApi& api = ctx_->api();
  CUdevice dev;
  if (CUresult r = api.cuDeviceGet(&dev, ctx_->ordinal()); r != CUDA_SUCCESS) {
    return ctx_->driver().ToStatus(r, absl::StrCat("cuDeviceGet for ", Describe()));
  }
  int ordering = 0, options = 0;
  if (CUresult r = api.cuDeviceGetAttribute(
          &ordering, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING, dev);
      r != CUDA_SUCCESS) {
    return ctx_->driver().ToStatus(
        r, absl::StrCat("GPU_DIRECT_RDMA_WRITES_ORDERING of ", Describe()));
  }
  if (CUresult r = api.cuDeviceGetAttribute(
          &options, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS, dev);
      r != CUDA_SUCCESS) {
    return ctx_->driver().ToStatus(
        r, absl::StrCat("GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS of ", Describe()));
  }
  switch (DecideRdmaFlush(ordering, options, api.cuFlushGPUDirectRDMAWrites != nullptr)) {
    case RdmaFlush::kNotNeeded:
      return absl::OkStatus();
    case RdmaFlush::kUnavailable:
      return absl::FailedPreconditionError(absl::StrCat(
          Describe(), " does not order GPUDirect RDMA writes (GPU_DIRECT_RDMA_WRITES_ORDERING ",
          ordering, ") and offers no host flush (FLUSH_WRITES_OPTIONS ", options,
          api.cuFlushGPUDirectRDMAWrites == nullptr ? ", no cuFlushGPUDirectRDMAWrites" : "",
          "): a check could read stale bytes, so the verify is not run"));
    case RdmaFlush::kFlush:
      break;
  }
  cuda::ScopedCurrent current(*ctx_);
  GDR_RETURN_IF_ERROR(current.status());
  if (CUresult r = api.cuFlushGPUDirectRDMAWrites(CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX,
                                                  CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER);
      r != CUDA_SUCCESS) {
    return ctx_->driver().ToStatus(r, absl::StrCat("cuFlushGPUDirectRDMAWrites on ", Describe()));
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> GpuBuffer::CheckPattern(size_t offset, size_t length, uint64_t seed) {
  GDR_RETURN_IF_ERROR(CheckRange(size_, offset, length, "CheckPattern"));
  GDR_RETURN_IF_ERROR(FlushRdmaWrites());
  return CheckCopiedPattern(offset, length, seed);
}

absl::StatusOr<int64_t> GpuBuffer::CheckCopiedPattern(size_t offset, size_t length, uint64_t seed) {
  GDR_RETURN_IF_ERROR(CheckRange(size_, offset, length, "CheckPattern"));
  GDR_ASSIGN_OR_RETURN(GpuPattern * pattern, Pattern());
  return pattern->Check(dptr_, offset, length, seed);
}

// ---- gpu-staged ----

absl::StatusOr<std::unique_ptr<GpuStagedBuffer>> GpuStagedBuffer::Create(const std::string& gpu,
                                                                         size_t bytes,
                                                                         int numa_node) {
  GDR_ASSIGN_OR_RETURN(std::unique_ptr<GpuBuffer> dev,
                       GpuBuffer::Create(gpu, bytes, absl::StrCat("gpu-staged:", gpu)));
  GDR_ASSIGN_OR_RETURN(std::unique_ptr<HostBuffer> host, HostBuffer::Create(Kind::kHost, bytes, numa_node));
  // A NIC-local HostBuffer page-locked for CUDA (rather than cuMemHostAlloc,
  // which cannot be placed on a NUMA node), so the NIC side of the staged
  // path is as local as plain `host` memory and the two compare fairly.
  const cuda::GpuContext& ctx = dev->context();
  cuda::ScopedCurrent current(ctx);
  GDR_RETURN_IF_ERROR(current.status());
  if (CUresult r = ctx.api().cuMemHostRegister(host->data(), host->mapped_bytes(),
                                               CU_MEMHOSTREGISTER_PORTABLE);
      r != CUDA_SUCCESS) {
    return ctx.driver().ToStatus(
        r, absl::StrCat("cuMemHostRegister of the ", host->mapped_bytes(),
                        "-byte bounce buffer for ", dev->Describe()));
  }
  return std::unique_ptr<GpuStagedBuffer>(new GpuStagedBuffer(std::move(dev), std::move(host)));
}

GpuStagedBuffer::~GpuStagedBuffer() {
  const cuda::GpuContext& ctx = gpu_->context();
  cuda::ScopedCurrent current(ctx);
  if (CUresult r = ctx.api().cuMemHostUnregister(host_->data()); r != CUDA_SUCCESS) {
    spdlog::error("memory: {}", std::string(ctx.driver().ToStatus(r, "cuMemHostUnregister").message()));
  }
}

absl::Status GpuStagedBuffer::StageToHost(size_t offset, size_t length) {
  return gpu_->CopyToHost(static_cast<uint8_t*>(host_->data()) + offset, offset, length);
}

absl::Status GpuStagedBuffer::StageToGpu(size_t offset, size_t length) {
  return gpu_->CopyFromHost(static_cast<const uint8_t*>(host_->data()) + offset, offset, length);
}

absl::Status GpuStagedBuffer::FillPattern(size_t offset, size_t length, uint64_t seed) {
  GDR_RETURN_IF_ERROR(gpu_->FillPattern(offset, length, seed));
  return StageToHost(offset, length);
}

absl::StatusOr<int64_t> GpuStagedBuffer::CheckPattern(size_t offset, size_t length,
                                                      uint64_t seed) {
  GDR_RETURN_IF_ERROR(StageToGpu(offset, length));
  // The NIC wrote host memory here; the GPU got it by cuMemcpy: no flush.
  return gpu_->CheckCopiedPattern(offset, length, seed);
}

#endif  // GDRBENCH_HAVE_CUDA_H

}  // namespace gdrbench::agent::memory
