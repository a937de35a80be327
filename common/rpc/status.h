// The one place where absl::Status becomes grpc::Status and back (service
// edge and client edge). Codes map one to one; messages are kept, cut at
// limits::kMaxErrorMessageBytes on the way out.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace gdrbench::rpc {

grpc::Status ToGrpc(const absl::Status& status);
// `what` names the call and peer, e.g. "GetNodeInfo on 10.0.0.1:7070";
// `peer` what answers there ("agent", "gdrbench-server"): UNAVAILABLE reads
// "<what>: <peer> unreachable (<gRPC's words>)".
absl::Status FromGrpc(const grpc::Status& status, const std::string& what, const char* peer = "agent");

}  // namespace gdrbench::rpc
