// dmabuf_supported: the dma-buf path for GPU memory registration
// (cuMemGetHandleForAddressRange -> ibv_reg_dmabuf_mr) needs a kernel >= 5.12,
// NVIDIA's open kernel modules (the GPU attribute DMA_BUF_SUPPORTED says so),
// rdma-core >= 34 and a NIC driver that implements dma-buf registration.
// On a node without an RDMA device the GPU half can still PASS; the NIC half
// is then "unknown: no RDMA device", never "supported".
#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "agent/preflight/checks.h"

namespace gdrbench::agent::preflight {
namespace {

// "6.1.0-57-amd64" -> {6, 1}; {0, 0} when unparseable.
std::pair<int, int> KernelMajorMinor(const std::string& release) {
  std::vector<std::string> parts = absl::StrSplit(release, absl::ByAnyChar(".-"));
  if (parts.size() < 2) return {0, 0};
  return {std::atoi(parts[0].c_str()), std::atoi(parts[1].c_str())};
}

// The GPU half's prerequisites (kernel >= 5.12 with dma-buf, open kernel
// modules, the GPU attribute, rdma-core >= 34), recorded in `r`: what is
// missing, what could not be read, and what only a live run can read (the
// CUDA driver's answer).
void ReadGpuHalf(Context& ctx, CheckResult& r, std::vector<std::string>& missing,
                 std::vector<std::string>& unknown, std::vector<std::string>& live_only) {
  auto release = ctx.fs().ReadLine("/proc/sys/kernel/osrelease");
  if (release.ok()) {
    auto [major, minor] = KernelMajorMinor(*release);
    bool ok = major > 5 || (major == 5 && minor >= 12);
    r.Saw(ctx.Where("/proc/sys/kernel/osrelease"), absl::StrCat(*release, ok ? " (>= 5.12)" : " (< 5.12)"));
    if (!ok) missing.push_back(absl::StrCat("kernel ", *release, " < 5.12"));
    std::string config = absl::StrCat("/boot/config-", *release);
    if (auto cfg = ctx.fs().ReadFile(config); cfg.ok()) {
      bool dmabuf = absl::StrContains(*cfg, "CONFIG_DMA_SHARED_BUFFER=y");
      r.Saw(ctx.Where(config), dmabuf ? "CONFIG_DMA_SHARED_BUFFER=y" : "CONFIG_DMA_SHARED_BUFFER not set");
      if (!dmabuf) missing.push_back("kernel built without CONFIG_DMA_SHARED_BUFFER");
    }
  } else {
    unknown.push_back("kernel release");
  }

  const NvidiaVersion& nv = ctx.Nvidia();
  if (nv.present) {
    r.Saw(ctx.Where("/proc/driver/nvidia/version"),
          nv.open ? "open kernel modules" : "proprietary kernel modules");
    if (!nv.open) missing.push_back("NVIDIA proprietary kernel modules (dma-buf needs the open ones)");
  } else {
    unknown.push_back("NVIDIA driver flavour");
  }

  const auto& gpus = ctx.CudaGpus();
  if (gpus.ok()) {
    for (const auto& g : *gpus) {
      std::string src = absl::StrCat("cuDeviceGetAttribute(DMA_BUF_SUPPORTED, GPU ", g.device.index, ")");
      if (!g.dmabuf_supported.has_value()) {
        r.Saw(src, "not readable");
        unknown.push_back(absl::StrCat("GPU ", g.device.index, " attribute"));
      } else {
        r.Saw(src, *g.dmabuf_supported ? "1" : "0");
        if (!*g.dmabuf_supported) missing.push_back(absl::StrCat("GPU ", g.device.index, " DMA_BUF_SUPPORTED=0"));
      }
    }
  } else {
    r.Saw("cuDeviceGetAttribute(DMA_BUF_SUPPORTED)", std::string(gpus.status().message()));
    live_only.push_back("GPU attribute");  // no CUDA driver to ask
  }

  std::string rdma_core = verbs::RdmaCoreVersion(ctx.fs());
  if (!rdma_core.empty()) {
    int major = std::atoi(rdma_core.c_str());
    r.Saw(ctx.Where("/var/lib/dpkg/status"), absl::StrCat("libibverbs1 ", rdma_core));
    if (major > 0 && major < 34) missing.push_back(absl::StrCat("rdma-core ", rdma_core, " < 34"));
  } else {
    unknown.push_back("rdma-core version");
  }
}

}  // namespace

CheckResult CheckDmabufSupported(Context& ctx) {
  const char* kId = "dmabuf_supported";
  if (!HasNvidiaGpu(ctx)) return Result(kId, Status::kSkip, "no NVIDIA GPU on the PCI bus");
  CheckResult r;
  r.id = kId;
  std::vector<std::string> missing;
  std::vector<std::string> unknown;
  std::vector<std::string> live_only;  // unread because no CUDA driver or verbs answered

  ReadGpuHalf(ctx, r, missing, unknown, live_only);
  const auto& devs = ctx.RdmaDevices();
  std::string nic_unknown;  // why the NIC half cannot be told
  if (!devs.ok()) {
    nic_unknown = absl::StrCat("RDMA devices not listed: ", devs.status().message());
  } else if (devs->empty()) {
    nic_unknown = "no RDMA device";
    r.Saw(ctx.rdma().source(), ctx.RdmaAbsentReason().empty() ? "no RDMA device" : ctx.RdmaAbsentReason());
  } else {
    for (const auto& d : *devs) {
      auto ok = ctx.rdma().DmabufRegistrationSupported(d.name);
      std::string src = absl::StrCat("ibv_reg_dmabuf_mr(", d.name, ", fd=-1)");
      if (!ok.ok()) {
        r.Saw(src, std::string(ok.status().message()));
        live_only.push_back(absl::StrCat(d.name, " driver"));
      } else {
        r.Saw(src, *ok ? "EBADF: implemented" : "EOPNOTSUPP: not implemented");
        if (!*ok) missing.push_back(absl::StrCat(d.name, " driver has no dma-buf registration"));
      }
    }
  }

  // Nothing missing among what was read is not "supported": unknown is not
  // PASS. Offline, what only a live run reads is a SKIP, as for cuda_driver.
  const bool offline_only = unknown.empty() && !ctx.fs().is_live();
  if (missing.empty() && !live_only.empty() && offline_only) {
    r.status = Status::kSkip;
    r.summary = absl::StrCat("needs the live CUDA driver and NICs for ", absl::StrJoin(live_only, ", "),
                             " (offline run; the rest holds)",
                             nic_unknown.empty() ? "" : absl::StrCat("; NIC half unknown: ", nic_unknown));
    return r;
  }
  unknown.insert(unknown.end(), live_only.begin(), live_only.end());
  if (missing.empty() && !unknown.empty()) {
    r.status = Status::kWarn;
    r.summary = absl::StrCat("cannot tell whether dma-buf registration works: not read: ", absl::StrJoin(unknown, ", "),
                             nic_unknown.empty() ? "" : absl::StrCat("; NIC half unknown: ", nic_unknown));
    r.remediation = "run the preflight live on the node (gdrbench-agent preflight) with the NVIDIA driver loaded";
    return r;
  }
  if (missing.empty()) {
    r.status = Status::kPass;
    r.summary = nic_unknown.empty()
                    ? "dma-buf registration is supported end to end"
                    : absl::StrCat("GPU half supported (kernel, NVIDIA driver, GPU attribute, rdma-core); NIC half "
                                   "unknown: ", nic_unknown);
    return r;
  }
  bool peermem = ctx.fs().Exists("/sys/module/nvidia_peermem") ||
                 ctx.fs().Exists("/sys/kernel/mm/memory_peers/nv_mem/version");
  r.status = peermem ? Status::kWarn : Status::kFail;
  r.summary = absl::StrCat("dma-buf registration unavailable: ", absl::StrJoin(missing, "; "),
                           peermem ? " (nvidia-peermem remains)" : " and nvidia-peermem is not loaded");
  r.remediation =
      "use NVIDIA's open kernel modules (nvidia-driver-<ver>-open, R515+), a kernel >= 5.12, "
      "rdma-core >= 34 and a NIC driver with dma-buf (mlx5); or rely on nvidia-peermem "
      "(modprobe nvidia-peermem)";
  return r;
}

}  // namespace gdrbench::agent::preflight
