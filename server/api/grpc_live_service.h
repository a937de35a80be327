// gdrbench.v1.LiveRuns over gRPC (proto/gdrbench/v1/live.proto): converts to
// and from Handler's live-run calls and checks the caller's bearer token as
// GrpcControllerService does (write for Open, Append and Abandon).
#pragma once

#include "gdrbench/v1/live.grpc.pb.h"
#include "server/api/auth.h"
#include "server/api/handler.h"

namespace gdrbench::server::api {

class GrpcLiveRunsService final : public v1::LiveRuns::Service {
 public:
  GrpcLiveRunsService(Handler& handler, const Authorizer& auth) : h_(handler), auth_(auth) {}

  grpc::Status OpenLiveRun(grpc::ServerContext* ctx, const v1::OpenLiveRunRequest* req,
                           v1::LiveRun* resp) override;
  grpc::Status AppendLiveRun(grpc::ServerContext* ctx, const v1::LiveChunk* req, v1::LiveAck* resp) override;
  grpc::Status GetLiveRun(grpc::ServerContext* ctx, const v1::GetLiveRunRequest* req,
                          v1::LiveRun* resp) override;
  grpc::Status ListLiveRuns(grpc::ServerContext* ctx, const v1::ListLiveRunsRequest* req,
                            v1::ListLiveRunsResponse* resp) override;
  grpc::Status ListLiveCells(grpc::ServerContext* ctx, const v1::ListLiveCellsRequest* req,
                             v1::ListLiveCellsResponse* resp) override;
  grpc::Status AbandonLiveRun(grpc::ServerContext* ctx, const v1::AbandonLiveRunRequest* req,
                              v1::LiveRun* resp) override;

 private:
  absl::StatusOr<Principal> Caller(grpc::ServerContext* ctx, Role needed) const;
  Handler& h_;
  const Authorizer& auth_;
};

}  // namespace gdrbench::server::api
