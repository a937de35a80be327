// The targets this agent holds for controllers: OpenTarget makes one (a
// bench::TargetSession from the SessionFactory: buffer, registration, QPs,
// and a worker thread that waits for the initiator's QPs and then runs the
// target's part of the test: the reverse sweep of a bidirectional test, or
// the latency responder, ended early, with the event named, by an error
// event on the target's own CQs or QPs: verbs/data_events.h), ConnectTarget
// hands it the initiator's half in the out-of-band mode, VerifyTarget checks
// the pattern the initiator's last pass of each size left, CloseTarget frees
// it. Every target carries a lease renewed by each call on it; a reaper
// thread frees targets whose lease ran out (their controller vanished), so a
// killed controller or initiator never pins memory or QPs for longer than
// the lease.
//
// Errors: INVALID_ARGUMENT for bad requests (one sentence), NOT_FOUND for
// an unknown or already freed target, RESOURCE_EXHAUSTED past the agent's
// target count or memory limit, FAILED_PRECONDITION when verifying before an
// initiator connected, and whatever the session returns on open.
// Thread safety: every method may be called concurrently.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/bench/session.h"
#include "agent/counters/port_counters.h"
#include "common/background_jobs.h"
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

// Resolves an owned device for a test (CheckDevice in sweep_convert.h).
using DeviceResolver = std::function<absl::StatusOr<verbs::DeviceInfo>(const std::string&)>;
using SteadyClock = std::function<std::chrono::steady_clock::time_point()>;
// Samples a port's counters (counters::ReadPort over the agent's FsRoot).
using CounterReader = std::function<counters::Sample(const std::string& device, uint32_t port)>;

class Target;

class TargetRegistry {
 public:
  // `clock` is steady_clock::now unless a test passes its own; with
  // `run_reaper` false no thread reaps (a test calls ReapExpired). With
  // `read_counters`, each target samples its port's counters when its test
  // starts (when opened, sampled again just before the initiator can first
  // send: the first rdma_cm accept, or ConnectTarget) and when closed, and
  // Close answers their delta: a target opened ahead, while another test
  // moves data on the port, does not count that test's traffic.
  TargetRegistry(DeviceResolver resolve, std::shared_ptr<bench::SessionFactory> sessions,
                 TargetLimits limits, SteadyClock clock = nullptr, bool run_reaper = true,
                 CounterReader read_counters = nullptr);
  ~TargetRegistry();  // stops the reaper and frees every target

  absl::StatusOr<v1::OpenTargetResponse> Open(const v1::OpenTargetRequest& request);
  // Out of band: the initiator's half brings the QPs up (kReady follows
  // at once, or, for a target opened with hold_start, on start). `start`:
  // the held target's initiator may send now; FAILED_PRECONDITION for a
  // target not held.
  absl::Status Connect(const v1::ConnectTargetRequest& request);
  // Waits (up to `wait`) for the target's own part of the test (a
  // bidirectional test's reverse sweep).
  absl::StatusOr<v1::VerifyTargetResponse> Verify(const v1::VerifyTargetRequest& request,
                                                  std::chrono::milliseconds wait);
  absl::StatusOr<v1::CloseTargetResponse> Close(const std::string& target_id);

  // Frees every target whose lease ended before `now`; returns their ids.
  std::vector<std::string> ReapExpired(std::chrono::steady_clock::time_point now);

  size_t size() const;
  uint64_t bytes_in_use() const;

 private:
  // A target's bytes, counted in total_bytes_ while it is being opened:
  // given back when this goes, unless Keep() handed them to the target (in
  // targets_, whose removal gives them back).
  class ByteReservation {
   public:
    ByteReservation(TargetRegistry* registry, uint64_t bytes, std::string id)
        : registry_(registry), bytes_(bytes), id_(std::move(id)) {}
    ByteReservation(ByteReservation&& other) noexcept
        : registry_(std::exchange(other.registry_, nullptr)),
          bytes_(other.bytes_),
          id_(std::move(other.id_)) {}
    ByteReservation& operator=(ByteReservation&&) = delete;
    ~ByteReservation();

    const std::string& id() const { return id_; }
    void Keep() { registry_ = nullptr; }

   private:
    TargetRegistry* registry_;  // null once kept or moved from
    uint64_t bytes_;
    std::string id_;
  };

  // Counts `bytes` for a new target of `device` and names it;
  // RESOURCE_EXHAUSTED past the limit of targets or of their bytes.
  absl::StatusOr<ByteReservation> Reserve(uint64_t bytes, const std::string& device);
  std::shared_ptr<Target> Find(const std::string& id);
  void ReapLoop();

  const DeviceResolver resolve_;
  const std::shared_ptr<bench::SessionFactory> sessions_;
  const TargetLimits limits_;
  const SteadyClock clock_;
  const CounterReader read_counters_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  uint64_t next_id_ = 1;
  uint64_t total_bytes_ = 0;
  std::map<std::string, std::shared_ptr<Target>> targets_;
  BackgroundJobs closing_;  // closed targets' teardown
  std::thread reaper_;  // last: started after everything it reads
};

}  // namespace gdrbench::agent::service
