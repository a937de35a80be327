// Preflight under deadlines (issue 12, item 4): a check blocked forever in
// the kernel (modelled by an RdmaQuery that blocks until released) is
// reported hung at its deadline, the checks after it still run, and the
// run as a whole ends at the run deadline.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "absl/strings/match.h"
#include "agent/preflight/runner.h"
#include "fakes.h"

namespace gdrbench::agent::preflight {
namespace {

using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool open = false;
  void Wait() {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return open; });
  }
  void Open() {
    std::lock_guard lock(mu);
    open = true;
    cv.notify_all();
  }
};

// ListDevices blocks as a read of a hung /sys file does.
class HungRdma : public testing_fakes::NoRdma {
 public:
  explicit HungRdma(std::shared_ptr<Gate> g) : gate_(std::move(g)) {}
  absl::StatusOr<std::vector<verbs::DeviceInfo>> ListDevices(std::string* why) override {
    gate_->Wait();
    return NoRdma::ListDevices(why);
  }

 private:
  std::shared_ptr<Gate> gate_;
};

// A Context over the healthy tree that owns its fakes.
struct Owned {
  explicit Owned(std::shared_ptr<Gate> g)
      : fs(std::string(GDRBENCH_SOURCE_DIR) + "/tests/testdata/preflight/healthy"), rdma(std::move(g)),
        ctx(fs, rdma, cuda, probe, {}) {}
  FsRoot fs;
  HungRdma rdma;
  testing_fakes::FakeCuda cuda;
  testing_fakes::FakeProbe probe;
  Context ctx;
};

const CheckResult* Find(const Report& r, const std::string& id) {
  for (const auto& c : r.checks) {
    if (c.id == id) return &c;
  }
  return nullptr;
}

TEST(PreflightDeadlines, AHungCheckIsReportedAndTheOthersStillRun) {
  auto gate = std::make_shared<Gate>();
  int contexts = 0;
  ContextFactory make = [&] {
    ++contexts;
    auto o = std::make_shared<Owned>(gate);
    return std::shared_ptr<Context>(o, &o->ctx);
  };
  auto t0 = Clock::now();
  auto report = RunPreflightBounded(make, {"nvidia_driver", "rdma_devices", "iommu_mode"},
                                    {.check = absl::Milliseconds(200), .run = absl::Seconds(5)});
  auto took = Clock::now() - t0;
  gate->Open();
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->checks.size(), 3u);
  const CheckResult* hung = Find(*report, "rdma_devices");
  ASSERT_NE(hung, nullptr);
  EXPECT_EQ(hung->status, Status::kFail);
  EXPECT_THAT(hung->summary, HasSubstr("did not finish within"));
  EXPECT_THAT(hung->summary, HasSubstr("hung driver or device file"));
  // The check after the hung one ran on a fresh Context.
  const CheckResult* after = Find(*report, "iommu_mode");
  ASSERT_NE(after, nullptr);
  EXPECT_THAT(after->summary, ::testing::Not(HasSubstr("did not finish")));
  EXPECT_EQ(contexts, 2);
  EXPECT_EQ(report->overall, Status::kFail);
  EXPECT_LT(took, std::chrono::seconds(2));
}

TEST(PreflightDeadlines, TheRunEndsAtItsDeadlineWithTheRestSkipped) {
  auto gate = std::make_shared<Gate>();
  ContextFactory make = [&] {
    auto o = std::make_shared<Owned>(gate);
    return std::shared_ptr<Context>(o, &o->ctx);
  };
  auto t0 = Clock::now();
  // Every RDMA check blocks; the run gives up after 500 ms in all.
  auto report = RunPreflightBounded(make, {}, {.check = absl::Seconds(10), .run = absl::Milliseconds(500)});
  auto took = Clock::now() - t0;
  gate->Open();
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_LT(took, std::chrono::seconds(2));
  EXPECT_EQ(report->checks.size(), CheckIds().size());
  int skipped = 0, hung = 0;
  for (const auto& c : report->checks) {
    if (absl::StrContains(c.summary, "deadline passed")) ++skipped;
    if (absl::StrContains(c.summary, "(the run's deadline)")) ++hung;
  }
  EXPECT_EQ(hung, 1);
  EXPECT_GE(skipped, 1);
}

}  // namespace
}  // namespace gdrbench::agent::preflight
