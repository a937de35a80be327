// Whether a GPU needs its GPUDirect RDMA writes flushed before a kernel on
// it may read what a NIC wrote (the verify's check kernel), from two device
// attributes: CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING (0 none,
// 100 owner, 200 all devices: CUGPUDirectRDMAWritesOrdering in cuda.h) and
// CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS (bit 0: the host
// may flush with cuFlushGPUDirectRDMAWrites). NCCL decides the same way
// before it reads received data on the GPU (its GDR flush).
// Pure: no CUDA here, unit-tested without a GPU.
#pragma once

namespace gdrbench::agent::memory {

enum class RdmaFlush {
  kNotNeeded,    // the GPU orders RDMA writes before its own later work (owner or all devices)
  kFlush,        // call cuFlushGPUDirectRDMAWrites(current context, to owner) first
  kUnavailable,  // ordering none and no host flush: a check kernel may read stale bytes
};

inline constexpr int kRdmaWritesOrderingOwner = 100;  // CU_GPU_DIRECT_RDMA_WRITES_ORDERING_OWNER
inline constexpr int kRdmaFlushOptionHost = 1;        // CU_FLUSH_GPU_DIRECT_RDMA_WRITES_OPTION_HOST

inline RdmaFlush DecideRdmaFlush(int ordering, int flush_options, bool have_flush_call) {
  if (ordering >= kRdmaWritesOrderingOwner) return RdmaFlush::kNotNeeded;
  if ((flush_options & kRdmaFlushOptionHost) != 0 && have_flush_call) return RdmaFlush::kFlush;
  return RdmaFlush::kUnavailable;
}

}  // namespace gdrbench::agent::memory
