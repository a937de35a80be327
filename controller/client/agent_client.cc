#include "controller/client/agent_client.h"

#include <atomic>

#include "absl/strings/str_cat.h"
#include "common/rpc/status.h"
#include "common/rpc/tls_probe.h"
#include "common/status.h"

namespace gdrbench::controller {

absl::StatusOr<std::unique_ptr<AgentClient>> AgentClient::Create(AgentClientConfig config) {
  return Create(std::move(config), nullptr);
}

absl::StatusOr<std::unique_ptr<AgentClient>> AgentClient::Create(AgentClientConfig config,
                                                                 std::shared_ptr<AgentChannels> channels) {
  // The address is checked now, not at the first call, and before the
  // credentials are read: a bad inventory line fails before anything runs,
  // naming the address rather than a certificate file.
  GDR_RETURN_IF_ERROR(rpc::CheckAddress(config.address, config.tls));
  if (channels == nullptr) {
    GDR_ASSIGN_OR_RETURN(channels, MakeAgentChannels(config.tls, 1));
  }
  return std::unique_ptr<AgentClient>(new AgentClient(std::move(config), std::move(channels)));
}

void AgentClient::Prepare(grpc::ClientContext& ctx, std::chrono::milliseconds timeout) const {
  ctx.set_deadline(std::chrono::system_clock::now() + timeout);
}

absl::StatusOr<AgentChannels::Lease> AgentClient::Connected() {
  GDR_ASSIGN_OR_RETURN(AgentChannels::Lease lease, channels_->Acquire(config_.address));
  auto deadline = std::chrono::system_clock::now() + config_.connect_timeout;
  if (lease->channel->WaitForConnected(deadline)) return lease;
  // A refused TLS handshake shows up here as well, without its reason: one
  // handshake of our own names it (foreign CA, expired, not yet valid, ...).
  absl::Status why = rpc::ProbeTls(config_.address, config_.tls, std::chrono::milliseconds(2000));
  if (!why.ok()) {
    return absl::UnavailableError(absl::StrCat("agent ", config_.address, " unreachable: ", why.message()));
  }
  // The probe's own connection (and handshake) succeeded: gRPC's did not in
  // time, so the agent, or this host, is slow, not misconfigured.
  return absl::UnavailableError(absl::StrCat(
      "agent ", config_.address, " unreachable: gRPC made no connection within ",
      config_.connect_timeout.count(),
      " ms, though this controller's own connection to it succeeded right after: timed out, the agent or "
      "this host is overloaded (lower --parallel, or check the agent's load)"));
}

// Every unary RPC: connected, under rpc_timeout, its error named "<Method> on <address>".
#define GDR_CALL(Method, req, resp)                                \
  GDR_ASSIGN_OR_RETURN(AgentChannels::Lease channel, Connected()); \
  grpc::ClientContext ctx;                                         \
  Prepare(ctx, config_.rpc_timeout);                               \
  GDR_RETURN_IF_ERROR(                                             \
      rpc::FromGrpc(channel->stub->Method(&ctx, req, resp), absl::StrCat(#Method, " on ", config_.address)))

// ... answered in a new message.
#define GDR_UNARY(Method, Req, Resp, req) \
  Resp resp;                              \
  GDR_CALL(Method, req, &resp);           \
  return resp

absl::StatusOr<v1::NodeInfo> AgentClient::GetNodeInfo() {
  v1::GetNodeInfoRequest req;
  GDR_UNARY(GetNodeInfo, v1::GetNodeInfoRequest, v1::NodeInfo, req);
}

absl::StatusOr<v1::PreflightReport> AgentClient::RunPreflight(
    const v1::RunPreflightRequest& request) {
  GDR_UNARY(RunPreflight, v1::RunPreflightRequest, v1::PreflightReport, request);
}

absl::Status AgentClient::OpenTarget(const v1::OpenTargetRequest& request, v1::OpenTargetResponse* response) {
  response->Clear();
  GDR_CALL(OpenTarget, request, response);
  return absl::OkStatus();
}

absl::StatusOr<v1::VerifyTargetResponse> AgentClient::VerifyTarget(
    const v1::VerifyTargetRequest& request) {
  GDR_UNARY(VerifyTarget, v1::VerifyTargetRequest, v1::VerifyTargetResponse, request);
}

absl::Status AgentClient::ConnectTarget(const v1::ConnectTargetRequest& request) {
  auto resp = [&]() -> absl::StatusOr<v1::ConnectTargetResponse> {
    GDR_UNARY(ConnectTarget, v1::ConnectTargetRequest, v1::ConnectTargetResponse, request);
  }();
  return resp.status();
}

absl::StatusOr<v1::CloseTargetResponse> AgentClient::CloseTarget(const std::string& target_id) {
  v1::CloseTargetRequest req;
  req.set_target_id(target_id);
  GDR_UNARY(CloseTarget, v1::CloseTargetRequest, v1::CloseTargetResponse, req);
}

#undef GDR_UNARY
#undef GDR_CALL

absl::Status AgentClient::RunWriteSweep(const v1::RunWriteSweepRequest& request,
                                        std::chrono::milliseconds timeout,
                                        const std::function<bool(v1::RunWriteSweepResponse&)>& on_message,
                                        const CancelAttach& attach) {
  GDR_ASSIGN_OR_RETURN(AgentChannels::Lease channel, Connected());
  grpc::ClientContext ctx;
  Prepare(ctx, timeout);
  std::atomic<bool> cancelled{false};
  auto reader = channel->stub->RunWriteSweep(&ctx, request);
  if (attach) {
    attach([&ctx, &cancelled] {
      cancelled.store(true);
      ctx.TryCancel();
    });
  }
  v1::RunWriteSweepResponse msg;
  uint64_t read = 0;
  bool stopped = false;
  while (reader->Read(&msg)) {
    ++read;
    if (on_message(msg)) continue;
    // Not waited out to the deadline: the agent sees the cancellation and
    // stops its sweep; what it still sends is discarded by Finish.
    ctx.TryCancel();
    while (reader->Read(&msg)) {
    }
    stopped = true;
    break;
  }
  // Detached before `ctx` goes: nothing cancels it after this.
  if (attach) attach(nullptr);
  grpc::Status finished = reader->Finish();
  if (stopped || (cancelled.load() && !finished.ok())) {
    return absl::CancelledError(absl::StrCat("RunWriteSweep on ", config_.address,
                                             ": stopped by the controller after message ", read));
  }
  return rpc::FromGrpc(finished, absl::StrCat("RunWriteSweep on ", config_.address));
}

}  // namespace gdrbench::controller
