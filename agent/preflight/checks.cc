// The registry of checks and the helpers they share.
#include "agent/preflight/checks.h"

#include "absl/strings/str_cat.h"

namespace gdrbench::agent::preflight {

const std::vector<CheckDef>& AllChecks() {
  // Report order: the topology first ("look at the topology first, then the
  // modules, before touching NIC parameters"), then drivers, RDMA, the
  // GPUDirect kernel path, platform settings and the network.
  static const std::vector<CheckDef> kChecks = {
      {"gpu_nic_topology", "each GPU has its nearest NIC under the same PCIe switch (PIX/PXB)",
       CheckGpuNicTopology},
      {"nvidia_driver", "the NVIDIA kernel driver is loaded", CheckNvidiaDriver},
      {"cuda_driver", "the CUDA driver API answers and reports its version", CheckCudaDriver},
      {"rdma_devices", "RDMA devices are present", CheckRdmaDevices},
      {"rdma_port_active", "every RDMA port is PORT_ACTIVE and LINK_UP", CheckRdmaPortActive},
      {"peermem_loaded", "nvidia-peermem is loaded", CheckPeermemLoaded},
      {"peermem_persistent", "nvidia-peermem is loaded at boot", CheckPeermemPersistent},
      {"peermem_load_errors", "the kernel log shows no nvidia-peermem load failure",
       CheckPeermemLoadErrors},
      {"dmabuf_supported", "kernel, GPU driver and rdma-core support dma-buf registration",
       CheckDmabufSupported},
      {"gpu_registration_probe", "one page of GPU memory registers with the NIC",
       CheckGpuRegistrationProbe},
      {"stack_version_alignment", "driver, CUDA, peermem, rdma-core/OFED versions agree",
       CheckStackVersionAlignment},
      {"secure_boot", "Secure Boot does not block the NVIDIA modules", CheckSecureBoot},
      {"container_devices", "/dev/infiniband, /dev/nvidia* and memlock are usable",
       CheckContainerDevices},
      {"gpu_compute_mode", "no GPU is in a prohibited or exclusive compute mode",
       CheckGpuComputeMode},
      {"pcie_link_degraded", "GPU and NIC PCIe links run at their maximum width and speed",
       CheckPcieLinkDegraded},
      {"pcie_acs", "ACS does not redirect P2P on bridges between GPU and NIC", CheckPcieAcs},
      {"iommu_mode", "the IOMMU is off or in passthrough for GPUs and NICs", CheckIommuMode},
      {"roce_gid", "each RoCE port has a routable RoCE v2 GID", CheckRoceGid},
      {"mtu", "RDMA path MTU is 4096 (or the pinned minimum)", CheckMtu},
      {"link_error_counters", "RDMA port error counters are zero and do not grow",
       CheckLinkErrorCounters},
  };
  return kChecks;
}

CheckResult Result(const char* id, Status status, std::string summary, std::string remediation) {
  CheckResult r;
  r.id = id;
  r.status = status;
  r.summary = std::move(summary);
  r.remediation = std::move(remediation);
  return r;
}

bool HasNvidiaGpu(Context& ctx) {
  const auto& topo = ctx.Topo();
  return topo.ok() && !topo->gpus.empty();
}

bool CudaWorthAsking(Context& ctx) {
  return HasNvidiaGpu(ctx) || ctx.fs().Exists("/proc/driver/nvidia/version");
}

const char kMokRemedy[] =
    "sign the NVIDIA, nvidia-peermem and OFED modules with a Machine Owner Key and enroll it "
    "(mokutil --import <key.der>, confirm in MokManager at the next boot; DKMS signs with "
    "/var/lib/dkms/mok.pub), or disable Secure Boot in the firmware setup";

bool StrictNic(Context& ctx, const std::string& nic) {
  const auto& topo = ctx.Topo();
  return !topo.ok() || topo->Strict(nic);
}

std::string NotRailNote(Context& ctx, const std::string& nic) {
  const auto& topo = ctx.Topo();
  if (!topo.ok() || topo->Strict(nic)) return "";
  for (const auto& n : topo->not_rails) {
    if (n.nic == nic) return absl::StrCat(" (not a GPU rail", n.why.empty() ? "" : ": " + n.why, ")");
  }
  return " (not a GPU rail)";
}

Status Worse(Status a, Status b) { return static_cast<int>(a) >= static_cast<int>(b) ? a : b; }

}  // namespace gdrbench::agent::preflight
