#include "controller/server_client/server_client.h"

#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/rpc/status.h"
#include "common/rpc/tls_probe.h"
#include "common/status.h"
#include "report/run_chunks.h"

namespace gdrbench::controller {

absl::StatusOr<std::unique_ptr<ServerClient>> ServerClient::Create(const ServerClientConfig& config) {
  ServerClientConfig c = config;
  c.tls.peer = rpc::Peer::kServer;
  if (c.address.empty()) return absl::InvalidArgumentError("--server HOST:PORT is required");
  std::string token;
  if (!c.token_file.empty()) {
    std::ifstream in(c.token_file);
    if (!in) return ErrnoToStatus(errno, absl::StrCat("--server-token-file ", c.token_file));
    std::stringstream ss;
    ss << in.rdbuf();
    token = std::string(absl::StripAsciiWhitespace(ss.str()));
    if (token.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("--server-token-file ", c.token_file, " is empty"));
    }
  }
  // GetLinkReferences answers with a rail's whole matrix (about 40 MB at 1,024 nodes).
  GDR_ASSIGN_OR_RETURN(auto channel, rpc::MakeChannel(c.address, c.tls, 256 << 20));
  return std::unique_ptr<ServerClient>(new ServerClient(c, channel, std::move(token)));
}

absl::Status ServerClient::Failed(const grpc::Status& gs, const char* method) const {
  absl::Status st = rpc::FromGrpc(gs, absl::StrCat(method, " on ", config_.address), "gdrbench-server");
  if (absl::IsUnavailable(st)) {
    // A refused TLS handshake reads only "unavailable": one handshake of our
    // own names the cause and the --server-* flag that fixes it.
    absl::Status why = rpc::ProbeTls(config_.address, config_.tls, std::chrono::milliseconds(2000));
    if (!why.ok()) {
      return absl::UnavailableError(
          absl::StrCat(method, " on ", config_.address, ": gdrbench-server unreachable: ", why.message()));
    }
    return st;
  }
  if (absl::IsUnauthenticated(st)) {
    return absl::UnauthenticatedError(absl::StrCat(
        st.message(), token_.empty()
                          ? "; give --server-token-file FILE (or GDRBENCH_TOKEN_FILE) holding a token "
                            "from the server's --tokens file"
                          : absl::StrCat("; the token in --server-token-file ", config_.token_file,
                                         " is not one of the server's --tokens")));
  }
  if (absl::IsPermissionDenied(st) && !token_.empty()) {
    return absl::PermissionDeniedError(absl::StrCat(
        st.message(), "; the token in --server-token-file ", config_.token_file,
        " lacks the role: a 'write' line of the server's --tokens file is needed to store or change runs"));
  }
  return st;
}

void ServerClient::Prepare(grpc::ClientContext* ctx, int timeout_ms) const {
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(timeout_ms));
  if (!token_.empty()) ctx->AddMetadata("authorization", absl::StrCat("Bearer ", token_));
}

absl::StatusOr<v1::UploadRunResponse> ServerClient::Upload(const v1::Run& run) {
  return Upload([&run](const ChunkFn& fn) { return gdrbench::report::ForEachRunChunk(run, {}, fn); });
}

absl::StatusOr<v1::UploadRunResponse> ServerClient::Upload(
    const std::function<absl::Status(const ChunkFn&)>& source) {
  grpc::ClientContext ctx;
  Prepare(&ctx, config_.timeout_ms * 10);
  v1::UploadRunResponse resp;
  auto writer = stub_->UploadRun(&ctx, &resp);
  absl::Status st = source([&](const v1::RunChunk& c) {
    if (!writer->Write(c)) return absl::UnavailableError("the server closed the upload");
    return absl::OkStatus();
  });
  writer->WritesDone();
  grpc::Status gs = writer->Finish();
  if (!gs.ok()) return Failed(gs, "UploadRun");
  if (!st.ok()) return st;
  return resp;
}

#define GDR_UNARY_ON(stub, Method, Req, Resp)                 \
  absl::StatusOr<Resp> ServerClient::Method(const Req& req) { \
    grpc::ClientContext ctx;                                  \
    Prepare(&ctx, config_.timeout_ms);                        \
    Resp resp;                                                \
    grpc::Status gs = stub->Method(&ctx, req, &resp);         \
    if (!gs.ok()) return Failed(gs, #Method);                 \
    return resp;                                              \
  }
#define GDR_UNARY(Method, Req, Resp) GDR_UNARY_ON(stub_, Method, Req, Resp)
GDR_UNARY(ListRuns, v1::ListRunsRequest, v1::ListRunsResponse)
GDR_UNARY(GetRun, v1::GetRunRequest, v1::Run)
GDR_UNARY(CompareRuns, v1::CompareRunsRequest, v1::CompareRunsResponse)
GDR_UNARY(SetBaseline, v1::SetBaselineRequest, v1::BaselineInfo)
GDR_UNARY(GetBaseline, v1::GetBaselineRequest, v1::BaselineInfo)
GDR_UNARY(GetCapacityReport, v1::GetCapacityReportRequest, v1::CapacityReport)
GDR_UNARY(ListClusters, v1::ListClustersRequest, v1::ListClustersResponse)
GDR_UNARY(GetLinkReferences, v1::GetLinkReferencesRequest, v1::LinkReferences)
GDR_UNARY_ON(live_stub_, OpenLiveRun, v1::OpenLiveRunRequest, v1::LiveRun)
GDR_UNARY_ON(live_stub_, AppendLiveRun, v1::LiveChunk, v1::LiveAck)
GDR_UNARY_ON(live_stub_, GetLiveRun, v1::GetLiveRunRequest, v1::LiveRun)
GDR_UNARY_ON(live_stub_, ListLiveRuns, v1::ListLiveRunsRequest, v1::ListLiveRunsResponse)
GDR_UNARY_ON(live_stub_, AbandonLiveRun, v1::AbandonLiveRunRequest, v1::LiveRun)
#undef GDR_UNARY
#undef GDR_UNARY_ON

}  // namespace gdrbench::controller
