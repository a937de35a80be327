// gdrbench.v1.Controller over gRPC: converts to and from Handler (the plain
// API) and checks the caller's bearer token from the `authorization`
// metadata (mTLS, when configured, is checked by the transport first).
#pragma once

#include <atomic>
#include <chrono>

#include "gdrbench/v1/controller.grpc.pb.h"
#include "grpcpp/support/byte_buffer.h"
#include "server/api/auth.h"
#include "server/api/handler.h"

namespace gdrbench::server::api {

class GrpcControllerService final : public v1::Controller::Service {
 public:
  // An UploadRun stream that sends nothing for `upload_idle` is ended,
  // nothing stored: the call is cancelled (the client sees CANCELLED; gRPC's
  // sync API cannot end a blocked read otherwise) and the log says why.
  // UploadRun reads its chunks as bytes (grpc_upload.cc): a pair chunk
  // reaches the ingest as the client serialized it (Ingester::
  // AddSerializedPairs: parsed there to be checked, stored as received); a
  // header or cell chunk is parsed here. The wire format is v1.RunChunk's: clients see no change.
  GrpcControllerService(Handler& handler, const Authorizer& auth,
                        std::chrono::milliseconds upload_idle = std::chrono::seconds(30));

  // INVALID_ARGUMENT for a chunk that is not a serialized v1.RunChunk, else
  // as Handler's upload.
  grpc::Status UploadRunBytes(grpc::ServerContext* ctx, grpc::ServerReader<grpc::ByteBuffer>* reader,
                              v1::UploadRunResponse* resp);
  grpc::Status GetRun(grpc::ServerContext* ctx, const v1::GetRunRequest* req, v1::Run* resp) override;
  grpc::Status ExportRun(grpc::ServerContext* ctx, const v1::ExportRunRequest* req,
                         grpc::ServerWriter<v1::RunChunk>* writer) override;
  grpc::Status ListRuns(grpc::ServerContext* ctx, const v1::ListRunsRequest* req,
                        v1::ListRunsResponse* resp) override;
  grpc::Status ListCells(grpc::ServerContext* ctx, const v1::ListCellsRequest* req,
                         v1::ListCellsResponse* resp) override;
  grpc::Status CompareRuns(grpc::ServerContext* ctx, const v1::CompareRunsRequest* req,
                           v1::CompareRunsResponse* resp) override;
  grpc::Status GetLinkTrend(grpc::ServerContext* ctx, const v1::LinkTrendRequest* req,
                            v1::TrendResponse* resp) override;
  grpc::Status GetNodeTrend(grpc::ServerContext* ctx, const v1::NodeTrendRequest* req,
                            v1::TrendResponse* resp) override;
  grpc::Status SetBaseline(grpc::ServerContext* ctx, const v1::SetBaselineRequest* req,
                           v1::BaselineInfo* resp) override;
  grpc::Status GetLinkReferences(grpc::ServerContext* ctx, const v1::GetLinkReferencesRequest* req,
                                 v1::LinkReferences* resp) override;
  grpc::Status GetBaseline(grpc::ServerContext* ctx, const v1::GetBaselineRequest* req,
                           v1::BaselineInfo* resp) override;
  grpc::Status ListClusters(grpc::ServerContext* ctx, const v1::ListClustersRequest* req,
                            v1::ListClustersResponse* resp) override;
  grpc::Status GetCapacityReport(grpc::ServerContext* ctx, const v1::GetCapacityReportRequest* req,
                                 v1::CapacityReport* resp) override;
  grpc::Status SubmitSweep(grpc::ServerContext* ctx, const v1::SubmitSweepRequest* req,
                           v1::SweepJob* resp) override;
  grpc::Status GetSweep(grpc::ServerContext* ctx, const v1::GetSweepRequest* req,
                        v1::SweepJob* resp) override;
  grpc::Status ListSweeps(grpc::ServerContext* ctx, const v1::ListSweepsRequest* req,
                          v1::ListSweepsResponse* resp) override;
  grpc::Status WatchSweep(grpc::ServerContext* ctx, const v1::WatchSweepRequest* req,
                          grpc::ServerWriter<v1::SweepJob>* writer) override;
  grpc::Status CancelSweep(grpc::ServerContext* ctx, const v1::CancelSweepRequest* req,
                           v1::SweepJob* resp) override;

  // UploadRun calls between their first read and their answer (the drain
  // on SIGTERM waits for them).
  int uploads_in_flight() const { return uploads_in_flight_.load(); }

 private:
  absl::StatusOr<Principal> Caller(grpc::ServerContext* ctx, Role needed) const;
  Handler& h_;
  const Authorizer& auth_;
  const std::chrono::milliseconds upload_idle_;
  std::atomic<int> uploads_in_flight_{0};
};

}  // namespace gdrbench::server::api
