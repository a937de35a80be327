#include "agent/memory/probe.h"

#include <infiniband/verbs.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status.h"

namespace gdrbench::agent::memory {
namespace {

struct DeviceListDeleter {
  void operator()(ibv_device** list) const { ibv_free_device_list(list); }
};
struct ContextDeleter {
  void operator()(ibv_context* ctx) const { ibv_close_device(ctx); }
};
struct PdDeleter {
  void operator()(ibv_pd* pd) const { ibv_dealloc_pd(pd); }
};

}  // namespace

absl::StatusOr<std::string> ProbeRegistration(Buffer& buffer, const std::string& rdma_device) {
  int count = 0;
  std::unique_ptr<ibv_device*, DeviceListDeleter> list(ibv_get_device_list(&count));
  if (list == nullptr || count == 0) {
    const int err = list == nullptr ? errno : 0;
    return absl::FailedPreconditionError(absl::StrCat(
        "no RDMA device: libibverbs lists none",
        err != 0 ? absl::StrCat(" (ibv_get_device_list: ", std::strerror(err), ")") : "",
        "; cannot register the ", buffer.kind_name(),
        " buffer. Load the NIC's RDMA driver (e.g. mlx5_ib) and check /sys/class/infiniband"));
  }
  ibv_device* chosen = nullptr;
  std::vector<std::string> names;
  for (int i = 0; i < count; ++i) {
    names.push_back(ibv_get_device_name(list.get()[i]));
    if (chosen == nullptr && (rdma_device.empty() || names.back() == rdma_device)) {
      chosen = list.get()[i];
    }
  }
  if (chosen == nullptr) {
    return absl::NotFoundError(absl::StrCat("no RDMA device \"", rdma_device,
                                            "\"; this node has ", absl::StrJoin(names, ", ")));
  }
  const std::string name = ibv_get_device_name(chosen);
  std::unique_ptr<ibv_context, ContextDeleter> ctx(ibv_open_device(chosen));
  if (ctx == nullptr) return ErrnoToStatus(errno, absl::StrCat("ibv_open_device(", name, ")"));
  std::unique_ptr<ibv_pd, PdDeleter> pd(ibv_alloc_pd(ctx.get()));
  if (pd == nullptr) return ErrnoToStatus(errno, absl::StrCat("ibv_alloc_pd(", name, ")"));
  ASSIGN_OR_RETURN(Registration reg,
                   Register(pd.get(), buffer,
                            IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                                IBV_ACCESS_REMOTE_READ));
  return reg.method;  // reg.mr is deregistered before pd and ctx go
}

}  // namespace gdrbench::agent::memory
