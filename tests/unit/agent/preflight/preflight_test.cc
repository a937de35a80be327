// The checks over the single-node testdata trees: PASS on the healthy node,
// the right FAIL/WARN and a remedy naming the fix on each tree with one
// fault (the fault matrix of issue 9's acceptance).
#include <chrono>
#include <map>

#include "agent/preflight/preflight.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "node.h"

namespace gdrbench::agent::preflight {
namespace {

using testing::HasSubstr;
using testing::Not;
using testing_fakes::Describe;
using testing_fakes::FakeCuda;
using testing_fakes::kTrees;
using testing_fakes::Node;

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
  EXPECT_EQ(node.load.runs, 0);  // the GPU link is at its maximum: no load needed
}

// One row per single fault: the tree, the check that must catch it, the
// status, and words the summary and the remedy must carry.
struct Fault {
  const char* tree;
  const char* check;
  Status status;
  const char* summary;
  const char* remedy;
};

class FaultMatrix : public testing::TestWithParam<Fault> {};

TEST_P(FaultMatrix, CaughtWithTheRemedy) {
  const Fault& f = GetParam();
  Node node(f.tree);
  auto r = node.Run(f.check);
  EXPECT_EQ(r.status, f.status) << Describe(r);
  EXPECT_THAT(r.summary, HasSubstr(f.summary)) << Describe(r);
  EXPECT_THAT(r.remediation, HasSubstr(f.remedy)) << Describe(r);
}

INSTANTIATE_TEST_SUITE_P(
    SingleNode, FaultMatrix,
    testing::Values(
        Fault{"fault-peermem-not-loaded", "peermem_loaded", Status::kFail, "installed but not loaded",
              "modprobe nvidia-peermem"},
        Fault{"fault-peermem-not-installed", "peermem_loaded", Status::kFail,
              "not installed for kernel 6.8.0-60-generic",
              "reinstall the NVIDIA driver built for this kernel's headers"},
        Fault{"fault-peermem-not-persisted", "peermem_persistent", Status::kWarn, "next reboot",
              "/etc/modules-load.d/nvidia-peermem.conf"},
        Fault{"fault-peermem-symbol-mismatch", "peermem_load_errors", Status::kFail,
              "4 nvidia-peermem load failure(s)", "install MLNX_OFED/DOCA-OFED first, then reinstall the NVIDIA driver"},
        Fault{"fault-secure-boot-unsigned", "secure_boot", Status::kFail,
              "unsigned modules are loaded (nvidia, nvidia_uvm, nvidia_modeset: taint E)", "mokutil --import"},
        Fault{"fault-secure-boot-unsigned", "peermem_loaded", Status::kFail,
              "Secure Boot is on (its module file is unsigned)", "mokutil --import"},
        Fault{"fault-port-down", "rdma_port_active", Status::kFail, "mlx5_0 port 1 PORT_DOWN/DISABLED",
              "cable"},
        Fault{"fault-nic-x8", "pcie_link_degraded", Status::kFail,
              "mlx5_0 (0000:04:00.0) x8 @ 32 GT/s (max x16 @ 32 GT/s)", "reseat"},
        Fault{"fault-nic-gen-low", "pcie_link_degraded", Status::kFail,
              "mlx5_0 (0000:04:00.0) x16 @ 16 GT/s (max x16 @ 32 GT/s)", "reseat"},
        Fault{"fault-gpu-link-width", "pcie_link_degraded", Status::kFail,
              "GPU0 (0000:03:00.0) x8 @ 32 GT/s (max x16 @ 32 GT/s)", "reseat"},
        Fault{"gpu-idle-link-speed", "pcie_link_degraded", Status::kWarn, "idle or degraded (run live to tell)",
              "loads the GPU for 100 ms"},
        Fault{"two-socket-sys", "gpu_nic_topology", Status::kFail, "GPU0<->mlx5_0 SYS", "same PCIe switch"},
        Fault{"fault-link-errors", "link_error_counters", Status::kWarn,
              "past errors: mlx5_0 port 1 link_error_recovery 3, mlx5_0 port 1 symbol_error 112",
              "perfquery -x -R"},
        Fault{"fault-container-no-infiniband", "container_devices", Status::kFail, "/dev/infiniband/rdma_cm",
              "--device=/dev/infiniband"},
        Fault{"fault-acs", "pcie_acs", Status::kFail, "0000:02:00.0", "setpci"},
        Fault{"fault-no-roce-v2-gid", "roce_gid", Status::kFail, "no routable RoCE v2 GID", "ip addr add"},
        Fault{"fault-mtu-1500", "mtu", Status::kWarn, "mlx5_0 port 1 1024", "mtu 9000"},
        Fault{"fault-iommu-dma", "iommu_mode", Status::kWarn, "GPU0 (DMA-FQ)", "iommu=pt"},
        Fault{"fault-memlock", "container_devices", Status::kWarn, "memlock limited", "ulimit -l unlimited"}),
    [](const testing::TestParamInfo<Fault>& info) {
      std::string name = std::string(info.param.tree) + "_" + info.param.check;
      for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
      return name;
    });

TEST(Preflight, SecureBootOnWithSignedModulesPasses) {
  Node node("secure-boot-signed");
  auto r = node.Run("secure_boot");
  EXPECT_EQ(r.status, Status::kPass) << Describe(r);
  EXPECT_THAT(r.summary, HasSubstr("Secure Boot is on; the loaded NVIDIA modules are signed (lockdown integrity)"));
}

// A partial capture with no /sys/module/*/taint: the taint letters come from
// /proc/modules (kernel/module/procfs.c m_show(): "(LETTERS)" last, only when
// tainted; E = unsigned module, Documentation/admin-guide/tainted-kernels.rst),
// one tree per source, and a tree with neither (tests/testdata/README.md).
TEST(Preflight, SecureBootReadsSignedTaintFromProcModules) {
  auto r = Node("secure-boot-taint-in-proc-modules").Run("secure_boot");
  EXPECT_EQ(r.status, Status::kPass) << Describe(r);
  EXPECT_THAT(Describe(r), HasSubstr("/proc/modules: PO ('nvidia 14299136 3 nvidia_uvm,nvidia_modeset,"
                                     "nvidia_peermem, Live 0xffffffffc0400000 (PO)')"));
}

TEST(Preflight, SecureBootReadsUnsignedTaintFromProcModules) {
  auto r = Node("fault-secure-boot-unsigned-in-proc-modules").Run("secure_boot");
  EXPECT_EQ(r.status, Status::kFail) << Describe(r);
  EXPECT_THAT(r.summary, HasSubstr("unsigned modules are loaded (nvidia, nvidia_uvm, nvidia_modeset, "
                                   "nvidia_peermem: taint E)"));
}

TEST(Preflight, SecureBootWithNoTaintSourceCannotTell) {
  auto r = Node("secure-boot-taint-unreadable").Run("secure_boot");
  EXPECT_EQ(r.status, Status::kWarn) << Describe(r);
  EXPECT_THAT(r.summary, HasSubstr("cannot tell whether the modules are signed"));
  EXPECT_THAT(Describe(r), HasSubstr("/sys/module/nvidia/taint: not readable, nor is /proc/modules"));
}

TEST(Preflight, PeermemNotLoadedUnderSecureBootNeedsSigningNotModprobe) {
  Node node("fault-secure-boot-unsigned");
  auto r = node.Run("peermem_loaded");
  EXPECT_THAT(r.remediation, HasSubstr("Machine Owner Key"));
  EXPECT_THAT(r.remediation, Not(HasSubstr("ships with the NVIDIA driver")));
  // Without Secure Boot the same absence is a modprobe.
  EXPECT_THAT(Node("fault-peermem-not-loaded").Run("peermem_loaded").remediation,
              Not(HasSubstr("Machine Owner Key")));
}

TEST(Preflight, PeermemLoadFailuresAreQuotedFromTheLog) {
  Node node("fault-peermem-symbol-mismatch");
  auto r = node.Run("peermem_load_errors");
  ASSERT_GE(r.evidence.size(), 2u);
  EXPECT_EQ(r.evidence[0].observed,
            "nvidia_peermem: disagrees about version of symbol ib_register_peer_memory_client");
  EXPECT_EQ(r.evidence[1].observed, "nvidia_peermem: Unknown symbol ib_register_peer_memory_client (err -22)");
  EXPECT_EQ(Node("healthy").Run("peermem_load_errors").status, Status::kPass);
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

// The H200 machine: the GPU half of dma-buf holds, there is no NIC to ask.
TEST(Preflight, DmabufWithoutAnyNicSaysTheNicHalfIsUnknown) {
  Node node("healthy");
  testing_fakes::NoRdma none;
  Context ctx(node.fs, none, node.cuda, node.probe, {});
  auto report = RunPreflight(ctx, {"dmabuf_supported"});
  ASSERT_TRUE(report.ok());
  const auto& r = report->checks.at(0);
  EXPECT_EQ(r.status, Status::kPass) << Describe(r);
  EXPECT_THAT(r.summary, HasSubstr("GPU half supported"));
  EXPECT_THAT(r.summary, HasSubstr("NIC half unknown: no RDMA device"));
  EXPECT_THAT(r.summary, Not(HasSubstr("end to end")));
}

Expectations Pins(std::string driver, std::string cuda, std::string rdma_core, std::string firmware = "") {
  Expectations e;
  e.nvidia_driver = std::move(driver);
  e.cuda_driver = std::move(cuda);
  e.rdma_core = std::move(rdma_core);
  e.hca_firmware = std::move(firmware);
  return e;
}

RunOptions Only(std::vector<std::string> checks, std::vector<std::string> devices) {
  RunOptions o;
  o.checks = std::move(checks);
  o.devices = std::move(devices);
  return o;
}

TEST(Preflight, PinnedVersionsMismatchFails) {
  Node node("healthy", Pins("580", "12.8", ""));
  auto r = node.Run("stack_version_alignment");
  EXPECT_EQ(r.status, Status::kFail) << Describe(r);
  EXPECT_THAT(r.summary, HasSubstr("NVIDIA driver is 570.133.20, pinned 580"));
  EXPECT_THAT(r.summary, Not(HasSubstr("CUDA driver")));
  Node ok("healthy", Pins("570", "", "50.0"));
  auto pass = ok.Run("stack_version_alignment");
  EXPECT_EQ(pass.status, Status::kPass);
  EXPECT_THAT(pass.summary, HasSubstr("HCA firmware 28.39.1002"));
}

TEST(Preflight, PinnedHcaFirmwareMismatchFails) {
  Node node("healthy", Pins("", "", "", "28.41.1000"));
  auto r = node.Run("stack_version_alignment");
  EXPECT_EQ(r.status, Status::kFail) << Describe(r);
  EXPECT_THAT(r.summary, HasSubstr("HCA firmware mlx5_0 28.39.1002, pinned 28.41.1000"));
  EXPECT_THAT(r.remediation, HasSubstr("mlxfwmanager"));
  // A pin of another family (a ConnectX-6 Dx's 22.x) does not apply to a ConnectX-7.
  EXPECT_EQ(Node("healthy", Pins("", "", "", "22.38.1002")).Run("stack_version_alignment").status,
            Status::kPass);
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

// Offline mode through the front door: live-only checks say SKIP with the
// reason; the report names the captured node.
TEST(Preflight, OfflineRunSkipsLiveOnlyChecks) {
  auto report = RunPreflightAt(kTrees + "healthy", RunOptions{});
  ASSERT_TRUE(report.ok()) << report.status();
  std::map<std::string, CheckResult> by_id;
  for (const auto& c : report->checks) by_id[c.id] = c;
  EXPECT_EQ(by_id.at("cuda_driver").status, Status::kSkip);
  EXPECT_THAT(by_id.at("cuda_driver").summary, HasSubstr("offline"));
  EXPECT_EQ(by_id.at("gpu_registration_probe").status, Status::kSkip);
  EXPECT_EQ(by_id.at("gpu_nic_topology").status, Status::kPass);
  EXPECT_EQ(by_id.at("rdma_port_active").status, Status::kPass);
  EXPECT_EQ(by_id.at("link_error_counters").status, Status::kPass);
  EXPECT_THAT(by_id.at("link_error_counters").summary, HasSubstr("read once: offline"));
  EXPECT_EQ(by_id.at("peermem_load_errors").status, Status::kPass);
  EXPECT_EQ(report->overall, Status::kPass);
  EXPECT_EQ(report->hostname, "node1");
  std::string text = FormatReport(*report);
  EXPECT_THAT(text, HasSubstr("preflight of node1 (tree "));
  EXPECT_THAT(text, HasSubstr("overall PASS: "));
}

TEST(Preflight, WholeRunOnTheEightGpuTreeIsFast) {
  auto start = std::chrono::steady_clock::now();
  auto report = RunPreflightAt(kTrees + "dgx-h100", RunOptions{});
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

// A live port (ibv_query_port's IBV_PORT_ACTIVE, whatever a tool spells it:
// the spellings are tests/unit/agent/verbs/port_state_test.cc's) passes, as
// the rxe ports of the lab do.
class LowercaseRdma : public RdmaQuery {
 public:
  std::string source() const override { return "ibv_query_port"; }
  absl::StatusOr<std::vector<verbs::DeviceInfo>> ListDevices(std::string*) override {
    verbs::DeviceInfo d;
    d.name = "rxe0";
    verbs::PortInfo p;
    p.port_num = 1;
    p.state = verbs::PortState::kActive;
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

TEST(Preflight, OwnedDevicesOnly) {
  // dgx-h100 with an agent owning mlx5_6 and mlx5_9 (GPUs 4 and 5's rails).
  auto r = RunPreflightAt(kTrees + "dgx-h100", Only({"rdma_devices", "gpu_nic_topology"}, {"mlx5_6", "mlx5_9"}));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->checks.at(0).summary, "2 GPU(s) each share a PCIe switch with their nearest NIC");
  EXPECT_EQ(r->checks.at(1).summary, "2 RDMA device(s): mlx5_6, mlx5_9");
  auto missing = RunPreflightAt(kTrees + "dgx-h100", Only({"rdma_devices"}, {"mlx5_77"}));
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing->checks.at(0).status, Status::kFail);
  EXPECT_THAT(missing->checks.at(0).summary, HasSubstr("'mlx5_77' owned by this agent"));
}

}  // namespace
}  // namespace gdrbench::agent::preflight
