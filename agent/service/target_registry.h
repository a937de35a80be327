// The targets this agent holds for controllers: OpenTarget makes one (buffer,
// registration, rdma_cm listener, a worker thread that accepts the
// initiator's QPs and, for bidirectional tests, runs the sweep back),
// VerifyTarget checks the pattern the initiator's last pass of each size
// left, CloseTarget frees it. Every target carries a lease renewed by each
// call on it; a reaper thread frees targets whose lease ran out (their
// controller vanished), so a killed controller or initiator never pins
// memory or QPs for longer than the lease.
//
// Errors: INVALID_ARGUMENT for bad requests (one sentence), NOT_FOUND for
// an unknown or already freed target, RESOURCE_EXHAUSTED past the agent's
// target count or memory limit, FAILED_PRECONDITION when verifying before an
// initiator connected, and whatever memory/verbs return on open.
// Thread safety: every method may be called concurrently.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "common/fs_root.h"
#include "gdrbench/v1/sweep.pb.h"

namespace gdrbench::agent::service {

struct TargetLimits {
  int64_t default_lease_ns = 600'000'000'000;  // 10 min
  int64_t max_lease_ns = 24ll * 3600 * 1'000'000'000;
  int64_t min_lease_ns = 1'000'000'000;
  uint64_t max_total_bytes = 8ull << 30;       // all targets of this agent
  size_t max_targets = 64;
  std::chrono::milliseconds reap_period{500};
};

class Target;

class TargetRegistry {
 public:
  TargetRegistry(FsRoot fs, std::vector<std::string> owned_devices, TargetLimits limits);
  ~TargetRegistry();  // stops the reaper and frees every target

  absl::StatusOr<v1::OpenTargetResponse> Open(const v1::OpenTargetRequest& request);
  // Waits (up to `wait`) for a bidirectional target's reverse sweep.
  absl::StatusOr<v1::VerifyTargetResponse> Verify(const v1::VerifyTargetRequest& request,
                                                  std::chrono::milliseconds wait);
  absl::Status Close(const std::string& target_id);

  size_t size() const;

 private:
  std::shared_ptr<Target> Find(const std::string& id);
  void ReapLoop();

  const FsRoot fs_;
  const std::vector<std::string> owned_;
  const TargetLimits limits_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  uint64_t next_id_ = 1;
  uint64_t total_bytes_ = 0;
  std::map<std::string, std::shared_ptr<Target>> targets_;
  std::thread reaper_;  // last: started after everything it reads
};

}  // namespace gdrbench::agent::service
