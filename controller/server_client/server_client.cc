#include "controller/server_client/server_client.h"

#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/rpc/status.h"
#include "common/status.h"
#include "controller/report/run_chunks.h"

namespace gdrbench::controller {

absl::StatusOr<std::unique_ptr<ServerClient>> ServerClient::Create(const ServerClientConfig& c) {
  if (c.address.empty()) return absl::InvalidArgumentError("--server HOST:PORT is required");
  std::string token;
  if (!c.token_file.empty()) {
    std::ifstream in(c.token_file);
    if (!in) return ErrnoToStatus(errno, absl::StrCat("--token-file ", c.token_file));
    std::stringstream ss;
    ss << in.rdbuf();
    token = std::string(absl::StripAsciiWhitespace(ss.str()));
    if (token.empty()) return absl::InvalidArgumentError(absl::StrCat("--token-file ", c.token_file, " is empty"));
  }
  ASSIGN_OR_RETURN(auto channel, rpc::MakeChannel(c.address, c.tls));
  grpc::ChannelArguments args;
  return std::unique_ptr<ServerClient>(new ServerClient(c, v1::Controller::NewStub(channel), std::move(token)));
}

void ServerClient::Prepare(grpc::ClientContext* ctx, int timeout_ms) const {
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(timeout_ms));
  if (!token_.empty()) ctx->AddMetadata("authorization", absl::StrCat("Bearer ", token_));
}

absl::StatusOr<v1::UploadRunResponse> ServerClient::Upload(const v1::Run& run) {
  grpc::ClientContext ctx;
  Prepare(&ctx, config_.timeout_ms * 10);
  v1::UploadRunResponse resp;
  auto writer = stub_->UploadRun(&ctx, &resp);
  absl::Status st = report::ForEachRunChunk(run, {}, [&](const v1::RunChunk& c) {
    if (!writer->Write(c)) return absl::UnavailableError("the server closed the upload");
    return absl::OkStatus();
  });
  writer->WritesDone();
  grpc::Status gs = writer->Finish();
  if (!gs.ok()) return rpc::FromGrpc(gs, absl::StrCat("UploadRun on ", config_.address));
  if (!st.ok()) return st;
  return resp;
}

#define GDR_UNARY(Method, Req, Resp)                                            \
  absl::StatusOr<Resp> ServerClient::Method(const Req& req) {                   \
    grpc::ClientContext ctx;                                                    \
    Prepare(&ctx, config_.timeout_ms);                                          \
    Resp resp;                                                                  \
    grpc::Status gs = stub_->Method(&ctx, req, &resp);                          \
    if (!gs.ok()) return rpc::FromGrpc(gs, #Method " on " + config_.address);   \
    return resp;                                                                \
  }
GDR_UNARY(ListRuns, v1::ListRunsRequest, v1::ListRunsResponse)
GDR_UNARY(GetRun, v1::GetRunRequest, v1::Run)
GDR_UNARY(CompareRuns, v1::CompareRunsRequest, v1::CompareRunsResponse)
GDR_UNARY(SetBaseline, v1::SetBaselineRequest, v1::BaselineInfo)
GDR_UNARY(GetBaseline, v1::GetBaselineRequest, v1::BaselineInfo)
GDR_UNARY(GetCapacityReport, v1::GetCapacityReportRequest, v1::CapacityReport)
GDR_UNARY(ListClusters, v1::ListClustersRequest, v1::ListClustersResponse)
#undef GDR_UNARY

}  // namespace gdrbench::controller
