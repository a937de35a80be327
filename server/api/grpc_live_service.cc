#include "server/api/grpc_live_service.h"

#include "common/rpc/status.h"
#include "server/api/grpc_call.h"

namespace gdrbench::server::api {

absl::StatusOr<Principal> GrpcLiveRunsService::Caller(grpc::ServerContext* ctx, Role needed) const {
  return GrpcCaller(auth_, ctx, needed);
}

grpc::Status GrpcLiveRunsService::OpenLiveRun(grpc::ServerContext* ctx, const v1::OpenLiveRunRequest* req,
                                              v1::LiveRun* resp) {
  GDR_CALLER(Role::kWrite);
  return GrpcReply(h_.OpenLiveRun(*req, *who), resp);
}

grpc::Status GrpcLiveRunsService::AppendLiveRun(grpc::ServerContext* ctx, const v1::LiveChunk* req,
                                                v1::LiveAck* resp) {
  GDR_CALLER(Role::kWrite);
  return GrpcReply(h_.AppendLiveRun(*req), resp);
}

grpc::Status GrpcLiveRunsService::GetLiveRun(grpc::ServerContext* ctx, const v1::GetLiveRunRequest* req,
                                             v1::LiveRun* resp) {
  GDR_CALLER(Role::kRead);
  return GrpcReply(h_.GetLiveRun(*req), resp);
}

grpc::Status GrpcLiveRunsService::ListLiveRuns(grpc::ServerContext* ctx, const v1::ListLiveRunsRequest* req,
                                               v1::ListLiveRunsResponse* resp) {
  GDR_CALLER(Role::kRead);
  return GrpcReply(h_.ListLiveRuns(*req), resp);
}

grpc::Status GrpcLiveRunsService::ListLiveCells(grpc::ServerContext* ctx, const v1::ListLiveCellsRequest* req,
                                                v1::ListLiveCellsResponse* resp) {
  GDR_CALLER(Role::kRead);
  return GrpcReply(h_.ListLiveCells(*req), resp);
}

grpc::Status GrpcLiveRunsService::AbandonLiveRun(grpc::ServerContext* ctx,
                                                 const v1::AbandonLiveRunRequest* req, v1::LiveRun* resp) {
  GDR_CALLER(Role::kWrite);
  return GrpcReply(h_.AbandonLiveRun(*req), resp);
}

#undef GDR_CALLER

}  // namespace gdrbench::server::api
