#include "agent/memory/probe.h"

#include <infiniband/verbs.h>

#include "absl/strings/str_cat.h"
#include "agent/verbs/handles.h"
#include "common/status.h"

namespace gdrbench::agent::memory {

absl::StatusOr<std::string> ProbeRegistration(Buffer& buffer, const std::string& rdma_device) {
  auto ctx = verbs::OpenDevice(rdma_device);
  if (!ctx.ok()) {
    if (ctx.status().code() != absl::StatusCode::kFailedPrecondition) return ctx.status();
    return absl::FailedPreconditionError(absl::StrCat(
        ctx.status().message(), "; cannot register the ", buffer.kind_name(),
        " buffer. Load the NIC's RDMA driver (e.g. mlx5_ib) and check /sys/class/infiniband"));
  }
  // Declared in creation order: the MR goes before the PD, the PD before the context.
  GDR_ASSIGN_OR_RETURN(verbs::PdPtr pd, verbs::AllocPd(ctx->get()));
  GDR_ASSIGN_OR_RETURN(
      Registration reg,
      Register(pd.get(), buffer, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ));
  return reg.method;
}

}  // namespace gdrbench::agent::memory
