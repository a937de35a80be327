// Built only when agent/memory is absent from the build: the probe says so.
#include "agent/preflight/live_hardware.h"

namespace gdrbench::agent::preflight {
namespace {

class NoMemoryProbe : public RegistrationProbe {
 public:
  absl::StatusOr<std::string> RegisterOnePage(const std::string&, int) override {
    return absl::UnavailableError("this agent was built without agent/memory: no registration probe");
  }
};

}  // namespace

std::unique_ptr<RegistrationProbe> MakeLiveRegistrationProbe() {
  return std::make_unique<NoMemoryProbe>();
}

}  // namespace gdrbench::agent::preflight
