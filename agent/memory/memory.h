// Buffers the NIC reads and writes, and their registration with verbs.
//
// Memory kinds (the `memory` string of the API):
//   host          malloc'ed, page-aligned, NUMA-local to the NIC
//   hugepage      2 MiB pages (MAP_HUGETLB), NUMA-local to the NIC
//   gpu:<i|BDF>   cuMemAlloc on one GPU, registered for GPUDirect RDMA
//   gpu-staged:<i|BDF>  a GPU buffer bounced through pinned host memory (the
//                 NIC sees host memory; the copy is what GPUDirect removes)
//
// GPU registration order: dma-buf (cuMemGetHandleForAddressRange ->
// ibv_reg_dmabuf_mr), then ibv_reg_mr on the device pointer (nvidia-peermem).
// Never a silent fallback to host memory: when GPU memory cannot be had or
// registered the call fails with the reason and the remedy.
//
// Where things are: host_buffer.h (host, hugepage; NUMA binding),
// gpu_buffer.h (gpu, gpu-staged and the staging semantics), pattern.h and
// pattern_word.h (the integrity pattern), gpu_pattern.h and pattern_kernels.cu
// (the CUDA kernels), gpu_register.h (the GPU registration policy), probe.h
// (a one-shot registration probe for preflight).
//
// Thread safety: a Buffer is immutable after Allocate; FillPattern and
// CheckPattern may run from several threads on disjoint ranges. Register and
// Allocate are stateless (the CUDA driver is loaded once, process-wide).
//
// This library never includes gRPC or protobuf headers.
#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gdrbench::agent::memory {

enum class Kind { kHost, kHugepage, kGpu, kGpuStaged };

struct MemorySpec {
  Kind kind = Kind::kHost;
  std::string gpu;  // for kGpu/kGpuStaged: a CUDA index ("0") or PCI BDF ("0000:17:00.0")

  // "host", "hugepage", "gpu:0", "gpu:0000:17:00.0", "gpu-staged:1".
  // INVALID_ARGUMENT with the accepted forms otherwise.
  static absl::StatusOr<MemorySpec> Parse(absl::string_view text);
  std::string ToString() const;
};

// One allocation. Move-only; freed in the destructor (which logs, never throws).
class Buffer {
 public:
  virtual ~Buffer() = default;
  // The address the NIC is given: host memory, or the device pointer for kGpu.
  virtual void* data() const = 0;
  virtual size_t size() const = 0;
  virtual Kind kind() const = 0;
  // "host", "hugepage", "gpu", "gpu-staged": what was really allocated.
  virtual std::string kind_name() const = 0;

  // Integrity pattern: a deterministic byte stream of (seed, offset) written
  // into [offset, offset+length) / checked there. CheckPattern returns the
  // first mismatching offset (absolute, in the buffer), or -1 when all match.
  // GPU buffers use a CUDA kernel; others the CPU.
  // Errors: INVALID_ARGUMENT when the range is outside the buffer;
  // FAILED_PRECONDITION for GPU buffers when the kernels are not available
  // (built without nvcc, or the driver cannot load the PTX), saying so.
  virtual absl::Status FillPattern(size_t offset, size_t length, uint64_t seed) = 0;
  virtual absl::StatusOr<int64_t> CheckPattern(size_t offset, size_t length, uint64_t seed) = 0;
  // "cpu" or "cuda-kernel".
  virtual std::string check_method() const = 0;
  // gpu-staged: copies [offset, offset+length) GPU -> the pinned host buffer
  // the NIC sends from (the copy GPUDirect removes). FAILED_PRECONDITION for
  // every other kind (nothing to stage).
  virtual absl::Status StageToHost(size_t offset, size_t length);
};

// The pattern byte at `offset` for `seed`; the single definition both sides use.
uint8_t PatternByte(uint64_t seed, uint64_t offset);

// NOT_FOUND for a GPU that does not exist (with the list), FAILED_PRECONDITION
// when there is no NVIDIA driver / GPU (no host fallback), RESOURCE_EXHAUSTED
// when the allocation fails (for hugepages, with how to reserve them),
// INVALID_ARGUMENT for zero bytes or a NUMA node the kernel does not have.
// `numa_node` (the NIC's node; < 0: no preference) places host, hugepage and
// the gpu-staged bounce buffer; GPU memory is on its GPU.
absl::StatusOr<std::unique_ptr<Buffer>> Allocate(const MemorySpec& spec, size_t bytes,
                                                 int numa_node);

struct MrDeleter {
  void operator()(ibv_mr* mr) const;
};
using MrPtr = std::unique_ptr<ibv_mr, MrDeleter>;

struct Registration {
  MrPtr mr;
  std::string method;  // "ibv_reg_mr", "ibv_reg_dmabuf_mr", "ibv_reg_mr+peermem"
};

// Registers `buffer` with `pd` for `access` (IBV_ACCESS_* flags). For GPU
// buffers: dma-buf first, then peermem; on failure the message names what
// was tried, why each failed and the remedy (e.g. "load nvidia-peermem").
absl::StatusOr<Registration> Register(ibv_pd* pd, Buffer& buffer, int access);

}  // namespace gdrbench::agent::memory
