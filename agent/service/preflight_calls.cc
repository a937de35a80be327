#include "agent/service/preflight_calls.h"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/rpc/status.h"

namespace gdrbench::agent::service {
namespace {

// What the run thread, the deadline thread and the reactor share: whoever
// finishes first answers the call; the others find `finished` set.
struct Call {
  std::mutex mu;
  std::condition_variable cv;
  bool finished = false;
  grpc::ServerUnaryReactor* reactor = nullptr;
  v1::PreflightReport* response = nullptr;

  // Answers the call once; `report` only on success.
  void Finish(const absl::Status& st, v1::PreflightReport* report = nullptr) {
    {
      std::lock_guard lock(mu);
      if (finished) return;
      finished = true;
      if (report != nullptr) *response = std::move(*report);
    }
    cv.notify_all();
    reactor->Finish(rpc::ToGrpc(st));  // unlocked: gRPC may call back inline
  }
};

class PreflightReactor final : public grpc::ServerUnaryReactor {
 public:
  explicit PreflightReactor(std::shared_ptr<Call> call) : call_(std::move(call)) {}
  void OnCancel() override {
    call_->Finish(absl::CancelledError("preflight cancelled (the client went away or the agent is stopping)"));
  }
  void OnDone() override { delete this; }

 private:
  std::shared_ptr<Call> call_;
};

}  // namespace

grpc::ServerUnaryReactor* PreflightCalls::Start(const v1::RunPreflightRequest& request,
                                                v1::PreflightReport* response) {
  auto call = std::make_shared<Call>();
  auto* reactor = new PreflightReactor(call);  // deletes itself in OnDone
  call->reactor = reactor;
  call->response = response;
  if (running_->fetch_add(1) >= limits_.max_runs) {
    running_->fetch_sub(1);
    call->Finish(absl::ResourceExhaustedError(absl::StrCat(
        limits_.max_runs, " preflight runs are already in progress on this agent (the most at once; "
        "one may be blocked on a hung driver file); try again later")));
    return reactor;
  }
  std::thread([this, call, request, running = running_] {
    absl::StatusOr<v1::PreflightReport> report = handler_.RunPreflight(request);
    running->fetch_sub(1);
    if (report.ok()) {
      call->Finish(absl::OkStatus(), &*report);
    } else {
      call->Finish(report.status());
    }
  }).detach();
  std::thread([call, deadline_ms = limits_.run_deadline_ms] {
    std::unique_lock lock(call->mu);
    if (call->cv.wait_for(lock, std::chrono::milliseconds(deadline_ms), [&] { return call->finished; })) return;
    lock.unlock();
    call->Finish(absl::DeadlineExceededError(absl::StrCat(
        "preflight did not finish within ", deadline_ms / 1000.0,
        " s on the agent (a check is blocked, likely reading a hung driver file)")));
  }).detach();
  return reactor;
}

}  // namespace gdrbench::agent::service
