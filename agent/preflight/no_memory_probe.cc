// Built only when agent/memory is absent from the build: the probe and the
// GPU load say so.
#include "agent/preflight/live_hardware.h"

namespace gdrbench::agent::preflight {
namespace {

class NoMemoryProbe : public RegistrationProbe {
 public:
  absl::StatusOr<std::string> RegisterOnePage(const std::string&, int) override {
    return absl::UnavailableError("this agent was built without agent/memory: no registration probe");
  }
};

class NoMemoryLoad : public GpuLoad {
 public:
  absl::StatusOr<LoadResult> RunWhile(int, absl::Duration, const std::function<void()>&) override {
    return absl::UnavailableError("this agent was built without agent/memory: no GPU load");
  }
};

}  // namespace

std::unique_ptr<GpuLoad> MakeLiveGpuLoad() { return std::make_unique<NoMemoryLoad>(); }

std::unique_ptr<RegistrationProbe> MakeLiveRegistrationProbe() {
  return std::make_unique<NoMemoryProbe>();
}

}  // namespace gdrbench::agent::preflight
