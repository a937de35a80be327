#include "common/background_jobs.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

namespace gdrbench {
namespace {

TEST(BackgroundJobs, TheOwnerWaitsForEveryJobItStarted) {
  // The reason it exists: a job that outlived its owner used what the owner
  // had freed (the port-fault teardown of a sweep, after the process began
  // to exit).
  std::atomic<int> finished{0};
  {
    BackgroundJobs jobs;
    for (int i = 0; i < 4; ++i) {
      jobs.Start([&finished] {
        std::this_thread::sleep_for(std::chrono::milliseconds(30));
        finished.fetch_add(1);
      });
    }
    EXPECT_LT(finished.load(), 4);  // they run in the background
  }
  EXPECT_EQ(finished.load(), 4);
}

TEST(BackgroundJobs, FinishedJobsAreJoinedWhenTheNextStartsAndMoveOnlyWorkIsTaken) {
  BackgroundJobs jobs;
  auto owned = std::make_unique<int>(7);
  std::atomic<int> seen{0};
  jobs.Start([p = std::move(owned), &seen] { seen.store(*p); });
  // Each Start joins the jobs that finished: once the first is done, only
  // the job just started is left (without the joining the count would grow).
  size_t pending = 0;
  for (int i = 0; i < 400; ++i) {
    jobs.Start([] {});
    pending = jobs.pending();
    if (pending == 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(pending, 1u);
  EXPECT_EQ(seen.load(), 7);
}

}  // namespace
}  // namespace gdrbench
