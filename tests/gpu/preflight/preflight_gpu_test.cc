// Preflight against a real NVIDIA driver (the gpu tier: the lent H200 machine,
// which has no RDMA NIC). Skips when this machine has no NVIDIA driver.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "agent/preflight/preflight.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gdrbench::agent::preflight {
namespace {

using testing::HasSubstr;

// The driver version as the kernel states it, parsed independently of the
// code under test: the token after "Kernel Module" (and "for <arch>").
std::string KernelModuleVersion() {
  std::ifstream in("/proc/driver/nvidia/version");
  if (!in) return "";
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  auto pos = text.find("Kernel Module");
  if (pos == std::string::npos) return "";
  std::istringstream words(text.substr(pos + 13));
  std::string w;
  while (words >> w) {
    if (w == "for") {
      words >> w;  // the architecture
      continue;
    }
    return w;
  }
  return "";
}

bool HasRdmaDevice() {
  auto names = FsRoot("/").ListDir("/sys/class/infiniband");
  return names.ok() && !names->empty();
}

class PreflightGpu : public testing::Test {
 protected:
  void SetUp() override {
    driver_ = KernelModuleVersion();
    if (driver_.empty()) GTEST_SKIP() << "no NVIDIA driver (/proc/driver/nvidia/version absent)";
    auto start = std::chrono::steady_clock::now();
    RunOptions options;
    options.load_all_gpu_links = true;  // prove the reading under load, even at full speed
    auto report = RunPreflightAt("/", options);
    ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    ASSERT_TRUE(report.ok()) << report.status();
    for (const auto& c : report->checks) checks_[c.id] = c;
  }
  const CheckResult& Check(const std::string& id) { return checks_.at(id); }
  std::string driver_;
  double ms_ = 0;
  std::map<std::string, CheckResult> checks_;
};

TEST_F(PreflightGpu, DriverVersionMatchesProc) {
  const auto& r = Check("nvidia_driver");
  EXPECT_EQ(r.status, Status::kPass) << r.summary;
  EXPECT_THAT(r.summary, HasSubstr(driver_));
}

TEST_F(PreflightGpu, CudaDriverVersionIsRead) {
  const auto& r = Check("cuda_driver");
  ASSERT_EQ(r.status, Status::kPass) << r.summary;
  std::smatch m;
  EXPECT_TRUE(std::regex_search(r.summary, m, std::regex(R"(CUDA driver API [0-9]+\.[0-9]+)")))
      << r.summary;
  // The user-space libcuda matches the kernel module (same maintenance window).
  const auto& a = Check("stack_version_alignment");
  EXPECT_NE(a.status, Status::kFail) << a.summary;
}

TEST_F(PreflightGpu, DmabufAttributeIsRead) {
  const auto& r = Check("dmabuf_supported");
  bool read = false;
  for (const auto& e : r.evidence) {
    if (e.source.rfind("cuDeviceGetAttribute(DMA_BUF_SUPPORTED", 0) == 0) {
      EXPECT_TRUE(e.observed == "0" || e.observed == "1") << e.source << ": " << e.observed;
      read = true;
    }
  }
  EXPECT_TRUE(read) << r.summary;
  std::printf("dmabuf_supported: %s\n", r.summary.c_str());
}

TEST_F(PreflightGpu, ComputeModeIsRead) {
  EXPECT_NE(Check("gpu_compute_mode").status, Status::kSkip) << Check("gpu_compute_mode").summary;
}

TEST_F(PreflightGpu, NoRdmaDeviceFailsWithRemedy) {
  if (HasRdmaDevice()) GTEST_SKIP() << "this GPU machine has an RDMA device";
  const auto& r = Check("rdma_devices");
  EXPECT_EQ(r.status, Status::kFail) << r.summary;
  EXPECT_THAT(r.remediation, HasSubstr("modprobe mlx5_ib"));
  EXPECT_EQ(Check("gpu_registration_probe").status, Status::kSkip);
}

// The live PCIe check puts every GPU under a device-to-host copy load and
// reads current_link_speed during it: the link must read its maximum then.
TEST_F(PreflightGpu, PcieLinkUnderLoadReadsItsMaximum) {
  const auto& r = Check("pcie_link_degraded");
  EXPECT_EQ(r.status, Status::kPass) << r.summary;
  bool loaded = false;
  for (const auto& e : r.evidence) {
    if (e.observed.rfind("GPU", 0) != 0) continue;
    std::printf("pcie_link_degraded: %s: %s\n", e.source.c_str(), e.observed.c_str());
    EXPECT_THAT(e.observed, HasSubstr("under load")) << e.observed;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(e.observed, m, std::regex(R"(max x\d+ @ ([0-9.]+) GT/s\); under load ([0-9.]+) GT/s = max)")))
        << e.observed;
    EXPECT_EQ(m[1], m[2]);
    loaded = true;
  }
  EXPECT_TRUE(loaded) << r.summary;
}

TEST_F(PreflightGpu, DmabufWithoutANicSaysTheNicHalfIsUnknown) {
  if (HasRdmaDevice()) GTEST_SKIP() << "this GPU machine has an RDMA device";
  const auto& r = Check("dmabuf_supported");
  EXPECT_THAT(r.summary, HasSubstr("NIC half unknown: no RDMA device")) << r.summary;
  EXPECT_THAT(r.summary, testing::Not(HasSubstr("end to end")));
}

TEST_F(PreflightGpu, WholePreflightUnderTwoSeconds) {
  EXPECT_LT(ms_, 2000.0);  // the counters' 1 s is not spent: no RDMA device here
  std::printf("whole live preflight: %.1f ms\n", ms_);
  for (const auto& [id, c] : checks_) {
    std::printf("  %-24s %-4s %6.1f ms  %s\n", id.c_str(), StatusName(c.status), c.duration_ns / 1e6,
                c.summary.c_str());
  }
}

}  // namespace
}  // namespace gdrbench::agent::preflight
