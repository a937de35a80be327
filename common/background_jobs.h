// Work that must not hold up an answer but must end before its owner does:
// each job on a thread of its own, joined (never detached) by the time the
// owner is destroyed. A detached thread outlives whatever it uses: a port
// fault's teardown that logs through spdlog and frees its QPs would run
// while the process exits.
//
// Finished jobs' threads are joined whenever a new job starts, so a
// long-running agent keeps only the running ones. Declare the member after
// everything its jobs use (members are destroyed in reverse order).
// Thread safety: Start may be called concurrently; the destructor waits for
// every job.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace gdrbench {

class BackgroundJobs {
 public:
  BackgroundJobs() = default;
  BackgroundJobs(const BackgroundJobs&) = delete;
  BackgroundJobs& operator=(const BackgroundJobs&) = delete;
  ~BackgroundJobs() {
    std::vector<Job> jobs;
    {
      std::lock_guard<std::mutex> lock(mu_);
      jobs.swap(jobs_);
    }
    for (Job& j : jobs) j.thread.join();
  }

  // Runs `job` (a callable, may be move-only) on a new thread.
  template <typename F>
  void Start(F&& job) {
    auto done = std::make_shared<std::atomic<bool>>(false);
    std::thread t([job = std::forward<F>(job), done]() mutable {
      job();
      done->store(true);
    });
    std::vector<Job> finished;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (size_t i = 0; i < jobs_.size();) {
        if (jobs_[i].done->load()) {
          finished.push_back(std::move(jobs_[i]));
          jobs_[i] = std::move(jobs_.back());
          jobs_.pop_back();
        } else {
          ++i;
        }
      }
      jobs_.push_back(Job{std::move(t), std::move(done)});
    }
    for (Job& j : finished) j.thread.join();
  }

  // Jobs started and not yet joined (running, or finished since the last Start).
  size_t pending() {
    std::lock_guard<std::mutex> lock(mu_);
    return jobs_.size();
  }

 private:
  struct Job {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  std::mutex mu_;
  std::vector<Job> jobs_;
};

}  // namespace gdrbench
