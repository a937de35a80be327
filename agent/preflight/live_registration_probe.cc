// The real one-page GPU registration probe, through agent/memory: the same
// allocation and registration path (dma-buf first, then peermem) a test uses.
#include <infiniband/verbs.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "agent/memory/memory.h"
#include "agent/memory/probe.h"
#include "agent/preflight/live_hardware.h"
#include "common/status.h"

namespace gdrbench::agent::preflight {
namespace {

class LiveRegistrationProbe : public RegistrationProbe {
 public:
  absl::StatusOr<std::string> RegisterOnePage(const std::string& device, int gpu) override {
    memory::MemorySpec spec;
    spec.kind = memory::Kind::kGpu;
    spec.gpu = absl::StrCat(gpu);
    GDR_ASSIGN_OR_RETURN(auto buffer, memory::Allocate(spec, 4096, -1));
    return memory::ProbeRegistration(*buffer, device);
  }
};

}  // namespace

std::unique_ptr<RegistrationProbe> MakeLiveRegistrationProbe() {
  return std::make_unique<LiveRegistrationProbe>();
}

}  // namespace gdrbench::agent::preflight
