#include "common/rpc/grpc_logging.h"

#include "grpc/support/log.h"
#include "spdlog/spdlog.h"

namespace gdrbench::rpc {
namespace {

void Sink(gpr_log_func_args* args) {
  switch (args->severity) {
    case GPR_LOG_SEVERITY_ERROR:
      spdlog::info("grpc: {} ({}:{})", args->message, args->file, args->line);
      break;
    case GPR_LOG_SEVERITY_INFO:
      spdlog::debug("grpc: {}", args->message);
      break;
    default:
      spdlog::trace("grpc: {}", args->message);
  }
}

}  // namespace

void RouteGrpcLogsToSpdlog() {
  gpr_set_log_verbosity(GPR_LOG_SEVERITY_DEBUG);
  gpr_set_log_function(Sink);
}

}  // namespace gdrbench::rpc
