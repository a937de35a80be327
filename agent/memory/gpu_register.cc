// GPU memory registration: dma-buf first, then peermem, never host memory.
#include "agent/memory/gpu_register.h"

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
namespace {

// One attempt: success sets `mr`; failure says why and what to do.
struct Attempt {
  ibv_mr* mr = nullptr;
  std::string why;
  std::string remedy;
};

Attempt TryDmaBuf(GpuRegistrationOps& ops) {
  Attempt a;
  absl::StatusOr<UniqueFd> fd = ops.ExportDmaBuf();
  if (!fd.ok()) {
    a.why = std::string(fd.status().message());
    a.remedy = "use the NVIDIA open kernel modules (driver >= 515) on Linux >= 5.12";
    return a;
  }
  int err = 0;
  // The MR takes its own reference on the dma-buf; our fd closes on return.
  a.mr = ops.RegisterDmaBuf(fd->get(), &err);
  if (a.mr != nullptr) return a;
  if (err == EOPNOTSUPP || err == ENOSYS) {
    a.why = absl::StrCat("ibv_reg_dmabuf_mr on ", ops.NicName(), ": ", std::strerror(err),
                         ": the NIC driver or kernel does not import dma-bufs");
    a.remedy = "use rdma-core >= 34 with a NIC driver that imports dma-bufs (mlx5, Linux >= 5.12)";
  } else {
    a.why = absl::StrCat("ibv_reg_dmabuf_mr on ", ops.NicName(), ": ", std::strerror(err),
                         " (errno ", err, ")");
    if (err == ENOMEM || err == EPERM) a.remedy = "raise the locked-memory limit (ulimit -l)";
  }
  return a;
}

Attempt TryPeermem(GpuRegistrationOps& ops) {
  Attempt a;
  int err = 0;
  a.mr = ops.RegisterPeermem(&err);
  if (a.mr != nullptr) return a;
  const bool loaded = ops.PeermemLoaded();
  a.why = absl::StrCat("ibv_reg_mr of the device pointer on ", ops.NicName(), ": ",
                       std::strerror(err), " (errno ", err, ")",
                       loaded ? " although nvidia_peermem is loaded"
                              : ": nvidia-peermem is not loaded (/sys/module/nvidia_peermem absent)");
  a.remedy = loaded ? "check dmesg for nvidia-peermem and NIC driver errors"
                    : "`modprobe nvidia-peermem` and persist it in /etc/modules-load.d/";
  return a;
}

Registration Made(ibv_mr* mr, const char* method) {
  Registration reg;
  reg.mr.reset(mr);
  reg.method = method;
  return reg;
}

}  // namespace

absl::StatusOr<Registration> RegisterGpuWith(GpuRegistrationOps& ops) {
  Attempt dmabuf = TryDmaBuf(ops);
  if (dmabuf.mr != nullptr) {
    spdlog::info("memory: registered {} memory with {} via dma-buf (lkey {:#x})", ops.GpuName(),
                 ops.NicName(), dmabuf.mr->lkey);
    return Made(dmabuf.mr, "ibv_reg_dmabuf_mr");
  }
  Attempt peermem = TryPeermem(ops);
  if (peermem.mr != nullptr) {
    spdlog::info("memory: registered {} memory with {} via nvidia-peermem (dma-buf: {})",
                 ops.GpuName(), ops.NicName(), dmabuf.why);
    return Made(peermem.mr, "ibv_reg_mr+peermem");
  }
  std::vector<std::string> remedies;
  for (const Attempt* a : {&dmabuf, &peermem}) {
    if (!a->remedy.empty()) remedies.push_back(a->remedy);
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "GPU memory on ", ops.GpuName(), " cannot be registered with ", ops.NicName(),
      " (no fallback to host memory): tried dma-buf: ", dmabuf.why, "; tried peermem: ",
      peermem.why, ". Remedy: ", absl::StrJoin(remedies, ", or ")));
}

#if GDRBENCH_HAVE_CUDA_H

namespace {

class LiveOps final : public GpuRegistrationOps {
 public:
  LiveOps(ibv_pd* pd, const GpuBuffer& buffer, int access)
      : pd_(pd), buffer_(buffer), access_(access) {}
  std::string NicName() const override { return ibv_get_device_name(pd_->context->device); }
  std::string GpuName() const override { return buffer_.Describe(); }
  absl::StatusOr<UniqueFd> ExportDmaBuf() override { return buffer_.ExportDmaBuf(); }
  ibv_mr* RegisterDmaBuf(int fd, int* err) override {
    // iova = the device pointer, so work requests address GPU memory by the
    // same virtual address as with peermem.
    ibv_mr* mr = ibv_reg_dmabuf_mr(pd_, 0, buffer_.allocated_bytes(), buffer_.device_ptr(), fd,
                                   access_);
    *err = mr == nullptr ? errno : 0;
    return mr;
  }
  ibv_mr* RegisterPeermem(int* err) override {
    ibv_mr* mr = ibv_reg_mr(pd_, buffer_.data(), buffer_.allocated_bytes(), access_);
    *err = mr == nullptr ? errno : 0;
    return mr;
  }
  bool PeermemLoaded() const override { return FsRoot("/").Exists("/sys/module/nvidia_peermem"); }

 private:
  ibv_pd* pd_;
  const GpuBuffer& buffer_;
  int access_;
};

}  // namespace

absl::StatusOr<Registration> RegisterGpu(ibv_pd* pd, GpuBuffer& buffer, int access) {
  LiveOps ops(pd, buffer, access);
  return RegisterGpuWith(ops);
}

#endif  // GDRBENCH_HAVE_CUDA_H

}  // namespace gdrbench::agent::memory
