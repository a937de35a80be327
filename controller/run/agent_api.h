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
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "gdrbench/v1/agent.pb.h"

namespace gdrbench::controller::run {

// Stops a RunWriteSweep from another thread. A stream started ahead of its
// test and held (RunWriteSweepRequest.wait_for_start) receives nothing while
// it waits, so its on_message cannot stop it.
// Thread safety: every method may be called concurrently.
class StreamStop {
 public:
  // Stops the stream now, or as soon as its call attaches.
  void Stop() {
    // Under the lock: the call cannot detach (and free what the hook
    // reaches) meanwhile. A hook only asks for the cancellation.
    std::lock_guard<std::mutex> lock(mu_);
    stopped_ = true;
    if (hook_) hook_();
  }
  bool stopped() const {
    std::lock_guard<std::mutex> lock(mu_);
    return stopped_;
  }
  // For implementations: `hook` stops the call's stream, valid until
  // Attach(nullptr), which the call makes before it returns (Stop then no
  // longer reaches it: run under the lock). Run at once when stopped.
  void Attach(std::function<void()> hook) {
    std::lock_guard<std::mutex> lock(mu_);
    hook_ = std::move(hook);
    if (stopped_ && hook_) hook_();
  }

 private:
  mutable std::mutex mu_;
  bool stopped_ = false;
  std::function<void()> hook_;
};

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
  // As RunWriteSweep; `stop` ends it from another thread (CANCELLED). The
  // default cannot be stopped that way (an API whose sweeps never hold).
  virtual absl::Status RunWriteSweepWithStop(
      const v1::RunWriteSweepRequest& request, std::chrono::milliseconds timeout,
      const std::function<bool(v1::RunWriteSweepResponse&)>& on_message, StreamStop& stop) {
    (void)stop;
    return RunWriteSweep(request, timeout, on_message);
  }
  // Out of band (the target's OpenTarget answered cm = OOB): hands the
  // initiator's half (RunWriteSweep's first message) to the target's agent;
  // with start, lets a target opened with hold_start (and answered
  // start_held) tell its initiator to send, in either mode.
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
