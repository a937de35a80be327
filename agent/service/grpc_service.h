// The thin gRPC edge of the agent: callback-API methods that convert between
// gRPC and AgentHandler and nothing else.
#pragma once

#include "agent/service/agent_handler.h"
#include "agent/service/preflight_calls.h"
#include "gdrbench/v1/agent.grpc.pb.h"

namespace gdrbench::agent::service {

class GrpcAgentService final : public v1::Agent::CallbackService {
 public:
  explicit GrpcAgentService(AgentHandler& handler, PreflightCallLimits preflight = {})
      : handler_(handler), preflight_(handler, preflight) {}

  grpc::ServerUnaryReactor* GetNodeInfo(grpc::CallbackServerContext* ctx,
                                        const v1::GetNodeInfoRequest* request,
                                        v1::NodeInfo* response) override;
  grpc::ServerUnaryReactor* RunPreflight(grpc::CallbackServerContext* ctx,
                                         const v1::RunPreflightRequest* request,
                                         v1::PreflightReport* response) override;
  grpc::ServerUnaryReactor* OpenTarget(grpc::CallbackServerContext* ctx,
                                       const v1::OpenTargetRequest* request,
                                       v1::OpenTargetResponse* response) override;
  grpc::ServerWriteReactor<v1::RunWriteSweepResponse>* RunWriteSweep(
      grpc::CallbackServerContext* ctx, const v1::RunWriteSweepRequest* request) override;
  grpc::ServerUnaryReactor* ConnectTarget(grpc::CallbackServerContext* ctx,
                                          const v1::ConnectTargetRequest* request,
                                          v1::ConnectTargetResponse* response) override;
  grpc::ServerUnaryReactor* VerifyTarget(grpc::CallbackServerContext* ctx,
                                         const v1::VerifyTargetRequest* request,
                                         v1::VerifyTargetResponse* response) override;
  grpc::ServerUnaryReactor* CloseTarget(grpc::CallbackServerContext* ctx,
                                        const v1::CloseTargetRequest* request,
                                        v1::CloseTargetResponse* response) override;

 private:
  AgentHandler& handler_;
  PreflightCalls preflight_;  // off the callback threads, bounded
};

}  // namespace gdrbench::agent::service
