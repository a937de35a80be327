#include "absl/strings/str_cat.h"
#include "agent/memory/gpu_buffer.h"
#include "agent/memory/host_buffer.h"
#include "agent/memory/memory.h"

namespace gdrbench::agent::memory {

absl::Status Buffer::StageToHost(size_t, size_t) {
  return absl::FailedPreconditionError(
      absl::StrCat("memory ", kind_name(), " is not staged: only gpu-staged copies GPU -> host"));
}

absl::StatusOr<std::unique_ptr<Buffer>> Allocate(const MemorySpec& spec, size_t bytes,
                                                 int numa_node) {
  switch (spec.kind) {
    case Kind::kHost:
    case Kind::kHugepage: {
      auto buf = HostBuffer::Create(spec.kind, bytes, numa_node);
      if (!buf.ok()) return buf.status();
      return std::unique_ptr<Buffer>(std::move(*buf));
    }
#if GDRBENCH_HAVE_CUDA_H
    case Kind::kGpu: {
      auto buf = GpuBuffer::Create(spec.gpu, bytes);
      if (!buf.ok()) return buf.status();
      return std::unique_ptr<Buffer>(std::move(*buf));
    }
    case Kind::kGpuStaged: {
      auto buf = GpuStagedBuffer::Create(spec.gpu, bytes, numa_node);
      if (!buf.ok()) return buf.status();
      return std::unique_ptr<Buffer>(std::move(*buf));
    }
#else
    case Kind::kGpu:
    case Kind::kGpuStaged:
      return absl::FailedPreconditionError(absl::StrCat(
          "memory ", spec.ToString(),
          ": gdrbench was built without cuda.h, so GPU memory is compiled out; rebuild with the "
          "CUDA headers (no fallback to host memory)"));
#endif
  }
  return absl::InvalidArgumentError("unknown memory kind");
}

}  // namespace gdrbench::agent::memory
