// Ends a gRPC call that has gone quiet (issue 31, item 2): an UploadRun
// stream that sends its header and then nothing would otherwise hold its
// upload open for ever. IdleWatch cancels the call (ServerContext::
// TryCancel) when Touch() was not called for `idle`; the call's next Read
// then fails and fired() says why. `before_cancel` runs on the watch's
// thread just before the cancel, so what it logs is written before the
// client can see the call end.
// Thread safety: Touch and fired from the call's thread; the watch runs
// its own thread, joined by the destructor.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "grpcpp/server_context.h"

namespace gdrbench::server::api {

class IdleWatch {
 public:
  IdleWatch(grpc::ServerContext* ctx, std::chrono::milliseconds idle, std::function<void()> before_cancel);
  ~IdleWatch();
  void Touch();
  bool fired();

 private:
  void Run(grpc::ServerContext* ctx);

  const std::chrono::milliseconds idle_;
  const std::function<void()> before_cancel_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::chrono::steady_clock::time_point last_;
  bool done_ = false, fired_ = false;
  std::thread thread_;  // last: starts once the rest is set
};

}  // namespace gdrbench::server::api
