// Routes gRPC core's own log lines (gpr_log) into spdlog, so they follow
// --log-level instead of printing "E1129 ..." lines on every handshake
// failure. gRPC errors map to spdlog info, info to debug, debug to trace:
// the failure that matters reaches the user through a Status.
#pragma once

namespace gdrbench::rpc {

void RouteGrpcLogsToSpdlog();

}  // namespace gdrbench::rpc
