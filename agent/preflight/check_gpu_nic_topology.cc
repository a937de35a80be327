// gpu_nic_topology: each NIC's closest GPU is PIX/PXB (PASS), PHB (WARN),
// NODE/SYS (FAIL), exactly as nvidia-smi topo -m classifies the pair.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/preflight/checks.h"

namespace gdrbench::agent::preflight {

CheckResult CheckGpuNicTopology(Context& ctx) {
  const char* kId = "gpu_nic_topology";
  const auto& topo = ctx.Topo();
  if (!topo.ok()) {
    return Result(kId, Status::kFail,
                  absl::StrCat("cannot read the PCI tree: ", topo.status().message()),
                  "run the agent where /sys is mounted (containers: mount /sys read-only)");
  }
  if (topo->gpus.empty()) {
    return Result(kId, Status::kSkip, "no NVIDIA GPU on the PCI bus")
        .Saw(ctx.Where("/sys/bus/pci/devices"), "no device with vendor 0x10de, class 0x03xxxx");
  }
  int pci_nics = 0;
  for (const auto& n : topo->nics) pci_nics += n.has_pci ? 1 : 0;
  if (pci_nics == 0) {
    CheckResult r = Result(kId, Status::kSkip, "no PCI RDMA NIC to pair with a GPU");
    for (const auto& n : topo->notes) r.Saw(ctx.Where("/sys/class/infiniband"), n);
    return r;
  }
  Status worst = Status::kPass;
  std::vector<std::string> bad;
  CheckResult r;
  for (const auto& rail : topo->rails) {
    const auto* rel = topo->Find(rail.gpu_index, rail.nic);
    const char* name = topology::PathTypeName(rail.path);
    std::string gpu_bdf = topo->gpus[rail.gpu_index].pci.bdf;
    std::string observed = absl::StrCat("closest GPU ", rail.gpu_index, " (", gpu_bdf, "): ", name);
    if (rel != nullptr && !rel->bridges.empty()) {
      absl::StrAppend(&observed, " via ", absl::StrJoin(rel->bridges, " "));
    }
    r.Saw(absl::StrCat(ctx.Where("/sys/class/infiniband/"), rail.nic, "/device"), observed);
    Status s = Status::kPass;
    if (rail.path == topology::PathType::kPhb) s = Status::kWarn;
    if (rail.path >= topology::PathType::kNode) s = Status::kFail;
    if (s != Status::kPass) bad.push_back(absl::StrCat(rail.nic, "<->GPU", rail.gpu_index, " ", name));
    if (static_cast<int>(s) > static_cast<int>(worst)) worst = s;
  }
  r.Saw("GPU x NIC matrix", "\n" + topology::FormatMatrix(*topo));
  r.id = kId;
  r.status = worst;
  if (worst == Status::kPass) {
    r.summary = absl::StrCat(topo->rails.size(), " NIC(s) each share a PCIe switch with a GPU");
  } else if (worst == Status::kWarn) {
    r.summary = absl::StrCat("GPU and NIC meet only at the CPU's host bridge: ", absl::StrJoin(bad, ", "));
    r.remediation =
        "GPUDirect RDMA through the host bridge (PHB) runs below line rate on many CPUs: put the "
        "NIC and GPU in slots under one PCIe switch, or accept the lower bandwidth";
  } else {
    r.summary = absl::StrCat("GPU and NIC are on different host bridges or sockets: ",
                             absl::StrJoin(bad, ", "));
    r.remediation =
        "move the NIC (or the GPU) to a slot under the same PCIe switch or at least the same CPU "
        "socket (see the server's block diagram), and pin jobs to the GPU of each NIC's rail; "
        "check nvidia-smi topo -m before touching NIC parameters";
  }
  return r;
}

}  // namespace gdrbench::agent::preflight
