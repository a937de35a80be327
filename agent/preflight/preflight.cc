#include "agent/preflight/preflight.h"

#include "agent/preflight/context.h"
#include "agent/preflight/live_hardware.h"
#include "agent/preflight/runner.h"

namespace gdrbench::agent::preflight {

absl::StatusOr<Report> RunPreflightOn(const FsRoot& fs, const std::vector<std::string>& only,
                                      const Expectations& expect) {
  Hardware hw = MakeHardware(fs);
  Context ctx(fs, *hw.rdma, *hw.cuda, *hw.probe, expect);
  return RunPreflight(ctx, only);
}

}  // namespace gdrbench::agent::preflight
