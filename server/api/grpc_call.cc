#include "server/api/grpc_call.h"

#include <string>
#include <string_view>

#include "spdlog/spdlog.h"

namespace gdrbench::server::api {

absl::StatusOr<Principal> GrpcCaller(const Authorizer& auth, grpc::ServerContext* ctx, Role needed) {
  const auto& md = ctx->client_metadata();
  auto it = md.find("authorization");
  std::string_view value;
  if (it != md.end()) value = std::string_view(it->second.data(), it->second.size());
  auto who = auth.Check(value, needed);
  if (!who.ok())
    spdlog::warn("gRPC call from {} refused: {}", ctx->peer(), std::string(who.status().message()));
  return who;
}

}  // namespace gdrbench::server::api
