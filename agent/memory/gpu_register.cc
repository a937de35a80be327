// GPU memory registration: dma-buf first, then peermem, never host memory.
#include <infiniband/verbs.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/memory/gpu_buffer.h"
#include "common/fs_root.h"
#include "spdlog/spdlog.h"

namespace gdrbench::agent::memory {

#if GDRBENCH_HAVE_CUDA_H

namespace {

// One attempt: success fills `mr`; failure returns why and what to do.
struct Attempt {
  ibv_mr* mr = nullptr;
  std::string why;
  std::string remedy;
};

Attempt TryDmaBuf(ibv_pd* pd, const GpuBuffer& buffer, int access, const std::string& nic) {
  Attempt a;
  absl::StatusOr<UniqueFd> fd = buffer.ExportDmaBuf();
  if (!fd.ok()) {
    a.why = std::string(fd.status().message());
    a.remedy = "use the NVIDIA open kernel modules (driver >= 515) on Linux >= 5.12";
    return a;
  }
  // iova = the device pointer, so work requests address GPU memory by the
  // same virtual address as with peermem.
  a.mr = ibv_reg_dmabuf_mr(pd, 0, buffer.allocated_bytes(), buffer.device_ptr(), fd->get(),
                           access);
  // The MR holds its own reference on the dma-buf; our fd closes here.
  if (a.mr != nullptr) return a;
  int err = errno;
  if (err == EOPNOTSUPP || err == ENOSYS) {
    a.why = absl::StrCat("ibv_reg_dmabuf_mr on ", nic, ": ", std::strerror(err),
                         ": the NIC driver or kernel does not support dma-buf memory regions");
    a.remedy = "use rdma-core >= 34 with a NIC driver that imports dma-bufs (mlx5, Linux >= 5.12)";
  } else {
    a.why = absl::StrCat("ibv_reg_dmabuf_mr on ", nic, ": ", std::strerror(err), " (errno ", err,
                         ")");
    a.remedy = err == ENOMEM || err == EPERM ? "raise the locked-memory limit (ulimit -l)" : "";
  }
  return a;
}

Attempt TryPeermem(ibv_pd* pd, const GpuBuffer& buffer, int access, const std::string& nic) {
  Attempt a;
  a.mr = ibv_reg_mr(pd, buffer.data(), buffer.allocated_bytes(), access);
  if (a.mr != nullptr) return a;
  int err = errno;
  const FsRoot fs("/");
  const bool loaded = fs.Exists("/sys/module/nvidia_peermem");
  a.why = absl::StrCat("ibv_reg_mr of the device pointer on ", nic, ": ", std::strerror(err),
                       " (errno ", err, ")",
                       loaded ? " although nvidia_peermem is loaded"
                              : ": nvidia-peermem is not loaded (/sys/module/nvidia_peermem absent)");
  a.remedy = loaded ? "check dmesg for nvidia-peermem / NIC driver errors"
                    : "`modprobe nvidia-peermem` and add it to /etc/modules-load.d/";
  return a;
}

}  // namespace

absl::StatusOr<Registration> RegisterGpu(ibv_pd* pd, GpuBuffer& buffer, int access) {
  const std::string nic = ibv_get_device_name(pd->context->device);
  Attempt dmabuf = TryDmaBuf(pd, buffer, access, nic);
  if (dmabuf.mr != nullptr) {
    spdlog::info("memory: registered {} bytes on {} with {} via dma-buf (lkey {:#x})",
                 buffer.allocated_bytes(), buffer.Describe(), nic, dmabuf.mr->lkey);
    Registration reg;
    reg.mr.reset(dmabuf.mr);
    reg.method = "ibv_reg_dmabuf_mr";
    return reg;
  }
  Attempt peermem = TryPeermem(pd, buffer, access, nic);
  if (peermem.mr != nullptr) {
    spdlog::info("memory: registered {} bytes on {} with {} via nvidia-peermem (dma-buf: {})",
                 buffer.allocated_bytes(), buffer.Describe(), nic, dmabuf.why);
    Registration reg;
    reg.mr.reset(peermem.mr);
    reg.method = "ibv_reg_mr+peermem";
    return reg;
  }
  std::vector<std::string> remedies;
  for (const Attempt* a : {&dmabuf, &peermem}) {
    if (!a->remedy.empty()) remedies.push_back(a->remedy);
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "GPU memory on ", buffer.Describe(), " cannot be registered with ", nic,
      " (no fallback to host memory): tried dma-buf: ", dmabuf.why, "; tried peermem: ",
      peermem.why, ". Remedy: ", absl::StrJoin(remedies, ", or ")));
}

#endif  // GDRBENCH_HAVE_CUDA_H

}  // namespace gdrbench::agent::memory
