#include "common/rpc/grpc_logging.h"

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string_view>

#include "grpc/support/log.h"
#include "spdlog/spdlog.h"

namespace gdrbench::rpc {
namespace {

// A failed TLS handshake is one remote connection's doing (a client without
// the right certificate, a scanner): gRPC logs each, so a flood would write
// a line per connection. At most one such line per 10 s, with the number of
// those not logged since the last.
bool LogHandshakeFailureNow(uint64_t* skipped) {
  static std::mutex mu;
  static std::chrono::steady_clock::time_point last{};
  static uint64_t count = 0;
  std::lock_guard lock(mu);
  auto now = std::chrono::steady_clock::now();
  if (last != std::chrono::steady_clock::time_point{} && now - last < std::chrono::seconds(10)) {
    ++count;
    return false;
  }
  last = now;
  *skipped = count;
  count = 0;
  return true;
}

void Sink(gpr_log_func_args* args) {
  switch (args->severity) {
    case GPR_LOG_SEVERITY_ERROR:
      if (std::string_view(args->message).rfind("Handshake failed", 0) == 0) {
        uint64_t skipped = 0;
        if (!LogHandshakeFailureNow(&skipped)) break;
        spdlog::info("grpc: {} ({}:{}; {} more handshake failures since the last such line, not logged)",
                     args->message, args->file, args->line, skipped);
        break;
      }
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
