// RunPreflight calls off gRPC's callback threads (issue 12, item 4).
//
// A check can block forever in a read of a hung driver file, and gRPC has
// only a few callback threads: two such calls used to stop the agent
// answering anything. Each run here gets its own thread; at most
// `max_runs` run at once (RESOURCE_EXHAUSTED beyond, naming the limit); the
// call is answered DEADLINE_EXCEEDED when the run has not returned within
// `run_deadline_ms`, and CANCELLED when the client goes away or the server
// shuts down. A run still blocked then keeps its slot until it returns.
// The runner's own per-check deadlines (agent/preflight/preflight.h) answer
// first in the usual case; this is the bound for whatever they miss.
//
// Thread safety: Start may be called concurrently.
#pragma once

#include <atomic>
#include <memory>

#include "agent/service/agent_handler.h"
#include "common/limits.h"
#include "grpcpp/support/server_callback.h"

namespace gdrbench::agent::service {

struct PreflightCallLimits {
  int max_runs = limits::kMaxPreflightRuns;
  // The runner's run deadline plus time to report it.
  int64_t run_deadline_ms = limits::kPreflightRunDeadlineMs + 5'000;
};

class PreflightCalls {
 public:
  PreflightCalls(AgentHandler& handler, PreflightCallLimits limits)
      : handler_(handler), limits_(limits) {}

  // The reactor of one RunPreflight call; gRPC deletes it through OnDone.
  grpc::ServerUnaryReactor* Start(const v1::RunPreflightRequest& request,
                                  v1::PreflightReport* response);

 private:
  AgentHandler& handler_;
  const PreflightCallLimits limits_;
  // Shared with the run threads, which may outlive a call.
  std::shared_ptr<std::atomic<int>> running_ = std::make_shared<std::atomic<int>>(0);
};

}  // namespace gdrbench::agent::service
