// Target: one target a TargetRegistry holds open (target_registry.h), with
// the worker thread that waits for the initiator's QPs and runs the target's
// part of the test. Internal to the registry.
// Thread safety: the fields marked "guarded by mu" under mu; the rest set
// before the worker starts.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "agent/service/target_registry.h"

namespace gdrbench::agent::service {

using Clock = std::chrono::steady_clock;

// A target's first counter sample, replaced from the accepting thread.
class CounterStart {
 public:
  void Set(counters::Sample s) {
    std::lock_guard lock(mu_);
    sample_ = std::move(s);
  }
  std::optional<counters::Sample> Get() const {
    std::lock_guard lock(mu_);
    return sample_;
  }

 private:
  mutable std::mutex mu_;
  std::optional<counters::Sample> sample_;
};

// One open target. The worker thread waits for the initiator's QPs and runs
// the target's part of the test; the destructor stops and joins it before
// the session (QPs, MR, buffer) is freed.
class Target {
 public:
  ~Target() {
    stop.store(true);
    if (worker.joinable()) worker.join();
  }

  std::string id;
  uint64_t bytes = 0;
  bench::SweepOptions options;
  bench::BufferLayout layout;
  int64_t lease_ns = 0;
  std::unique_ptr<bench::TargetSession> session;
  uint32_t counter_port = 1;
  // The port's counters when the test began (set at open when counters are
  // read): sampled again just before the initiator can first send, so a
  // target opened ahead of its test, while another test moved data on this
  // port, counts only its own test's traffic and errors.
  std::shared_ptr<CounterStart> counters_before = std::make_shared<CounterStart>();
  std::atomic<bool> stop{false};
  bool hold = false;  // opened with hold_start: kReady waits for Start

  std::mutex mu;
  std::condition_variable cv;
  Clock::time_point expires;                // guarded by mu
  bool accept_returned = false;             // guarded by mu
  bool accepted = false;                    // guarded by mu
  bool worker_done = false;                 // guarded by mu
  bool started = false;                     // guarded by mu; held targets: ConnectTarget's start came
  absl::Status accept_status;               // guarded by mu
  std::vector<bench::SizeOutcome> reverse;  // guarded by mu

  std::thread worker;  // last: joined first

  void Renew(Clock::time_point now) {
    std::lock_guard lock(mu);
    expires = now + std::chrono::nanoseconds(lease_ns);
  }

  void Work(const SteadyClock& clock, bench::SessionFactory& sessions);

  // A held target, connected: kReady once the controller starts the test
  // (the lease bounds the wait: a vanished controller's target is reaped,
  // which stops it).
  absl::Status AwaitStart();

  // The target's part of the test (session.h Run) under a watch of its own
  // CQs and QPs (data_events.h), as the initiator's sweep runs under one: an
  // error event on them ends it (the data loop reads the watch's stop flag),
  // and the event, named, is the outcome of the size it cut short (or of the
  // first size that did not run). The watch is removed before the worker
  // ends, so before the session's objects are destroyed.
  void RunOwnPart(bench::SessionFactory& sessions);
};

}  // namespace gdrbench::agent::service
