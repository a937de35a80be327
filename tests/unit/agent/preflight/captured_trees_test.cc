// Captured trees from real machines, and the capture itself.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>

#include "agent/preflight/capture.h"
#include "agent/preflight/preflight.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gdrbench::agent::preflight {
namespace {

using testing::HasSubstr;
using testing::MatchesRegex;
using testing::Not;

const std::string kTrees = std::string(GDRBENCH_SOURCE_DIR) + "/tests/testdata/preflight/";

std::map<std::string, CheckResult> RunOffline(const std::string& root) {
  auto report = RunPreflightAt(root, RunOptions{});
  EXPECT_TRUE(report.ok()) << report.status();
  std::map<std::string, CheckResult> by_id;
  if (report.ok()) {
    for (const auto& c : report->checks) by_id[c.id] = c;
  }
  return by_id;
}

// The lab guest: two Soft-RoCE (rxe) ports on veth with MTU 9000.
TEST(CapturedLabGuest, RxePortsPass) {
  auto r = RunOffline(kTrees + "captured-lab-guest");
  EXPECT_EQ(r.at("rdma_devices").status, Status::kPass) << r.at("rdma_devices").summary;
  EXPECT_THAT(r.at("rdma_devices").summary, HasSubstr("rxe1, rxe2"));
  EXPECT_EQ(r.at("rdma_port_active").status, Status::kPass) << r.at("rdma_port_active").summary;
  EXPECT_EQ(r.at("roce_gid").status, Status::kPass) << r.at("roce_gid").summary;
  EXPECT_EQ(r.at("mtu").status, Status::kPass) << r.at("mtu").summary;
  EXPECT_EQ(r.at("gpu_nic_topology").status, Status::kSkip);
}

// The development machine: no RDMA in the kernel, no GPU.
TEST(CapturedDevHost, NoRdmaFailsNoGpuSkips) {
  auto r = RunOffline(kTrees + "captured-dev-host");
  EXPECT_EQ(r.at("rdma_devices").status, Status::kFail);
  EXPECT_EQ(r.at("nvidia_driver").status, Status::kSkip);
  EXPECT_EQ(r.at("secure_boot").status, Status::kPass);
}

// The lent H200 machine (tests/testdata/gpu-h200): the real driver's version
// file and PCI tree, read offline from its capture tarball. No RDMA device
// there: rdma_devices FAILs with the remedy; the CUDA checks need the live
// driver and SKIP offline.
TEST(CapturedGpuH200, RealDriverReadNoRdmaFailsWithRemedy) {
  // Through the front door: the tarball itself, unpacked and removed there.
  std::string tarball = std::string(GDRBENCH_SOURCE_DIR) + "/tests/testdata/gpu-h200/h200-preflight-capture.tar.gz";
  auto report = RunPreflightAt(tarball, RunOptions{});
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->fs_root, tarball);
  auto r = RunOffline(tarball);
  EXPECT_EQ(r.at("nvidia_driver").status, Status::kPass) << r.at("nvidia_driver").summary;
  EXPECT_THAT(r.at("nvidia_driver").summary, HasSubstr("580.159.04"));
  EXPECT_EQ(r.at("rdma_devices").status, Status::kFail);
  EXPECT_THAT(r.at("rdma_devices").remediation, HasSubstr("mlx5_ib"));
  EXPECT_EQ(r.at("peermem_loaded").status, Status::kFail);
  EXPECT_EQ(r.at("cuda_driver").status, Status::kSkip);
  // No RDMA device: the GPU half of dma-buf is unknown offline (no CUDA),
  // the NIC half says why it is unknown; never "supported end to end".
  EXPECT_THAT(r.at("dmabuf_supported").summary, HasSubstr("NIC half unknown: no RDMA device"));
  // Its kernel log, captured from /dev/kmsg, holds no peermem load failure.
  EXPECT_EQ(r.at("peermem_load_errors").status, Status::kPass) << r.at("peermem_load_errors").summary;
  EXPECT_THAT(r.at("peermem_load_errors").summary, HasSubstr("in 359 kernel log messages"));
  EXPECT_EQ(report->hostname, "vm");
  // Issue 15: evidence names paths as on the captured node, never the
  // temporary directory the tarball was unpacked into; this capture predates
  // the capture's time and agent version, and the report says so.
  for (const auto& c : report->checks) {
    for (const auto& e : c.evidence) {
      EXPECT_THAT(e.source + " " + e.observed, Not(HasSubstr("gdrbench-tree-"))) << c.id;
    }
    EXPECT_THAT(c.summary, Not(HasSubstr("gdrbench-tree-"))) << c.id;
  }
  EXPECT_EQ(r.at("rdma_devices").evidence.at(0).observed.rfind("/sys/class/infiniband is empty", 0), 0u)
      << r.at("rdma_devices").evidence.at(0).observed;
  EXPECT_EQ(report->captured, "captured by gdrbench-agent capture on vm from / (no time or agent version)");
}

TEST(FrontDoor, BadRootsAreOneClearError) {
  EXPECT_EQ(RunPreflightAt("/nonexistent/root", RunOptions{}).status().code(),
            absl::StatusCode::kInvalidArgument);
  auto not_a_capture = RunPreflightAt(std::string(GDRBENCH_SOURCE_DIR) + "/README.md", RunOptions{});
  EXPECT_EQ(not_a_capture.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(not_a_capture.status().message(), HasSubstr("not a capture"));
}

// Capturing a tree and running on the capture gives the same verdicts.
TEST(Capture, StagedTreeGivesTheSameResults) {
  for (const char* tree : {"healthy", "fault-acs", "fault-iommu-dma", "dgx-h100", "captured-lab-guest"}) {
    char templ[] = "/tmp/gdrbench-capture-test-XXXXXX";
    ASSERT_NE(mkdtemp(templ), nullptr);
    std::string dir = templ;
    ASSERT_TRUE(StageTree(FsRoot(kTrees + tree), dir).ok());
    auto want = RunOffline(kTrees + tree);
    auto got = RunOffline(dir);
    ASSERT_EQ(want.size(), got.size());
    for (const auto& [id, r] : want) {
      EXPECT_EQ(got.at(id).status, r.status) << tree << " " << id << ": " << got.at(id).summary
                                             << " vs " << r.summary;
      EXPECT_EQ(got.at(id).summary, r.summary) << tree << " " << id;
    }
    RemoveTree(dir);
  }
}

TEST(Capture, TarballRoundTrip) {
  std::string out = std::string("/tmp/gdrbench-capture-test-") + std::to_string(getpid()) + ".tar.gz";
  ASSERT_TRUE(CaptureTree(FsRoot(kTrees + "fault-port-down"), out).ok());
  auto dir = ExtractTree(out);
  ASSERT_TRUE(dir.ok()) << dir.status();
  auto r = RunOffline(*dir);
  EXPECT_EQ(r.at("rdma_port_active").status, Status::kFail);
  RemoveTree(*dir);
  // The capture says when, where and by which agent it was made.
  auto report = RunPreflightAt(out, RunOptions{});
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_THAT(report->captured, MatchesRegex("captured 20[0-9-]+T[0-9:]+Z on .* by gdrbench-agent [0-9].*"));
  EXPECT_THAT(FormatReport(*report), HasSubstr(report->captured));
  std::remove(out.c_str());
  EXPECT_EQ(ExtractTree("/nonexistent/x.tar.gz").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(CaptureTree(FsRoot("/"), "").code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gdrbench::agent::preflight
