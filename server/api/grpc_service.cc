#include "server/api/grpc_service.h"

#include "absl/strings/str_cat.h"
#include "common/rpc/status.h"
#include "server/api/grpc_call.h"
#include "server/api/idle_watch.h"
#include "spdlog/spdlog.h"

namespace gdrbench::server::api {

absl::StatusOr<Principal> GrpcControllerService::Caller(grpc::ServerContext* ctx, Role needed) const {
  return GrpcCaller(auth_, ctx, needed);
}

grpc::Status GrpcControllerService::GetRun(grpc::ServerContext* ctx, const v1::GetRunRequest* req, v1::Run* resp) {
  GDR_CALLER(Role::kRead);
  return GrpcReply(h_.GetRun(*req), resp);
}

grpc::Status GrpcControllerService::ExportRun(grpc::ServerContext* ctx, const v1::ExportRunRequest* req,
                                              grpc::ServerWriter<v1::RunChunk>* writer) {
  GDR_CALLER(Role::kRead);
  return rpc::ToGrpc(h_.ExportRun(*req, [&](const v1::RunChunk& c) {
    if (!writer->Write(c)) return absl::CancelledError("the client went away");
    return absl::OkStatus();
  }));
}

grpc::Status GrpcControllerService::ListRuns(grpc::ServerContext* ctx, const v1::ListRunsRequest* req,
                                             v1::ListRunsResponse* resp) {
  GDR_CALLER(Role::kRead);
  return GrpcReply(h_.ListRuns(*req), resp);
}

grpc::Status GrpcControllerService::ListCells(grpc::ServerContext* ctx, const v1::ListCellsRequest* req,
                                              v1::ListCellsResponse* resp) {
  GDR_CALLER(Role::kRead);
  return GrpcReply(h_.ListCells(*req), resp);
}

grpc::Status GrpcControllerService::CompareRuns(grpc::ServerContext* ctx, const v1::CompareRunsRequest* req,
                                                v1::CompareRunsResponse* resp) {
  GDR_CALLER(Role::kRead);
  return GrpcReply(h_.CompareRuns(*req), resp);
}

grpc::Status GrpcControllerService::GetLinkTrend(grpc::ServerContext* ctx, const v1::LinkTrendRequest* req,
                                                 v1::TrendResponse* resp) {
  GDR_CALLER(Role::kRead);
  return GrpcReply(h_.GetLinkTrend(*req), resp);
}

grpc::Status GrpcControllerService::GetNodeTrend(grpc::ServerContext* ctx, const v1::NodeTrendRequest* req,
                                                 v1::TrendResponse* resp) {
  GDR_CALLER(Role::kRead);
  return GrpcReply(h_.GetNodeTrend(*req), resp);
}

grpc::Status GrpcControllerService::SetBaseline(grpc::ServerContext* ctx, const v1::SetBaselineRequest* req,
                                                v1::BaselineInfo* resp) {
  GDR_CALLER(Role::kWrite);
  return GrpcReply(h_.SetBaseline(*req, *who), resp);
}

grpc::Status GrpcControllerService::GetBaseline(grpc::ServerContext* ctx, const v1::GetBaselineRequest* req,
                                                v1::BaselineInfo* resp) {
  GDR_CALLER(Role::kRead);
  return GrpcReply(h_.GetBaseline(*req), resp);
}

grpc::Status GrpcControllerService::GetLinkReferences(grpc::ServerContext* ctx,
                                                      const v1::GetLinkReferencesRequest* req,
                                                      v1::LinkReferences* resp) {
  GDR_CALLER(Role::kRead);
  return GrpcReply(h_.GetLinkReferences(*req), resp);
}

grpc::Status GrpcControllerService::ListClusters(grpc::ServerContext* ctx, const v1::ListClustersRequest* req,
                                                 v1::ListClustersResponse* resp) {
  GDR_CALLER(Role::kRead);
  return GrpcReply(h_.ListClusters(*req), resp);
}

grpc::Status GrpcControllerService::GetCapacityReport(grpc::ServerContext* ctx,
                                                      const v1::GetCapacityReportRequest* req,
                                                      v1::CapacityReport* resp) {
  GDR_CALLER(Role::kRead);
  return GrpcReply(h_.GetCapacityReport(*req), resp);
}

grpc::Status GrpcControllerService::SubmitSweep(grpc::ServerContext* ctx, const v1::SubmitSweepRequest* req,
                                                v1::SweepJob* resp) {
  GDR_CALLER(Role::kWrite);
  return GrpcReply(h_.SubmitSweep(*req, *who), resp);
}

grpc::Status GrpcControllerService::GetSweep(grpc::ServerContext* ctx, const v1::GetSweepRequest* req,
                                             v1::SweepJob* resp) {
  GDR_CALLER(Role::kRead);
  return GrpcReply(h_.GetSweep(*req), resp);
}

grpc::Status GrpcControllerService::ListSweeps(grpc::ServerContext* ctx, const v1::ListSweepsRequest* req,
                                               v1::ListSweepsResponse* resp) {
  GDR_CALLER(Role::kRead);
  return GrpcReply(h_.ListSweeps(*req), resp);
}

grpc::Status GrpcControllerService::WatchSweep(grpc::ServerContext* ctx, const v1::WatchSweepRequest* req,
                                               grpc::ServerWriter<v1::SweepJob>* writer) {
  GDR_CALLER(Role::kRead);
  return rpc::ToGrpc(h_.WatchSweep(
      *req, [&](const v1::SweepJob& j) { return !ctx->IsCancelled() && writer->Write(j); },
      [ctx] { return !ctx->IsCancelled(); }));
}

grpc::Status GrpcControllerService::CancelSweep(grpc::ServerContext* ctx, const v1::CancelSweepRequest* req,
                                                v1::SweepJob* resp) {
  GDR_CALLER(Role::kWrite);
  return GrpcReply(h_.CancelSweep(*req), resp);
}

#undef GDR_CALLER

}  // namespace gdrbench::server::api
