// Issue 32 item 8: no check concludes PASS from evidence it could not read.
// Each test takes the `healthy` tree (every check PASSes on it:
// Preflight.HealthyNodePassesEveryCheck), removes one file the way a partial
// capture or an unprivileged read loses it, and expects a WARN that says what
// could not be read, never PASS. The formats of the files removed are the
// kernel's (tests/testdata/preflight/treelib.py cites them).
#include <filesystem>
#include <fstream>
#include <string>

#include "agent/preflight/preflight.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "node.h"

namespace gdrbench::agent::preflight {
namespace {

using testing::HasSubstr;
using testing_fakes::Describe;
using testing_fakes::FakeCuda;
using testing_fakes::kTrees;
using testing_fakes::Node;

// A private copy of the `healthy` tree, removed at the end.
class HealthyCopy : public testing::Test {
 protected:
  void SetUp() override {
    char templ[] = "/tmp/gdrbench-missing-XXXXXX";
    ASSERT_NE(mkdtemp(templ), nullptr);
    dir_ = templ;
    std::filesystem::copy(kTrees + "healthy", dir_,
                          std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
    ASSERT_EQ(Node(dir_).Run(check_).status, Status::kPass) << "the healthy tree must pass " << check_;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void Remove(const std::string& path) { ASSERT_TRUE(std::filesystem::remove_all(dir_ + path) > 0) << path; }

  std::string check_;
  std::string dir_;
};

class MemlockUnreadable : public HealthyCopy {
 protected:
  MemlockUnreadable() { check_ = "container_devices"; }
};

TEST_F(MemlockUnreadable, NoLimitsFileIsAWarnNotSufficient) {
  Remove("/proc/self/limits");
  auto r = Node(dir_).Run("container_devices");
  EXPECT_EQ(r.status, Status::kWarn) << Describe(r);
  EXPECT_THAT(r.summary, HasSubstr("cannot tell the memlock limit"));
  EXPECT_THAT(Describe(r), HasSubstr("/proc/self/limits: not readable"));
}

TEST_F(MemlockUnreadable, NoMaxLockedMemoryLineIsAWarn) {
  // proc(5): one "Limit Soft Hard Units" row per resource; here without the memlock row.
  std::ofstream(dir_ + "/proc/self/limits", std::ios::trunc)
      << "Limit                     Soft Limit           Hard Limit           Units     \n"
         "Max open files            1024                 1048576              files     \n";
  auto r = Node(dir_).Run("container_devices");
  EXPECT_EQ(r.status, Status::kWarn) << Describe(r);
  EXPECT_THAT(Describe(r), HasSubstr("no 'Max locked memory' line"));
}

class PortStateUnreadable : public HealthyCopy {
 protected:
  PortStateUnreadable() { check_ = "rdma_port_active"; }
};

TEST_F(PortStateUnreadable, AStateFileMissingIsAWarnNotDown) {
  Remove("/sys/class/infiniband/mlx5_0/ports/1/state");
  auto r = Node(dir_).Run("rdma_port_active");
  EXPECT_EQ(r.status, Status::kWarn) << Describe(r);
  EXPECT_THAT(r.summary, HasSubstr("cannot tell whether every port is active: mlx5_0 port 1 (state not readable)"));
}

TEST_F(PortStateUnreadable, NoPortListedIsAWarnNotAllActive) {
  Remove("/sys/class/infiniband/mlx5_0/ports");
  auto r = Node(dir_).Run("rdma_port_active");
  EXPECT_EQ(r.status, Status::kWarn) << Describe(r);
  EXPECT_THAT(r.summary, HasSubstr("mlx5_0 (no port listed)"));
  EXPECT_THAT(r.summary, testing::Not(HasSubstr("all 0 port(s)")));
}

// The CUDA driver answers, but COMPUTE_MODE could not be read (driver.cc
// leaves the mode empty then).
TEST(ComputeModeUnreadable, IsAWarnNotDefault) {
  Node node("healthy");
  node.cuda.gpus = std::vector<CudaGpu>{FakeCuda::MakeGpu(0, "0000:03:00.0", "")};
  auto r = node.Run("gpu_compute_mode");
  EXPECT_EQ(r.status, Status::kWarn) << Describe(r);
  EXPECT_THAT(r.summary, HasSubstr("cannot tell the compute mode of GPU(s) 0"));
  EXPECT_THAT(Describe(r), HasSubstr("COMPUTE_MODE, GPU 0): not readable"));
}

// The CUDA driver answers but not DMA_BUF_SUPPORTED: dma-buf support is
// unknown, not "prerequisites met".
TEST(DmabufUnknown, GpuAttributeNotReadIsAWarn) {
  Node node("healthy");
  CudaGpu g = FakeCuda::MakeGpu(0, "0000:03:00.0");
  g.dmabuf_supported = std::nullopt;
  node.cuda.gpus = std::vector<CudaGpu>{g};
  auto r = node.Run("dmabuf_supported");
  EXPECT_EQ(r.status, Status::kWarn) << Describe(r);
  EXPECT_THAT(r.summary, HasSubstr("cannot tell whether dma-buf registration works: not read: GPU 0 attribute"));
}

// Offline (no CUDA driver to ask): what only a live run reads is SKIP, as
// cuda_driver is, never PASS.
TEST(DmabufUnknown, OfflineWithoutCudaIsASkipNotAPass) {
  Node node("healthy");
  node.cuda.gpus = absl::UnavailableError("offline run against a captured tree: no CUDA driver to ask");
  auto r = node.Run("dmabuf_supported");
  EXPECT_EQ(r.status, Status::kSkip) << Describe(r);
  EXPECT_THAT(r.summary, HasSubstr("needs the live CUDA driver and NICs for GPU attribute"));
}

class DmabufTree : public HealthyCopy {
 protected:
  DmabufTree() { check_ = "dmabuf_supported"; }
};

TEST_F(DmabufTree, KernelReleaseNotReadIsAWarn) {
  Remove("/proc/sys/kernel/osrelease");
  auto r = Node(dir_).Run("dmabuf_supported");
  EXPECT_EQ(r.status, Status::kWarn) << Describe(r);
  EXPECT_THAT(r.summary, HasSubstr("not read: kernel release"));
}

class LinkLayerUnreadable : public HealthyCopy {
 protected:
  LinkLayerUnreadable() { check_ = "roce_gid"; }
};

// A port whose link layer cannot be read is not "InfiniBand only" (SKIP) nor fine.
TEST_F(LinkLayerUnreadable, IsAWarnNotInfiniBand) {
  Remove("/sys/class/infiniband/mlx5_0/ports/1/link_layer");
  auto r = Node(dir_).Run("roce_gid");
  EXPECT_EQ(r.status, Status::kWarn) << Describe(r);
  EXPECT_THAT(r.summary, HasSubstr("cannot tell whether mlx5_0 port 1 need a RoCE v2 GID"));
}

class EmptyKernelLog : public HealthyCopy {
 protected:
  EmptyKernelLog() { check_ = "peermem_load_errors"; }
};

// A log cleared with dmesg -c (or captured empty) holds no evidence of a load
// failure, nor of its absence.
TEST_F(EmptyKernelLog, IsAWarnNotNoFailure) {
  std::ofstream(dir_ + "/gdrbench-capture/dmesg", std::ios::trunc);
  auto r = Node(dir_).Run("peermem_load_errors");
  EXPECT_EQ(r.status, Status::kWarn) << Describe(r);
  EXPECT_THAT(r.summary, HasSubstr("cannot tell whether nvidia-peermem failed to load"));
}

}  // namespace
}  // namespace gdrbench::agent::preflight
