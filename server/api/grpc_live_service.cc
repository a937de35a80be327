#include "server/api/grpc_live_service.h"

#include "common/rpc/status.h"
#include "spdlog/spdlog.h"

namespace gdrbench::server::api {
namespace {

template <typename T>
grpc::Status Reply(absl::StatusOr<T> r, T* out) {
  if (!r.ok()) return rpc::ToGrpc(r.status());
  *out = std::move(*r);
  return grpc::Status::OK;
}

}  // namespace

absl::StatusOr<Principal> GrpcLiveRunsService::Caller(grpc::ServerContext* ctx, Role needed) const {
  const auto& md = ctx->client_metadata();
  auto it = md.find("authorization");
  std::string_view value;
  if (it != md.end()) value = std::string_view(it->second.data(), it->second.size());
  auto who = auth_.Check(value, needed);
  if (!who.ok())
    spdlog::warn("gRPC call from {} refused: {}", ctx->peer(), std::string(who.status().message()));
  return who;
}

#define GDR_CALLER(role)        \
  auto who = Caller(ctx, role); \
  if (!who.ok()) return rpc::ToGrpc(who.status())

grpc::Status GrpcLiveRunsService::OpenLiveRun(grpc::ServerContext* ctx, const v1::OpenLiveRunRequest* req,
                                              v1::LiveRun* resp) {
  GDR_CALLER(Role::kWrite);
  return Reply(h_.OpenLiveRun(*req, *who), resp);
}

grpc::Status GrpcLiveRunsService::AppendLiveRun(grpc::ServerContext* ctx, const v1::LiveChunk* req,
                                                v1::LiveAck* resp) {
  GDR_CALLER(Role::kWrite);
  return Reply(h_.AppendLiveRun(*req), resp);
}

grpc::Status GrpcLiveRunsService::GetLiveRun(grpc::ServerContext* ctx, const v1::GetLiveRunRequest* req,
                                             v1::LiveRun* resp) {
  GDR_CALLER(Role::kRead);
  return Reply(h_.GetLiveRun(*req), resp);
}

grpc::Status GrpcLiveRunsService::ListLiveRuns(grpc::ServerContext* ctx, const v1::ListLiveRunsRequest* req,
                                               v1::ListLiveRunsResponse* resp) {
  GDR_CALLER(Role::kRead);
  return Reply(h_.ListLiveRuns(*req), resp);
}

grpc::Status GrpcLiveRunsService::ListLiveCells(grpc::ServerContext* ctx, const v1::ListLiveCellsRequest* req,
                                                v1::ListLiveCellsResponse* resp) {
  GDR_CALLER(Role::kRead);
  return Reply(h_.ListLiveCells(*req), resp);
}

grpc::Status GrpcLiveRunsService::AbandonLiveRun(grpc::ServerContext* ctx,
                                                 const v1::AbandonLiveRunRequest* req, v1::LiveRun* resp) {
  GDR_CALLER(Role::kWrite);
  return Reply(h_.AbandonLiveRun(*req), resp);
}

#undef GDR_CALLER

}  // namespace gdrbench::server::api
