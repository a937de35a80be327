#include "server/sweeps/sweep_manager.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "google/protobuf/util/message_differencer.h"
#include "server/store/store.h"
#include "spdlog/spdlog.h"

namespace gdrbench::server::sweeps {
namespace {

constexpr size_t kKeepFinished = 100;

google::protobuf::Timestamp Now() { return store::FromMicros(store::NowMicros()); }

}  // namespace

SweepManager::SweepManager(SweepExecutor* executor, StoreFn store_run, uint32_t max_queued)
    : executor_(executor), store_run_(std::move(store_run)), max_queued_(max_queued) {}

void SweepManager::Stop() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stopping_ = true;
    for (auto& [id, j] : jobs_) j->cancel = true;
  }
  changed_.notify_all();
}

SweepManager::~SweepManager() {
  Stop();
  std::map<std::string, std::thread> workers;
  {
    std::lock_guard<std::mutex> l(mu_);
    workers.swap(workers_);
  }
  for (auto& [c, t] : workers) t.join();
}

std::set<std::string> SweepManager::clusters() const {
  return executor_ ? executor_->clusters() : std::set<std::string>{};
}

bool SweepManager::Done(const Job& j) const {
  auto s = j.job.state();
  return s == v1::SWEEP_STATE_SUCCEEDED || s == v1::SWEEP_STATE_FAILED || s == v1::SWEEP_STATE_CANCELLED;
}

void SweepManager::Positions(const std::string& cluster) {
  uint32_t pos = 0;
  for (auto& j : queues_[cluster]) {
    if (j->job.queue_position() != pos) {
      j->job.set_queue_position(pos);
      ++j->version;
    }
    ++pos;
  }
}

absl::StatusOr<v1::SweepJob> SweepManager::Submit(const std::string& cluster, const v1::SweepSpec& spec,
                                                  const std::string& by) {
  if (executor_ == nullptr || !executor_->clusters().count(cluster)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "this server has no inventory for cluster '", cluster,
        "': start it with --cluster ", cluster.empty() ? "NAME" : cluster, "=INVENTORY.yaml to sweep it"));
  }
  if (auto st = executor_->Check(cluster, spec); !st.ok()) return st;
  std::lock_guard<std::mutex> l(mu_);
  if (stopping_) return absl::UnavailableError("the server is shutting down");
  std::deque<std::shared_ptr<Job>>& queue = queues_[cluster];
  for (const auto& q : queue) {
    if (!q->cancel && google::protobuf::util::MessageDifferencer::Equals(q->job.spec(), spec)) {
      spdlog::info("sweep request on {} by {}: the same as queued sweep {} (position {}), merged", cluster, by,
                   q->job.job_id(), q->job.queue_position());
      return q->job;
    }
  }
  if (queue.size() >= max_queued_) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "cluster '", cluster, "' has ", queue.size(), " sweeps queued, the limit (--max-queued-sweeps): wait for ",
        "one to start or cancel one"));
  }
  auto j = std::make_shared<Job>();
  j->job.set_job_id(absl::StrFormat("sweep-%d-%04d", store::NowMicros() / 1000000, next_id_++ % 10000));
  j->job.set_cluster(cluster);
  j->job.set_state(v1::SWEEP_STATE_QUEUED);
  *j->job.mutable_spec() = spec;
  *j->job.mutable_submitted_at() = Now();
  j->job.set_submitted_by(by);
  jobs_[j->job.job_id()] = j;
  queue.push_back(j);
  Positions(cluster);
  if (!workers_.count(cluster)) workers_[cluster] = std::thread([this, cluster] { Worker(cluster); });
  changed_.notify_all();
  spdlog::info("sweep {} on {} queued by {} (position {})", j->job.job_id(), cluster, by,
               j->job.queue_position());
  return j->job;
}

void SweepManager::Finished(Job* j, v1::SweepState state, const std::string& error) {
  j->job.set_state(state);
  j->job.set_error(error);
  *j->job.mutable_finished_at() = Now();
  ++j->version;
  finished_order_.push_back(j->job.job_id());
  while (finished_order_.size() > kKeepFinished) {
    jobs_.erase(finished_order_.front());
    finished_order_.pop_front();
  }
  changed_.notify_all();
}

void SweepManager::Worker(std::string cluster) {
  std::unique_lock<std::mutex> l(mu_);
  for (;;) {
    changed_.wait(l, [&] { return stopping_ || !queues_[cluster].empty(); });
    if (stopping_) return;
    std::shared_ptr<Job> j = queues_[cluster].front();
    queues_[cluster].pop_front();
    Positions(cluster);
    j->job.set_state(v1::SWEEP_STATE_RUNNING);
    *j->job.mutable_started_at() = Now();
    ++j->version;
    changed_.notify_all();
    const v1::SweepSpec spec = j->job.spec();
    l.unlock();
    spdlog::info("sweep {} on {}: running", j->job.job_id(), cluster);
    auto progress = [&](const v1::SweepProgress& p) {
      std::lock_guard<std::mutex> g(mu_);
      *j->job.mutable_progress() = p;
      ++j->version;
      changed_.notify_all();
    };
    absl::StatusOr<v1::Run> run = executor_->Run(cluster, spec, progress, j->cancel);
    absl::StatusOr<v1::UploadRunResponse> stored;
    if (run.ok()) {
      progress([&] {
        v1::SweepProgress p = j->job.progress();
        p.set_phase("store");
        return p;
      }());
      stored = store_run_(*run);
    }
    l.lock();
    if (!run.ok()) {
      const bool cancelled = absl::IsCancelled(run.status()) || j->cancel;
      Finished(j.get(), cancelled ? v1::SWEEP_STATE_CANCELLED : v1::SWEEP_STATE_FAILED,
               std::string(run.status().message()));
    } else if (!stored.ok()) {
      Finished(j.get(), v1::SWEEP_STATE_FAILED,
               absl::StrCat("the sweep ran but could not be stored: ", stored.status().message()));
    } else {
      j->job.set_run_id(run->run_id());
      j->job.set_passed(run->passed());
      j->job.set_summary(run->summary());
      Finished(j.get(), v1::SWEEP_STATE_SUCCEEDED, "");
    }
    spdlog::info("sweep {} on {}: {} {}", j->job.job_id(), cluster,
                 v1::SweepState_Name(j->job.state()), j->job.error());
  }
}

absl::StatusOr<v1::SweepJob> SweepManager::Get(const std::string& id) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return absl::NotFoundError(absl::StrCat("no sweep job ", id, " (kept: the last ", kKeepFinished, " finished)"));
  return it->second->job;
}

std::vector<v1::SweepJob> SweepManager::List(const std::string& cluster) const {
  std::lock_guard<std::mutex> l(mu_);
  std::vector<v1::SweepJob> out;
  for (const auto& [id, j] : jobs_) {
    if (cluster.empty() || j->job.cluster() == cluster) out.push_back(j->job);
  }
  std::sort(out.begin(), out.end(), [](const v1::SweepJob& a, const v1::SweepJob& b) {
    return store::ToMicros(a.submitted_at()) > store::ToMicros(b.submitted_at());
  });
  return out;
}

absl::StatusOr<v1::SweepJob> SweepManager::Cancel(const std::string& id) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return absl::NotFoundError(absl::StrCat("no sweep job ", id));
  Job* j = it->second.get();
  if (Done(*j)) {
    return absl::FailedPreconditionError(
        absl::StrCat("sweep ", id, " already finished (", v1::SweepState_Name(j->job.state()), ")"));
  }
  j->cancel = true;
  if (j->job.state() == v1::SWEEP_STATE_QUEUED) {
    auto& q = queues_[j->job.cluster()];
    q.erase(std::remove(q.begin(), q.end(), it->second), q.end());
    Positions(j->job.cluster());
    Finished(j, v1::SWEEP_STATE_CANCELLED, "cancelled before it started");
  }
  spdlog::info("sweep {}: cancel requested", id);
  return j->job;
}

absl::Status SweepManager::Watch(const std::string& id, const std::function<bool(const v1::SweepJob&)>& fn,
                                 const std::function<bool()>& still_wanted, std::chrono::milliseconds interval,
                                 std::chrono::milliseconds heartbeat) {
  std::unique_lock<std::mutex> l(mu_);
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return absl::NotFoundError(absl::StrCat("no sweep job ", id));
  std::shared_ptr<Job> j = it->second;
  uint64_t seen = ~uint64_t{0};  // the job as it is now goes out first
  auto last_sent = std::chrono::steady_clock::now() - interval;
  for (;;) {
    while (!changed_.wait_for(l, heartbeat, [&] { return stopping_ || j->version != seen; })) {
      if (!still_wanted) continue;
      l.unlock();
      const bool wanted = still_wanted();
      l.lock();
      if (!wanted) return absl::OkStatus();
    }
    const bool done = Done(*j);
    if (!done && std::chrono::steady_clock::now() - last_sent < interval) {
      // Rate-limit progress: wait out the interval, then send the latest.
      changed_.wait_until(l, last_sent + interval, [&] { return stopping_ || Done(*j); });
    }
    seen = j->version;
    v1::SweepJob copy = j->job;
    const bool finished = Done(*j);
    l.unlock();
    last_sent = std::chrono::steady_clock::now();
    const bool more = fn(copy);
    l.lock();
    if (!more || finished) return absl::OkStatus();
    if (stopping_) return absl::UnavailableError("the server is shutting down");
  }
}

std::map<std::string, std::pair<uint32_t, uint32_t>> SweepManager::Load() const {
  std::lock_guard<std::mutex> l(mu_);
  std::map<std::string, std::pair<uint32_t, uint32_t>> out;
  if (executor_) {
    for (const auto& c : executor_->clusters()) out[c] = {0, 0};
  }
  for (const auto& [id, j] : jobs_) {
    if (j->job.state() == v1::SWEEP_STATE_QUEUED) ++out[j->job.cluster()].first;
    if (j->job.state() == v1::SWEEP_STATE_RUNNING) ++out[j->job.cluster()].second;
  }
  return out;
}

}  // namespace gdrbench::server::sweeps
