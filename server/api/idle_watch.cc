#include "server/api/idle_watch.h"

namespace gdrbench::server::api {

IdleWatch::IdleWatch(grpc::ServerContext* ctx, std::chrono::milliseconds idle,
                     std::function<void()> before_cancel)
    : idle_(idle),
      before_cancel_(std::move(before_cancel)),
      last_(std::chrono::steady_clock::now()),
      thread_([this, ctx] { Run(ctx); }) {}

IdleWatch::~IdleWatch() {
  {
    std::lock_guard l(mu_);
    done_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void IdleWatch::Touch() {
  std::lock_guard l(mu_);
  last_ = std::chrono::steady_clock::now();
}

bool IdleWatch::fired() {
  std::lock_guard l(mu_);
  return fired_;
}

void IdleWatch::Run(grpc::ServerContext* ctx) {
  std::unique_lock l(mu_);
  while (!done_) {
    const auto due = last_ + idle_;
    if (std::chrono::steady_clock::now() >= due) {
      fired_ = true;
      if (before_cancel_) before_cancel_();
      ctx->TryCancel();
      return;
    }
    cv_.wait_until(l, due);
  }
}

}  // namespace gdrbench::server::api
