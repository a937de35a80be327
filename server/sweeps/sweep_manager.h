// Sweeps on request: a queue per cluster, one sweep at a time on each (a
// fabric runs one sweep), cancel, and progress for watchers. A job runs
// through a SweepExecutor (the sweep library bound to the cluster's
// inventory, library_executor.h) and its run is stored through `store_run`.
// Jobs are kept in memory (the last 100 finished per server); their runs
// are in the store.
// Thread safety: every method may be called from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "gdrbench/v1/controller.pb.h"

namespace gdrbench::server::sweeps {

class SweepExecutor {
 public:
  using ProgressFn = std::function<void(const v1::SweepProgress&)>;
  virtual ~SweepExecutor() = default;
  // The clusters it can sweep.
  virtual std::set<std::string> clusters() const = 0;
  // INVALID_ARGUMENT for a spec it cannot run (checked at submit).
  virtual absl::Status Check(const std::string& cluster, const v1::SweepSpec& spec) const = 0;
  // Runs one sweep; CANCELLED soon after `cancelled` turns true.
  virtual absl::StatusOr<v1::Run> Run(const std::string& cluster, const v1::SweepSpec& spec,
                                      const ProgressFn& progress, const std::atomic<bool>& cancelled) = 0;
  // The server's regression references (Controller.GetLinkReferences), so a
  // sweep retests the cells that regressed before its run is stored. Set
  // once, before the first Run; an executor that cannot use them ignores it.
  using LinkReferencesFn =
      std::function<absl::StatusOr<v1::LinkReferences>(const v1::GetLinkReferencesRequest&)>;
  virtual void SetLinkReferences(LinkReferencesFn fn) { (void)fn; }
};

// Sweeps queued per cluster at most (--max-queued-sweeps): each runs on the
// real fabric, so a flood of requests is refused, not kept.
inline constexpr uint32_t kDefaultMaxQueued = 4;

class SweepManager {
 public:
  using StoreFn = std::function<absl::StatusOr<v1::UploadRunResponse>(const v1::Run&)>;
  // `executor` may be null: then no cluster can be swept (FAILED_PRECONDITION).
  SweepManager(SweepExecutor* executor, StoreFn store_run, uint32_t max_queued = kDefaultMaxQueued);
  ~SweepManager();  // Stop, then joins the workers
  // Cancels what runs, drops the queues, ends every Watch (UNAVAILABLE).
  void Stop();

  // FAILED_PRECONDITION when the server has no inventory for the cluster.
  // A request equal to one still queued (cluster and spec) is that job: the
  // same job is returned, nothing is added. RESOURCE_EXHAUSTED when the
  // cluster already has max_queued sweeps waiting.
  absl::StatusOr<v1::SweepJob> Submit(const std::string& cluster, const v1::SweepSpec& spec,
                                      const std::string& submitted_by);
  absl::StatusOr<v1::SweepJob> Get(const std::string& job_id) const;
  std::vector<v1::SweepJob> List(const std::string& cluster) const;  // newest first
  // A queued job ends CANCELLED at once; a running one when the sweep stops.
  // FAILED_PRECONDITION for a job that already finished.
  absl::StatusOr<v1::SweepJob> Cancel(const std::string& job_id);
  // Calls `fn` with the job now and after every change until it finished,
  // `fn` returns false, or the manager shuts down. NOT_FOUND for an unknown job.
  // While nothing changes (a job queued behind a long sweep), `still_wanted`
  // is asked every `heartbeat`: false ends the watch, so a watcher whose
  // client left holds no thread until the job's next change.
  absl::Status Watch(const std::string& job_id, const std::function<bool(const v1::SweepJob&)>& fn,
                     const std::function<bool()>& still_wanted = nullptr,
                     std::chrono::milliseconds progress_interval = std::chrono::milliseconds(500),
                     std::chrono::milliseconds heartbeat = std::chrono::seconds(1));
  // Jobs queued or running per cluster (for /metrics).
  std::map<std::string, std::pair<uint32_t, uint32_t>> Load() const;
  std::set<std::string> clusters() const;

 private:
  struct Job {
    v1::SweepJob job;
    std::atomic<bool> cancel{false};
    uint64_t version = 0;
  };
  void Worker(std::string cluster);
  void Finished(Job* j, v1::SweepState state, const std::string& error);
  bool Done(const Job& j) const;
  void Positions(const std::string& cluster);

  SweepExecutor* executor_;
  StoreFn store_run_;
  const uint32_t max_queued_;
  mutable std::mutex mu_;
  std::condition_variable changed_;
  bool stopping_ = false;
  uint64_t next_id_ = 1;
  std::map<std::string, std::shared_ptr<Job>> jobs_;         // by id
  std::map<std::string, std::deque<std::shared_ptr<Job>>> queues_;
  std::map<std::string, std::thread> workers_;
  std::deque<std::string> finished_order_;
};

}  // namespace gdrbench::server::sweeps
