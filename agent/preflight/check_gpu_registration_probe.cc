// gpu_registration_probe: really allocate one page of GPU memory and register
// it with the rail NIC of that GPU (or the first NIC).
#include "absl/strings/str_cat.h"
#include "agent/preflight/checks.h"

namespace gdrbench::agent::preflight {

CheckResult CheckGpuRegistrationProbe(Context& ctx) {
  const char* kId = "gpu_registration_probe";
  if (!HasNvidiaGpu(ctx)) return Result(kId, Status::kSkip, "no NVIDIA GPU on the PCI bus");
  const auto& devs = ctx.RdmaDevices();
  if (!devs.ok() || devs->empty()) {
    return Result(kId, Status::kSkip, "no RDMA device to register GPU memory with (see rdma_devices)");
  }
  // The first NIC with a rail GPU; its rail GPU's CUDA index is found by BDF.
  std::string nic = (*devs)[0].name;
  int gpu = 0;
  const auto& topo = ctx.Topo();
  const auto& cuda_gpus = ctx.CudaGpus();
  if (topo.ok() && !topo->rails.empty()) {
    nic = topo->rails[0].nic;
    const std::string& bdf = topo->gpus[topo->rails[0].gpu_index].pci.bdf;
    if (cuda_gpus.ok()) {
      for (const auto& g : *cuda_gpus) {
        if (g.device.pci_bdf == bdf) gpu = g.device.index;
      }
    }
  }
  std::string src = absl::StrCat("Allocate(gpu:", gpu, ", 4096) + Register(", nic, ")");
  auto method = ctx.probe().RegisterOnePage(nic, gpu);
  if (absl::IsUnavailable(method.status())) {
    return Result(kId, Status::kSkip, absl::StrCat("needs live hardware: ", method.status().message()));
  }
  if (!method.ok()) {
    return Result(kId, Status::kFail,
                  absl::StrCat("registering GPU ", gpu, " memory with ", nic, " failed"),
                  "load nvidia-peermem (modprobe nvidia-peermem) or enable dma-buf (open kernel "
                  "modules, kernel >= 5.12); raise memlock (ulimit -l unlimited); see the error "
                  "in the evidence and the dmabuf_supported / peermem_loaded checks")
        .Saw(src, std::string(method.status().message()));
  }
  return Result(kId, Status::kPass, absl::StrCat("GPU ", gpu, " memory registered with ", nic, " by ", *method))
      .Saw(src, *method);
}

}  // namespace gdrbench::agent::preflight
