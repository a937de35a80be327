// Registration of buffers with verbs: the one place in this library where
// verbs' NULL+errno convention becomes absl::Status.
#include <infiniband/verbs.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "agent/memory/gpu_buffer.h"
#include "agent/memory/memory.h"
#include "common/status.h"
#include "spdlog/spdlog.h"

namespace gdrbench::agent::memory {

void MrDeleter::operator()(ibv_mr* mr) const {
  if (mr == nullptr) return;
  if (int rc = ibv_dereg_mr(mr); rc != 0) {
    spdlog::error("memory: ibv_dereg_mr(lkey {:#x}) failed: {}", mr->lkey, std::strerror(rc));
  }
}

absl::StatusOr<Registration> Register(ibv_pd* pd, Buffer& buffer, int access) {
  if (pd == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot register the ", buffer.kind_name(),
        " buffer: no RDMA device (no protection domain was opened)"));
  }
  if (buffer.kind() == Kind::kGpu) {
#if GDRBENCH_HAVE_CUDA_H
    return RegisterGpu(pd, static_cast<GpuBuffer&>(buffer), access);
#else
    return absl::UnimplementedError("gdrbench was built without cuda.h: no GPU registration");
#endif
  }
  // host, hugepage, and gpu-staged (whose data() is its pinned host bounce buffer).
  ibv_mr* mr = ibv_reg_mr(pd, buffer.data(), buffer.size(), access);
  if (mr == nullptr) {
    int err = errno;
    absl::Status st = ErrnoToStatus(
        err, absl::StrCat("ibv_reg_mr of the ", buffer.size(), "-byte ", buffer.kind_name(),
                          " buffer on ", ibv_get_device_name(pd->context->device)));
    if (err == ENOMEM || err == EPERM || err == EAGAIN) {
      return absl::ResourceExhaustedError(absl::StrCat(
          st.message(), "; the locked-memory limit is likely too low: raise `ulimit -l` "
                        "(LimitMEMLOCK=infinity for systemd, IPC_LOCK in containers)"));
    }
    return st;
  }
  Registration reg;
  reg.mr.reset(mr);
  reg.method = "ibv_reg_mr";
  spdlog::debug("memory: registered {} bytes of {} memory on {} with ibv_reg_mr (lkey {:#x})",
                buffer.size(), buffer.kind_name(), ibv_get_device_name(pd->context->device),
                mr->lkey);
  return reg;
}

}  // namespace gdrbench::agent::memory
