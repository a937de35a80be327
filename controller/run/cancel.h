// CancelToken: a flag one thread raises and a running sweep watches. Cancel
// may be called from any thread, any number of times; it never blocks and
// never waits for the sweep (the sweep's own call returns CANCELLED once
// in-flight tests have finished).
#pragma once

#include <atomic>

namespace gdrbench::controller::run {

class CancelToken {
 public:
  CancelToken() = default;
  // Also cancelled while `*external` is true (a flag the caller already
  // keeps, e.g. a job's); not owned, must outlive the token.
  explicit CancelToken(const std::atomic<bool>* external) : external_(external) {}
  CancelToken(const CancelToken&) = delete;
  CancelToken& operator=(const CancelToken&) = delete;

  void Cancel() { cancelled_.store(true, std::memory_order_release); }
  bool cancelled() const {
    return cancelled_.load(std::memory_order_acquire) ||
           (external_ != nullptr && external_->load(std::memory_order_acquire));
  }

 private:
  std::atomic<bool> cancelled_{false};
  const std::atomic<bool>* external_ = nullptr;
};

}  // namespace gdrbench::controller::run
