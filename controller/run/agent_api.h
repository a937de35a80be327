// AgentApi: the agent RPCs the controller uses, as a plain interface so the
// run layer is tested against fakes (unit tests, the 1024-agent bench) and
// runs against real agents through GrpcAgentApi (grpc_agent_api.h). This
// header carries no transport: messages only, no gRPC.
//
// Error codes (the gRPC implementation; fakes return what they are told):
//   UNAVAILABLE        the agent did not answer within the connect timeout
//   DEADLINE_EXCEEDED  the RPC ran past its deadline
//   INVALID_ARGUMENT, NOT_FOUND, FAILED_PRECONDITION, UNIMPLEMENTED, INTERNAL:
//                      as returned by the agent, message prefixed with the RPC
//                      name and the agent's address.
// Thread safety: every method may be called concurrently.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "gdrbench/v1/agent.pb.h"

namespace gdrbench::controller::run {

class AgentApi {
 public:
  virtual ~AgentApi() = default;
  virtual absl::StatusOr<v1::NodeInfo> GetNodeInfo() = 0;
  virtual absl::StatusOr<v1::PreflightReport> RunPreflight(const v1::RunPreflightRequest& request) = 0;
  // Overwrites all of `response` (what was in it is gone), which the caller
  // may reuse from call to call (a sweep opens millions of targets: a new
  // answer each time was a tenth of the controller bench); on an error its
  // contents are unspecified.
  virtual absl::Status OpenTarget(const v1::OpenTargetRequest& request, v1::OpenTargetResponse* response) = 0;
  // `timeout` bounds the whole stream. `on_message` returns false to stop
  // it: the call is cancelled at once (the agent's sweep sees the
  // cancellation and stops) and CANCELLED is returned. `on_message` may take
  // the message's parts (Swap): the implementation does not read a message
  // again once handed over.
  virtual absl::Status RunWriteSweep(
      const v1::RunWriteSweepRequest& request, std::chrono::milliseconds timeout,
      const std::function<bool(v1::RunWriteSweepResponse&)>& on_message) = 0;
  // Out of band (the target's OpenTarget answered cm = OOB): hands the
  // initiator's half (RunWriteSweep's first message) to the target's agent.
  // UNIMPLEMENTED for an API without that mode (the fakes that never use it).
  virtual absl::Status ConnectTarget(const v1::ConnectTargetRequest& request) {
    return absl::UnimplementedError(absl::StrCat("ConnectTarget (out-of-band mode) for target ",
                                                 request.target_id(), " is not supported here"));
  }
  virtual absl::StatusOr<v1::VerifyTargetResponse> VerifyTarget(
      const v1::VerifyTargetRequest& request) = 0;
  // The answer carries the target port's counters (from the initiator's
  // first connection, or the open when none came, to close).
  virtual absl::StatusOr<v1::CloseTargetResponse> CloseTarget(const std::string& target_id) = 0;
};

}  // namespace gdrbench::controller::run
