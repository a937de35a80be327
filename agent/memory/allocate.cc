#include "absl/strings/str_cat.h"
#include "agent/memory/host_buffer.h"
#include "agent/memory/memory.h"

namespace gdrbench::agent::memory {

absl::StatusOr<std::unique_ptr<Buffer>> Allocate(const MemorySpec& spec, size_t bytes,
                                                 int numa_node) {
  switch (spec.kind) {
    case Kind::kHost:
    case Kind::kHugepage: {
      auto buf = HostBuffer::Create(spec.kind, bytes, numa_node);
      if (!buf.ok()) return buf.status();
      return std::unique_ptr<Buffer>(std::move(*buf));
    }
    case Kind::kGpu:
    case Kind::kGpuStaged:
      return absl::UnimplementedError(
          absl::StrCat("memory ", spec.ToString(), ": GPU buffers are not implemented yet"));
  }
  return absl::InvalidArgumentError("unknown memory kind");
}

}  // namespace gdrbench::agent::memory
