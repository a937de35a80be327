// A client of one agent: every RPC with a deadline, errors as absl::Status
// whose message names the RPC and the agent's address. Its channel is taken
// from an AgentChannels cache for each call and handed back after it (the
// clients of a fleet share one cache, so the channels open at once follow
// the calls in flight, not the fleet's size); a channel the cache closed is
// reopened by the next call.
// Thread safety: all methods may be called concurrently.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/rpc/tls.h"
#include "common/sweep_limits.h"
#include "controller/client/agent_channels.h"
#include "gdrbench/v1/agent.grpc.pb.h"

namespace gdrbench::controller {

struct AgentClientConfig {
  std::string address;                       // HOST:PORT
  rpc::ClientTlsConfig tls;
  std::chrono::milliseconds rpc_timeout{sweep_limits::kDefaultRpcTimeoutMs};  // unary calls
  std::chrono::milliseconds connect_timeout{sweep_limits::kDefaultConnectTimeoutMs};
};

class AgentClient {
 public:
  // INVALID_ARGUMENT for a malformed address or TLS config. Does not connect.
  // A cache of its own, of one channel, made from config.tls.
  static absl::StatusOr<std::unique_ptr<AgentClient>> Create(AgentClientConfig config);
  // Channels from `channels` (made with config.tls: MakeAgentChannels);
  // config.tls names the files in errors and serves the handshake that
  // explains a refused connection. Null `channels`: as the overload above.
  static absl::StatusOr<std::unique_ptr<AgentClient>> Create(AgentClientConfig config,
                                                             std::shared_ptr<AgentChannels> channels);

  const std::string& address() const { return config_.address; }

  // UNAVAILABLE "<address>: agent unreachable ..." when nothing answers
  // within connect_timeout.
  absl::StatusOr<v1::NodeInfo> GetNodeInfo();
  absl::StatusOr<v1::PreflightReport> RunPreflight(const v1::RunPreflightRequest& request);
  // Fills `response` (cleared first; reusable from call to call).
  absl::Status OpenTarget(const v1::OpenTargetRequest& request, v1::OpenTargetResponse* response);
  // Calls `on_message` for each streamed message; `timeout` bounds the whole
  // sweep. `on_message` returning false cancels the call at once: CANCELLED
  // "RunWriteSweep on <address>: stopped by the controller after message N".
  // `on_message` may take the message's parts (agent_api.h). `attach`, when
  // given, gets a function that cancels the call from another thread once
  // the call has begun, and an empty one before the call returns (a stream
  // held before its data receives nothing that on_message could refuse);
  // cancelled that way: CANCELLED "... stopped by the controller".
  using CancelAttach = std::function<void(std::function<void()> cancel)>;
  absl::Status RunWriteSweep(const v1::RunWriteSweepRequest& request, std::chrono::milliseconds timeout,
                             const std::function<bool(v1::RunWriteSweepResponse&)>& on_message,
                             const CancelAttach& attach = nullptr);
  // Out of band: the initiator's half (RunWriteSweep's first message) for
  // the target; and/or the start of a target opened with hold_start.
  absl::Status ConnectTarget(const v1::ConnectTargetRequest& request);
  absl::StatusOr<v1::VerifyTargetResponse> VerifyTarget(const v1::VerifyTargetRequest& request);
  // The target's port counters from open to close.
  absl::StatusOr<v1::CloseTargetResponse> CloseTarget(const std::string& target_id);

 private:
  AgentClient(AgentClientConfig config, std::shared_ptr<AgentChannels> channels)
      : config_(std::move(config)), channels_(std::move(channels)) {}
  void Prepare(grpc::ClientContext& ctx, std::chrono::milliseconds timeout) const;
  // The agent's channel, connected (opened first when the cache holds none).
  absl::StatusOr<AgentChannels::Lease> Connected();

  AgentClientConfig config_;
  std::shared_ptr<AgentChannels> channels_;
};

}  // namespace gdrbench::controller
