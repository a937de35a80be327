#include "agent/memory/host_buffer.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "absl/strings/str_cat.h"
#include "agent/memory/pattern.h"
#include "common/status.h"
#include "spdlog/spdlog.h"

namespace gdrbench::agent::memory {
namespace {

// From <linux/mempolicy.h>; spelled out so no libnuma headers are needed.
constexpr int kMpolBind = 2;
constexpr unsigned kMpolMfMove = 1u << 1;
constexpr int kMaxNumaNodes = 1024;

constexpr int kMpolDefault = 0;
constexpr size_t kMaskWords = kMaxNumaNodes / (8 * sizeof(unsigned long));
constexpr size_t kBitsPerWord = 8 * sizeof(unsigned long);

size_t RoundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

absl::Status CheckNode(int numa_node) {
  if (numa_node < 0 || numa_node >= kMaxNumaNodes) {
    return absl::InvalidArgumentError(absl::StrCat("NUMA node ", numa_node, " is out of range"));
  }
  return absl::OkStatus();
}

absl::Status PolicyError(int err, absl::string_view call, int numa_node) {
  if (err == EINVAL) {
    return absl::InvalidArgumentError(absl::StrCat(call, " to NUMA node ", numa_node,
                                                   ": the kernel has no such node (",
                                                   std::strerror(err), ")"));
  }
  return ErrnoToStatus(err, absl::StrCat(call, " to NUMA node ", numa_node));
}

// Binds the calling thread's allocations to one node until destroyed, then
// restores the default policy (the agent sets no other thread policy).
class ScopedThreadPolicy {
 public:
  static absl::StatusOr<ScopedThreadPolicy> Bind(int numa_node) {
    GDR_RETURN_IF_ERROR(CheckNode(numa_node));
    unsigned long mask[kMaskWords] = {};
    mask[numa_node / kBitsPerWord] |= 1ul << (numa_node % kBitsPerWord);
    if (syscall(SYS_set_mempolicy, kMpolBind, mask, kMaxNumaNodes + 1) != 0) {
      return PolicyError(errno, "set_mempolicy", numa_node);
    }
    return ScopedThreadPolicy();
  }
  ScopedThreadPolicy(ScopedThreadPolicy&& o) noexcept : active_(o.active_) { o.active_ = false; }
  ScopedThreadPolicy& operator=(ScopedThreadPolicy&&) = delete;
  ~ScopedThreadPolicy() {
    if (active_ && syscall(SYS_set_mempolicy, kMpolDefault, nullptr, 0) != 0) {
      spdlog::error("memory: restoring the default NUMA policy failed: {}", std::strerror(errno));
    }
  }

 private:
  ScopedThreadPolicy() = default;
  bool active_ = true;
};

}  // namespace

absl::Status CheckRange(size_t size, size_t offset, size_t length, absl::string_view what) {
  if (offset > size || length > size - offset) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": range [", offset, ", ",
                                                   offset + length, ") is outside the ",
                                                   size, "-byte buffer"));
  }
  return absl::OkStatus();
}

absl::Status BindToNumaNode(void* addr, size_t len, int numa_node) {
  GDR_RETURN_IF_ERROR(CheckNode(numa_node));
  unsigned long mask[kMaskWords] = {};
  mask[numa_node / kBitsPerWord] |= 1ul << (numa_node % kBitsPerWord);
  if (syscall(SYS_mbind, addr, len, kMpolBind, mask, kMaxNumaNodes + 1, kMpolMfMove) != 0) {
    return PolicyError(errno, "mbind", numa_node);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<HostBuffer>> HostBuffer::Create(Kind kind, size_t bytes,
                                                               int numa_node) {
  if (kind != Kind::kHost && kind != Kind::kHugepage) {
    return absl::InvalidArgumentError("HostBuffer holds only host or hugepage memory");
  }
  if (bytes == 0) return absl::InvalidArgumentError("buffer size must be at least 1 byte");
  const bool huge = kind == Kind::kHugepage;
  const size_t page = huge ? kHugepageBytes : static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t mapped = RoundUp(bytes, page);
  int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
  // Hugepages are reserved at mmap time (no MAP_NORESERVE), and the kernel
  // counts the reservation against the calling thread's policy: bind the
  // thread first so a node without free 2 MiB pages fails here with ENOMEM
  // instead of SIGBUS at first touch.
  std::optional<ScopedThreadPolicy> thread_policy;
  if (huge) {
    flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB;
    if (numa_node >= 0) {
      GDR_ASSIGN_OR_RETURN(ScopedThreadPolicy policy, ScopedThreadPolicy::Bind(numa_node));
      thread_policy.emplace(std::move(policy));
    }
  }
  void* p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, flags, -1, 0);
  if (p == MAP_FAILED) {
    int err = errno;
    if (huge && (err == ENOMEM || err == EINVAL)) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "hugepage buffer of ", bytes, " bytes: mmap(MAP_HUGETLB, ", mapped,
          " bytes) failed: ", std::strerror(err), "; reserve 2 MiB pages first, e.g. "
          "`echo ", mapped / kHugepageBytes,
          " > /sys/devices/system/node/node<N>/hugepages/hugepages-2048kB/nr_hugepages` "
          "(or vm.nr_hugepages), and check /proc/meminfo HugePages_Free"));
    }
    return ErrnoToStatus(err, absl::StrCat("mmap of a ", mapped, "-byte ",
                                           huge ? "hugepage" : "host", " buffer"));
  }
  std::unique_ptr<HostBuffer> buf(new HostBuffer(kind, p, bytes, mapped, numa_node));
  if (numa_node >= 0) {
    GDR_RETURN_IF_ERROR(BindToNumaNode(p, mapped, numa_node));
  }
  // Fault every page in now, under the policy, so first-touch happens here and
  // not inside a timed loop; also makes a failed hugepage reservation show up
  // now rather than as SIGBUS later.
  std::memset(p, 0, mapped);
  spdlog::debug("memory: {} buffer of {} bytes at {} (NUMA node {})", buf->kind_name(), bytes, p,
                numa_node);
  return buf;
}

HostBuffer::~HostBuffer() {
  if (base_ != nullptr && munmap(base_, mapped_) != 0) {
    spdlog::error("memory: munmap of {} bytes at {} failed: {}", mapped_, base_,
                  std::strerror(errno));
  }
}

std::string HostBuffer::kind_name() const {
  return kind_ == Kind::kHugepage ? "hugepage" : "host";
}

absl::Status HostBuffer::FillPattern(size_t offset, size_t length, uint64_t seed) {
  GDR_RETURN_IF_ERROR(CheckRange(size_, offset, length, "FillPattern"));
  CpuFillPattern(static_cast<uint8_t*>(base_), offset, length, seed);
  return absl::OkStatus();
}

absl::StatusOr<int64_t> HostBuffer::CheckPattern(size_t offset, size_t length, uint64_t seed) {
  GDR_RETURN_IF_ERROR(CheckRange(size_, offset, length, "CheckPattern"));
  return CpuCheckPattern(static_cast<const uint8_t*>(base_), offset, length, seed);
}

}  // namespace gdrbench::agent::memory
