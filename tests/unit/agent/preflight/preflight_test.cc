// The checks over the testdata trees: PASS on the healthy node, the right
// FAIL/WARN and remedy on each tree with one fault.
#include <chrono>
#include <map>

#include "agent/preflight/checks.h"
#include "agent/preflight/context.h"
#include "agent/preflight/preflight.h"
#include "agent/preflight/runner.h"
#include "agent/preflight/sysfs_rdma.h"
#include "fakes.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gdrbench::agent::preflight {
namespace {

using testing::HasSubstr;
using testing_fakes::FakeCuda;
using testing_fakes::FakeDmabufRdma;
using testing_fakes::FakeProbe;

const std::string kTrees = std::string(GDRBENCH_SOURCE_DIR) + "/tests/testdata/preflight/";

// One node: a tree plus fakes standing in for the live CUDA driver and the
// registration probe.
struct Node {
  explicit Node(const std::string& tree, Expectations e = {})
      : fs(kTrees + tree), sysfs(fs), rdma(sysfs), ctx(fs, rdma, cuda, probe, std::move(e)) {}
  CheckResult Run(const std::string& id) {
    auto report = RunPreflight(ctx, {id});
    EXPECT_TRUE(report.ok()) << report.status();
    EXPECT_EQ(report->checks.size(), 1u);
    return report->checks.at(0);
  }
  std::map<std::string, CheckResult> RunAll() {
    auto report = RunPreflight(ctx, {});
    EXPECT_TRUE(report.ok()) << report.status();
    std::map<std::string, CheckResult> by_id;
    for (auto& c : report->checks) by_id[c.id] = c;
    return by_id;
  }
  FsRoot fs;
  SysfsRdma sysfs;
  FakeDmabufRdma rdma;
  FakeCuda cuda;
  FakeProbe probe;
  Context ctx;
};

std::string Describe(const CheckResult& r) {
  std::string s = std::string(StatusName(r.status)) + " " + r.id + ": " + r.summary;
  for (const auto& e : r.evidence) s += "\n  " + e.source + ": " + e.observed;
  return s;
}

TEST(Preflight, HealthyNodePassesEveryCheck) {
  Node node("healthy");
  auto all = node.RunAll();
  EXPECT_EQ(all.size(), AllChecks().size());
  for (const auto& [id, r] : all) {
    EXPECT_EQ(r.status, Status::kPass) << Describe(r);
    EXPECT_TRUE(r.remediation.empty()) << id;
    EXPECT_FALSE(r.evidence.empty()) << id << " shows no evidence";
  }
  EXPECT_EQ(node.probe.last_device, "mlx5_0");
  EXPECT_EQ(node.probe.last_gpu, 0);
}

TEST(Preflight, PeermemLoadedButNotPersistedWarns) {
  Node node("fault-peermem-not-persisted");
  EXPECT_EQ(node.Run("peermem_loaded").status, Status::kPass);
  auto r = node.Run("peermem_persistent");
  EXPECT_EQ(r.status, Status::kWarn) << Describe(r);
  EXPECT_THAT(r.summary, HasSubstr("reboot"));
  EXPECT_THAT(r.remediation, HasSubstr("/etc/modules-load.d/nvidia-peermem.conf"));
}

TEST(Preflight, SecureBootOnWarnsWithMokRemedy) {
  Node node("fault-secure-boot");
  auto r = node.Run("secure_boot");
  EXPECT_EQ(r.status, Status::kWarn) << Describe(r);
  EXPECT_THAT(r.remediation, HasSubstr("mokutil --import"));
  EXPECT_THAT(r.evidence.at(0).observed, HasSubstr("enabled"));
}

TEST(Preflight, PortDownFailsWithCableRemedy) {
  Node node("fault-port-down");
  auto r = node.Run("rdma_port_active");
  EXPECT_EQ(r.status, Status::kFail) << Describe(r);
  EXPECT_THAT(r.summary, HasSubstr("mlx5_0 port 1 PORT_DOWN/DISABLED"));
  EXPECT_THAT(r.remediation, HasSubstr("cable"));
}

TEST(Preflight, SysPairFailsTopology) {
  Node node("two-socket-sys");
  auto r = node.Run("gpu_nic_topology");
  EXPECT_EQ(r.status, Status::kFail) << Describe(r);
  EXPECT_THAT(r.summary, HasSubstr("mlx5_0<->GPU0 SYS"));
  EXPECT_THAT(r.remediation, HasSubstr("same PCIe switch"));
}

TEST(Preflight, DgxH100TopologyPasses) {
  Node node("dgx-h100");
  auto r = node.Run("gpu_nic_topology");
  EXPECT_EQ(r.status, Status::kPass) << Describe(r);
  EXPECT_THAT(r.summary, HasSubstr("8 NIC(s)"));
  // InfiniBand only: no RoCE GID to check.
  EXPECT_EQ(node.Run("roce_gid").status, Status::kSkip);
  EXPECT_EQ(node.Run("rdma_port_active").status, Status::kPass);
}

TEST(Preflight, DegradedNicLinkFails) {
  Node node("fault-pcie-degraded");
  auto r = node.Run("pcie_link_degraded");
  EXPECT_EQ(r.status, Status::kFail) << Describe(r);
  EXPECT_THAT(r.summary, HasSubstr("mlx5_0 (0000:04:00.0) x8 @ 16 GT/s (max x16 @ 32 GT/s)"));
  EXPECT_THAT(r.remediation, HasSubstr("reseat"));
}

TEST(Preflight, ContainerWithoutInfinibandDevicesFails) {
  Node node("fault-container-no-infiniband");
  auto r = node.Run("container_devices");
  EXPECT_EQ(r.status, Status::kFail) << Describe(r);
  EXPECT_THAT(r.summary, HasSubstr("/dev/infiniband/uverbs*"));
  EXPECT_THAT(r.summary, HasSubstr("/dev/infiniband/rdma_cm"));
  EXPECT_THAT(r.remediation, HasSubstr("--device=/dev/infiniband"));
}

TEST(Preflight, AcsOnBridgesFails) {
  Node node("fault-acs");
  auto r = node.Run("pcie_acs");
  EXPECT_EQ(r.status, Status::kFail) << Describe(r);
  EXPECT_THAT(r.summary, HasSubstr("0000:02:00.0"));
  EXPECT_THAT(r.remediation, HasSubstr("setpci"));
  EXPECT_EQ(Node("healthy").Run("pcie_acs").status, Status::kPass);
}

TEST(Preflight, MissingRoceV2GidFails) {
  Node node("fault-no-roce-v2-gid");
  auto r = node.Run("roce_gid");
  EXPECT_EQ(r.status, Status::kFail) << Describe(r);
  EXPECT_THAT(r.remediation, HasSubstr("ip addr add"));
}

TEST(Preflight, SmallMtuWarnsAndFailsBelowPin) {
  Node node("fault-mtu-1500");
  auto r = node.Run("mtu");
  EXPECT_EQ(r.status, Status::kWarn) << Describe(r);
  EXPECT_THAT(r.summary, HasSubstr("mlx5_0 port 1 1024"));
  EXPECT_THAT(r.remediation, HasSubstr("mtu 9000"));
  Node pinned("fault-mtu-1500", Expectations{.min_mtu_bytes = 4096});
  EXPECT_EQ(pinned.Run("mtu").status, Status::kFail);
}

TEST(Preflight, IommuTranslationWarns) {
  Node node("fault-iommu-dma");
  auto r = node.Run("iommu_mode");
  EXPECT_EQ(r.status, Status::kWarn) << Describe(r);
  EXPECT_THAT(r.summary, HasSubstr("GPU0 (DMA-FQ)"));
  EXPECT_THAT(r.remediation, HasSubstr("iommu=pt"));
}

TEST(Preflight, SmallMemlockWarns) {
  Node node("fault-memlock");
  auto r = node.Run("container_devices");
  EXPECT_EQ(r.status, Status::kWarn) << Describe(r);
  EXPECT_THAT(r.remediation, HasSubstr("ulimit -l unlimited"));
}

TEST(Preflight, RegistrationFailureFailsWithTheReason) {
  Node node("healthy");
  node.probe.result = absl::FailedPreconditionError("ibv_reg_mr: Bad address; nvidia-peermem not loaded");
  auto r = node.Run("gpu_registration_probe");
  EXPECT_EQ(r.status, Status::kFail);
  EXPECT_THAT(r.evidence.at(0).observed, HasSubstr("nvidia-peermem not loaded"));
  EXPECT_THAT(r.remediation, HasSubstr("modprobe nvidia-peermem"));
}

TEST(Preflight, ComputeModes) {
  Node node("healthy");
  node.cuda.gpus = std::vector<CudaGpu>{FakeCuda::MakeGpu(0, "0000:03:00.0", "exclusive_process")};
  EXPECT_EQ(node.Run("gpu_compute_mode").status, Status::kWarn);
  Node node2("healthy");
  node2.cuda.gpus = std::vector<CudaGpu>{FakeCuda::MakeGpu(0, "0000:03:00.0", "prohibited")};
  auto r = node2.Run("gpu_compute_mode");
  EXPECT_EQ(r.status, Status::kFail);
  EXPECT_THAT(r.remediation, HasSubstr("-c DEFAULT"));
}

TEST(Preflight, DmabufUnsupportedWarnsWhenPeermemRemains) {
  Node node("healthy");
  node.cuda.gpus = std::vector<CudaGpu>{FakeCuda::MakeGpu(0, "0000:03:00.0", "default", false)};
  node.rdma.dmabuf = false;
  auto r = node.Run("dmabuf_supported");
  EXPECT_EQ(r.status, Status::kWarn) << Describe(r);
  EXPECT_THAT(r.summary, HasSubstr("GPU 0 DMA_BUF_SUPPORTED=0"));
  EXPECT_THAT(r.summary, HasSubstr("mlx5_0 driver has no dma-buf registration"));
}

TEST(Preflight, PinnedVersionsMismatchFails) {
  Node node("healthy", Expectations{.nvidia_driver = "580", .cuda_driver = "12.8"});
  auto r = node.Run("stack_version_alignment");
  EXPECT_EQ(r.status, Status::kFail) << Describe(r);
  EXPECT_THAT(r.summary, HasSubstr("NVIDIA driver is 570.133.20, pinned 580"));
  EXPECT_THAT(r.summary, testing::Not(HasSubstr("CUDA driver")));
  Node ok("healthy", Expectations{.nvidia_driver = "570", .rdma_core = "50.0"});
  EXPECT_EQ(ok.Run("stack_version_alignment").status, Status::kPass);
}

TEST(Preflight, CudaDriverDownFailsWhenAGpuIsPresent) {
  Node node("healthy");
  node.cuda.version = absl::NotFoundError("no NVIDIA driver: cannot load libcuda.so.1");
  auto r = node.Run("cuda_driver");
  EXPECT_EQ(r.status, Status::kFail);
  EXPECT_THAT(r.remediation, HasSubstr("libcuda.so.1"));
}

TEST(Preflight, EmptyRootNeverCrashesAndSaysWhy) {
  Node node("does-not-exist");
  auto all = node.RunAll();
  EXPECT_EQ(all.at("rdma_devices").status, Status::kFail);
  EXPECT_THAT(all.at("rdma_devices").remediation, HasSubstr("modprobe mlx5_ib"));
  EXPECT_EQ(all.at("gpu_nic_topology").status, Status::kSkip);
  EXPECT_EQ(all.at("nvidia_driver").status, Status::kSkip);
  EXPECT_EQ(all.at("rdma_port_active").status, Status::kSkip);
  for (const auto& [id, r] : all) EXPECT_FALSE(r.summary.empty()) << id;
}

TEST(Preflight, UnknownCheckIsInvalidArgument) {
  Node node("healthy");
  auto report = RunPreflight(node.ctx, {"gpu_nic_topology", "no_such_check"});
  ASSERT_EQ(report.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(report.status().message(), HasSubstr("no_such_check"));
  EXPECT_THAT(report.status().message(), HasSubstr("peermem_loaded"));
}

TEST(Preflight, OverallIsTheWorstWithSkipAsPass) {
  std::vector<CheckResult> checks(3);
  checks[0].status = Status::kSkip;
  checks[1].status = Status::kPass;
  EXPECT_EQ(Overall({checks[0], checks[1]}), Status::kPass);
  checks[2].status = Status::kWarn;
  EXPECT_EQ(Overall(checks), Status::kWarn);
  checks[0].status = Status::kFail;
  EXPECT_EQ(Overall(checks), Status::kFail);
}

// Offline mode: the same trees through the real factory; live-only checks
// say SKIP with the reason.
TEST(Preflight, OfflineRunSkipsLiveOnlyChecks) {
  auto report = RunPreflightOn(FsRoot(kTrees + "healthy"), {}, {});
  ASSERT_TRUE(report.ok()) << report.status();
  std::map<std::string, CheckResult> by_id;
  for (const auto& c : report->checks) by_id[c.id] = c;
  EXPECT_EQ(by_id.at("cuda_driver").status, Status::kSkip);
  EXPECT_THAT(by_id.at("cuda_driver").summary, HasSubstr("offline"));
  EXPECT_EQ(by_id.at("gpu_registration_probe").status, Status::kSkip);
  EXPECT_EQ(by_id.at("gpu_nic_topology").status, Status::kPass);
  EXPECT_EQ(by_id.at("rdma_port_active").status, Status::kPass);
  EXPECT_EQ(report->overall, Status::kPass);
  EXPECT_THAT(FormatReport(*report), HasSubstr("overall PASS"));
}

TEST(Preflight, WholeRunOnTheEightGpuTreeIsFast) {
  auto start = std::chrono::steady_clock::now();
  auto report = RunPreflightOn(FsRoot(kTrees + "dgx-h100"), {}, {});
  auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(report.ok());
  EXPECT_LT(ms, 1000.0);
  std::printf("whole offline preflight on dgx-h100: %.2f ms\n", ms);
}

TEST(RoceMtu, FollowsTheKernelRule) {
  EXPECT_EQ(RoceMtuForNetdevMtu(9000), 4096u);
  EXPECT_EQ(RoceMtuForNetdevMtu(4200), 4096u);
  EXPECT_EQ(RoceMtuForNetdevMtu(4000), 2048u);
  EXPECT_EQ(RoceMtuForNetdevMtu(1500), 1024u);
  EXPECT_EQ(RoceMtuForNetdevMtu(200), 0u);
}

}  // namespace
}  // namespace gdrbench::agent::preflight

namespace gdrbench::agent::preflight {
namespace {

TEST(NormalizePortState, AllSpellings) {
  EXPECT_EQ(NormalizePortState("active"), "PORT_ACTIVE");  // ibv_port_state_str
  EXPECT_EQ(NormalizePortState("PORT_ACTIVE"), "PORT_ACTIVE");
  EXPECT_EQ(NormalizePortState("4: ACTIVE"), "PORT_ACTIVE");  // sysfs
  EXPECT_EQ(NormalizePortState("down"), "PORT_DOWN");
  EXPECT_EQ(NormalizePortState("active defer"), "PORT_ACTIVE_DEFER");
}

// Live verbs spell the state "active" (rdma-core's ibv_port_state_str): such
// ports pass, as the rxe ports of the lab do.
class LowercaseRdma : public RdmaQuery {
 public:
  std::string source() const override { return "ibv_query_port"; }
  absl::StatusOr<std::vector<verbs::DeviceInfo>> ListDevices(std::string*) override {
    verbs::DeviceInfo d;
    d.name = "rxe0";
    verbs::PortInfo p;
    p.port_num = 1;
    p.state = "active";
    p.physical_state = "LINK_UP";
    p.link_layer = "Ethernet";
    d.ports.push_back(p);
    return std::vector<verbs::DeviceInfo>{d};
  }
  absl::StatusOr<bool> DmabufRegistrationSupported(const std::string&) override { return false; }
};

TEST(Preflight, LiveLowercaseActivePortPasses) {
  FsRoot fs("/nonexistent-gdrbench-root");
  LowercaseRdma rdma;
  testing_fakes::FakeCuda cuda;
  testing_fakes::FakeProbe probe;
  Context ctx(fs, rdma, cuda, probe, {});
  auto report = RunPreflight(ctx, {"rdma_port_active"});
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->checks.at(0).status, Status::kPass) << report->checks.at(0).summary;
}

}  // namespace
}  // namespace gdrbench::agent::preflight

namespace gdrbench::agent::preflight {
namespace {

// Idle GPUs train down their link speed to save power: reported, not failed.
TEST(Preflight, IdleGpuLinkSpeedPassesNarrowGpuLinkFails) {
  auto idle = RunPreflightOn(FsRoot(kTrees + "gpu-idle-link-speed"), {"pcie_link_degraded"}, {});
  ASSERT_TRUE(idle.ok());
  EXPECT_EQ(idle->checks.at(0).status, Status::kPass) << idle->checks.at(0).summary;
  bool noted = false;
  for (const auto& e : idle->checks.at(0).evidence) noted |= e.observed.find("idle GPUs") != std::string::npos;
  EXPECT_TRUE(noted);
  auto narrow = RunPreflightOn(FsRoot(kTrees + "fault-gpu-link-width"), {"pcie_link_degraded"}, {});
  ASSERT_TRUE(narrow.ok());
  EXPECT_EQ(narrow->checks.at(0).status, Status::kFail);
  EXPECT_THAT(narrow->checks.at(0).summary, HasSubstr("GPU0 (0000:03:00.0) x8 @ 32 GT/s (max x16 @ 32 GT/s)"));
}

}  // namespace
}  // namespace gdrbench::agent::preflight

namespace gdrbench::agent::preflight {
namespace {

TEST(Preflight, OwnedDevicesOnly) {
  // dgx-h100 with an agent owning mlx5_6 and mlx5_9 (GPUs 4 and 5's rails).
  auto r = RunPreflightOn(FsRoot(kTrees + "dgx-h100"), {"rdma_devices", "gpu_nic_topology"}, {},
                          {"mlx5_6", "mlx5_9"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->checks.at(0).summary, "2 NIC(s) each share a PCIe switch with a GPU");
  EXPECT_EQ(r->checks.at(1).summary, "2 RDMA device(s): mlx5_6, mlx5_9");
  auto missing = RunPreflightOn(FsRoot(kTrees + "dgx-h100"), {"rdma_devices"}, {}, {"mlx5_77"});
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing->checks.at(0).status, Status::kFail);
  EXPECT_THAT(missing->checks.at(0).summary, HasSubstr("'mlx5_77' owned by this agent"));
}

}  // namespace
}  // namespace gdrbench::agent::preflight
