// The real one-page GPU registration probe, through agent/memory: the same
// allocation and registration path (dma-buf first, then peermem) a test uses.
#include <infiniband/verbs.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "agent/memory/memory.h"
#include "agent/preflight/live_hardware.h"
#include "common/status.h"

namespace gdrbench::agent::preflight {
namespace {

struct DeviceListDeleter {
  void operator()(ibv_device** l) const { ibv_free_device_list(l); }
};
struct ContextDeleter {
  void operator()(ibv_context* c) const { ibv_close_device(c); }
};
struct PdDeleter {
  void operator()(ibv_pd* p) const { ibv_dealloc_pd(p); }
};

class LiveRegistrationProbe : public RegistrationProbe {
 public:
  absl::StatusOr<std::string> RegisterOnePage(const std::string& device, int gpu) override {
    int n = 0;
    std::unique_ptr<ibv_device*, DeviceListDeleter> list(ibv_get_device_list(&n));
    ibv_device* dev = nullptr;
    for (int i = 0; list && i < n; ++i) {
      if (device == ibv_get_device_name(list.get()[i])) dev = list.get()[i];
    }
    if (dev == nullptr) return absl::NotFoundError(absl::StrCat("RDMA device ", device, " not found"));
    // Declared in creation order: destroyed MR, buffer, PD, context.
    std::unique_ptr<ibv_context, ContextDeleter> ctx(ibv_open_device(dev));
    if (!ctx) return ErrnoToStatus(errno, absl::StrCat("ibv_open_device(", device, ")"));
    std::unique_ptr<ibv_pd, PdDeleter> pd(ibv_alloc_pd(ctx.get()));
    if (!pd) return ErrnoToStatus(errno, absl::StrCat("ibv_alloc_pd(", device, ")"));
    memory::MemorySpec spec;
    spec.kind = memory::Kind::kGpu;
    spec.gpu = absl::StrCat(gpu);
    ASSIGN_OR_RETURN(auto buffer, memory::Allocate(spec, 4096, -1));
    ASSIGN_OR_RETURN(memory::Registration reg,
                     memory::Register(pd.get(), *buffer,
                                      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                                          IBV_ACCESS_REMOTE_READ));
    return reg.method;
  }
};

}  // namespace

std::unique_ptr<RegistrationProbe> MakeLiveRegistrationProbe() {
  return std::make_unique<LiveRegistrationProbe>();
}

}  // namespace gdrbench::agent::preflight
