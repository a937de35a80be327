// A client of gdrbench-server's gRPC API (gdrbench.v1.Controller), for the
// CLI: upload a run in pieces, list, show and compare runs, baselines, the
// capacity report. TLS
// as for agents (rpc::ClientTlsConfig); the bearer token is read from a
// file so it never shows in `ps`.
// Errors: the server's status with "<call> on <address>: " in front.
// Thread safety: one call at a time per client.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/rpc/tls.h"
#include "gdrbench/v1/controller.grpc.pb.h"
#include "gdrbench/v1/live.grpc.pb.h"

namespace gdrbench::controller {

struct ServerClientConfig {
  std::string address;          // HOST:PORT of the server's gRPC API
  rpc::ClientTlsConfig tls;
  std::string token_file;       // one line: the bearer token
  int timeout_ms = 30000;       // per unary call; uploads get 10 x
};

class ServerClient {
 public:
  // INVALID_ARGUMENT for a bad address or TLS config; NOT_FOUND for a
  // missing token file.
  static absl::StatusOr<std::unique_ptr<ServerClient>> Create(const ServerClientConfig& config);

  absl::StatusOr<v1::UploadRunResponse> Upload(const v1::Run& run);
  // The same upload from a source of chunks (header, cells, pairs: what
  // report::ForEachRunChunk makes of a run), so the run need not be in
  // memory whole: `source` calls its argument once per chunk, in order, and
  // returns the first error it returns (or its own).
  using ChunkFn = std::function<absl::Status(const v1::RunChunk&)>;
  absl::StatusOr<v1::UploadRunResponse> Upload(const std::function<absl::Status(const ChunkFn&)>& source);
  absl::StatusOr<v1::ListRunsResponse> ListRuns(const v1::ListRunsRequest& req);
  absl::StatusOr<v1::Run> GetRun(const v1::GetRunRequest& req);
  absl::StatusOr<v1::CompareRunsResponse> CompareRuns(const v1::CompareRunsRequest& req);
  absl::StatusOr<v1::BaselineInfo> SetBaseline(const v1::SetBaselineRequest& req);
  absl::StatusOr<v1::BaselineInfo> GetBaseline(const v1::GetBaselineRequest& req);
  absl::StatusOr<v1::CapacityReport> GetCapacityReport(const v1::GetCapacityReportRequest& req);
  absl::StatusOr<v1::ListClustersResponse> ListClusters(const v1::ListClustersRequest& req);
  absl::StatusOr<v1::LinkReferences> GetLinkReferences(const v1::GetLinkReferencesRequest& req);
  // Live runs (gdrbench.v1.LiveRuns on the same channel; live_upload.h).
  absl::StatusOr<v1::LiveRun> OpenLiveRun(const v1::OpenLiveRunRequest& req);
  absl::StatusOr<v1::LiveAck> AppendLiveRun(const v1::LiveChunk& req);
  absl::StatusOr<v1::LiveRun> GetLiveRun(const v1::GetLiveRunRequest& req);
  absl::StatusOr<v1::ListLiveRunsResponse> ListLiveRuns(const v1::ListLiveRunsRequest& req);
  absl::StatusOr<v1::LiveRun> AbandonLiveRun(const v1::AbandonLiveRunRequest& req);
  const std::string& address() const { return config_.address; }

 private:
  ServerClient(ServerClientConfig c, const std::shared_ptr<grpc::Channel>& channel, std::string token)
      : config_(std::move(c)),
        stub_(v1::Controller::NewStub(channel)),
        live_stub_(v1::LiveRuns::NewStub(channel)),
        token_(std::move(token)) {}
  void Prepare(grpc::ClientContext* ctx, int timeout_ms) const;
  // A failed call as one line naming the server and, for a TLS mismatch, a
  // missing or refused token, the --server-* flag that fixes it.
  absl::Status Failed(const grpc::Status& gs, const char* method) const;
  ServerClientConfig config_;
  std::unique_ptr<v1::Controller::Stub> stub_;
  std::unique_ptr<v1::LiveRuns::Stub> live_stub_;
  std::string token_;
};

}  // namespace gdrbench::controller
