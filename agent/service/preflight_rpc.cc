// RunPreflight: the agent side of the GPUDirect RDMA checklist.
#include <string>
#include <vector>

#include "agent/preflight/preflight.h"
#include "agent/service/agent_handler.h"
#include "agent/service/preflight_proto.h"
#include "common/status.h"
#include "spdlog/spdlog.h"

namespace gdrbench::agent::service {

absl::StatusOr<v1::PreflightReport> AgentHandler::RunPreflight(
    const v1::RunPreflightRequest& request) {
  preflight::RunOptions options;
  options.checks.assign(request.checks().begin(), request.checks().end());
  options.expect = FromProto(request.expectations());
  options.devices = config_.devices;
  options.counter_history = counter_history_;
  // Unknown ids are INVALID_ARGUMENT (naming the known ones) from the runner.
  GDR_ASSIGN_OR_RETURN(preflight::Report report, preflight::RunPreflightOn(fs_, options));
  spdlog::info("preflight: {} checks, overall {}, {:.1f} ms", report.checks.size(),
               preflight::StatusName(report.overall), report.duration_ns / 1e6);
  return ToProto(report);
}

}  // namespace gdrbench::agent::service
