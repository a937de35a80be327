#include "agent/service/grpc_service.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "common/rpc/status.h"
#include "spdlog/spdlog.h"

namespace gdrbench::agent::service {
namespace {

// Runs a unary handler call and finishes the default reactor with its result.
template <typename Resp, typename Fn>
grpc::ServerUnaryReactor* Unary(grpc::CallbackServerContext* ctx, Resp* response, Fn&& fn) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  absl::StatusOr<Resp> result = fn();
  if (result.ok()) *response = std::move(*result);
  reactor->Finish(rpc::ToGrpc(result.status()));
  return reactor;
}

// Server-streaming reactor for RunWriteSweep. The sweep runs on its own
// thread (it is long and blocks on the hardware); its messages are queued and
// written one at a time, as gRPC allows one outstanding write per stream.
// gRPC owns the reactor's lifetime: it is deleted in OnDone().
class SweepReactor final : public grpc::ServerWriteReactor<v1::RunWriteSweepResponse> {
 public:
  SweepReactor(AgentHandler& handler, v1::RunWriteSweepRequest request) {
    worker_ = std::thread([this, &handler, request = std::move(request)] {
      absl::Status st = handler.RunWriteSweep(
          request,
          [this](const v1::RunWriteSweepResponse& msg) { return Push(msg); }, cancelled_);
      std::lock_guard lock(mu_);
      final_ = rpc::ToGrpc(st);
      done_producing_ = true;
      MaybeWriteLocked();
    });
  }

  void OnWriteDone(bool ok) override {
    std::lock_guard lock(mu_);
    writing_ = false;
    if (ok) {
      queue_.pop_front();
    } else {
      // The stream is gone (the client cancelled): nothing more is written,
      // but the call must still be finished once the sweep has stopped, or
      // it is never done and Shutdown waits for it for ever.
      cancelled_ = true;
      queue_.clear();
    }
    MaybeWriteLocked();
  }

  void OnCancel() override { cancelled_ = true; }

  void OnDone() override {
    cancelled_ = true;
    if (worker_.joinable()) worker_.join();
    delete this;
  }

 private:
  bool Push(const v1::RunWriteSweepResponse& msg) {
    std::lock_guard lock(mu_);
    if (cancelled_) return false;
    queue_.push_back(msg);
    MaybeWriteLocked();
    return true;
  }

  void MaybeWriteLocked() {
    if (writing_ || finished_) return;
    if (!queue_.empty() && !cancelled_) {
      writing_ = true;
      StartWrite(&queue_.front());
    } else if (done_producing_) {
      finished_ = true;
      Finish(final_);
    }
  }

  std::mutex mu_;
  std::deque<v1::RunWriteSweepResponse> queue_;
  bool writing_ = false;
  bool done_producing_ = false;
  bool finished_ = false;
  grpc::Status final_;
  std::atomic<bool> cancelled_{false};
  std::thread worker_;
};

}  // namespace

grpc::ServerUnaryReactor* GrpcAgentService::GetNodeInfo(grpc::CallbackServerContext* ctx,
                                                        const v1::GetNodeInfoRequest* request,
                                                        v1::NodeInfo* response) {
  return Unary(ctx, response, [&] { return handler_.GetNodeInfo(*request); });
}

grpc::ServerUnaryReactor* GrpcAgentService::RunPreflight(grpc::CallbackServerContext* ctx,
                                                         const v1::RunPreflightRequest* request,
                                                         v1::PreflightReport* response) {
  return preflight_.Start(*request, response);
}

grpc::ServerUnaryReactor* GrpcAgentService::OpenTarget(grpc::CallbackServerContext* ctx,
                                                       const v1::OpenTargetRequest* request,
                                                       v1::OpenTargetResponse* response) {
  return Unary(ctx, response, [&] { return handler_.OpenTarget(*request); });
}

grpc::ServerWriteReactor<v1::RunWriteSweepResponse>* GrpcAgentService::RunWriteSweep(
    grpc::CallbackServerContext* ctx, const v1::RunWriteSweepRequest* request) {
  return new SweepReactor(handler_, *request);  // deleted by itself in OnDone()
}

grpc::ServerUnaryReactor* GrpcAgentService::ConnectTarget(grpc::CallbackServerContext* ctx,
                                                          const v1::ConnectTargetRequest* request,
                                                          v1::ConnectTargetResponse* response) {
  return Unary(ctx, response, [&] { return handler_.ConnectTarget(*request); });
}

grpc::ServerUnaryReactor* GrpcAgentService::VerifyTarget(grpc::CallbackServerContext* ctx,
                                                         const v1::VerifyTargetRequest* request,
                                                         v1::VerifyTargetResponse* response) {
  return Unary(ctx, response, [&] { return handler_.VerifyTarget(*request); });
}

grpc::ServerUnaryReactor* GrpcAgentService::CloseTarget(grpc::CallbackServerContext* ctx,
                                                        const v1::CloseTargetRequest* request,
                                                        v1::CloseTargetResponse* response) {
  return Unary(ctx, response, [&] { return handler_.CloseTarget(*request); });
}

}  // namespace gdrbench::agent::service
