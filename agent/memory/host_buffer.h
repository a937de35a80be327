// Host memory buffers: `host` (normal pages) and `hugepage` (2 MiB pages),
// both mmap'ed (page-aligned) and bound to one NUMA node with mbind before the
// pages are touched, so they land on the NIC's node.
//
// Thread safety: FillPattern/CheckPattern may run concurrently on disjoint
// ranges; the buffer itself is immutable after creation.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "agent/memory/memory.h"

namespace gdrbench::agent::memory {

inline constexpr size_t kHugepageBytes = size_t{2} << 20;

class HostBuffer final : public Buffer {
 public:
  // `bytes` > 0. `numa_node` < 0: the kernel's default policy.
  // Errors: INVALID_ARGUMENT (zero size, or a NUMA node the kernel rejects);
  // RESOURCE_EXHAUSTED (no memory; for hugepages, the message says how to
  // reserve them); any other mmap/mbind errno mapped by ErrnoToStatus.
  static absl::StatusOr<std::unique_ptr<HostBuffer>> Create(Kind kind, size_t bytes,
                                                            int numa_node);
  ~HostBuffer() override;
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;

  void* data() const override { return base_; }
  size_t size() const override { return size_; }
  Kind kind() const override { return kind_; }
  std::string kind_name() const override;
  absl::Status FillPattern(size_t offset, size_t length, uint64_t seed) override;
  absl::StatusOr<int64_t> CheckPattern(size_t offset, size_t length, uint64_t seed) override;
  std::string check_method() const override { return "cpu"; }

  // The mapping length (size rounded up to the page size).
  size_t mapped_bytes() const { return mapped_; }
  int numa_node() const { return numa_node_; }

 private:
  HostBuffer(Kind kind, void* base, size_t size, size_t mapped, int numa_node)
      : kind_(kind), base_(base), size_(size), mapped_(mapped), numa_node_(numa_node) {}
  Kind kind_;
  void* base_;
  size_t size_;
  size_t mapped_;
  int numa_node_;
};

// Binds [addr, addr+len) to `numa_node` (MPOL_BIND, moving pages already
// there). Raw syscall: no libnuma dependency. INVALID_ARGUMENT for a node the
// kernel does not have.
absl::Status BindToNumaNode(void* addr, size_t len, int numa_node);

// INVALID_ARGUMENT unless [offset, offset+length) lies inside `size`.
absl::Status CheckRange(size_t size, size_t offset, size_t length, absl::string_view what);

}  // namespace gdrbench::agent::memory
