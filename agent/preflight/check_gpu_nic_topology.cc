// gpu_nic_topology: each GPU is judged by its nearest NIC, classified as
// nvidia-smi topo -m classifies the pair: PIX/PXB PASS, PHB WARN, NODE/SYS
// (or no PCI NIC at all) FAIL. NICs that are not a GPU rail (storage,
// in-band, management; topology.h "Rail NICs") are listed, never judged.
// An agent that owns some NICs (--devices) is judged by its own rails only.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/preflight/checks.h"

namespace gdrbench::agent::preflight {
namespace {

Status ForPath(topology::PathType p) {
  if (p <= topology::PathType::kPxb) return Status::kPass;
  if (p == topology::PathType::kPhb) return Status::kWarn;
  return Status::kFail;
}

// "GPU0 (0000:07:00.0): nearest mlx5_0, mlx5_1 PXB via 0000:0a:00.0 ..."
std::string DescribeGpu(const topology::Topology& topo, int gpu,
                        const std::vector<const topology::Relation*>& nearest) {
  std::string out = absl::StrCat("GPU", gpu, " (", topo.gpus[gpu].pci.bdf, "): ");
  if (nearest.empty()) return out + "no PCI RDMA NIC";
  std::vector<std::string> names;
  for (const auto* r : nearest) names.push_back(r->nic);
  absl::StrAppend(&out, "nearest ", absl::StrJoin(names, ", "), " ",
                  topology::PathTypeName(nearest[0]->path));
  if (!nearest[0]->bridges.empty()) absl::StrAppend(&out, " via ", absl::StrJoin(nearest[0]->bridges, " "));
  return out;
}

}  // namespace

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
  // The GPUs judged: all of them, or the GPUs of an owning agent's rails.
  std::vector<int> judged;
  if (ctx.devices().empty()) {
    for (const auto& g : topo->gpus) judged.push_back(g.index);
  } else {
    for (const auto& rail : topo->rails) {
      if (rail.gpu_index >= 0 &&
          std::find(judged.begin(), judged.end(), rail.gpu_index) == judged.end()) {
        judged.push_back(rail.gpu_index);
      }
    }
  }
  CheckResult r;
  r.id = kId;
  Status worst = Status::kPass;
  std::vector<std::string> bad;
  for (int g : judged) {
    // An owning agent's topology holds only its own NICs.
    std::vector<const topology::Relation*> nearest = topo->Nearest(g);
    Status s = nearest.empty() ? Status::kFail : ForPath(nearest[0]->path);
    r.Saw(absl::StrCat(ctx.Where("/sys/bus/pci/devices/"), topo->gpus[g].pci.bdf), DescribeGpu(*topo, g, nearest));
    if (s != Status::kPass) {
      bad.push_back(nearest.empty() ? absl::StrCat("GPU", g, " has no PCI NIC")
                                    : absl::StrCat("GPU", g, "<->", nearest[0]->nic, " ",
                                                   topology::PathTypeName(nearest[0]->path)));
    }
    worst = Worse(worst, s);
  }
  std::vector<std::string> others;
  for (const auto& n : topo->not_rails) {
    others.push_back(n.nic);
    r.Saw(absl::StrCat(ctx.Where("/sys/class/infiniband/"), n.nic), absl::StrCat("not a GPU rail: ", n.why));
  }
  r.Saw("GPU x NIC matrix", "\n" + topology::FormatMatrix(*topo));
  r.status = worst;
  std::string not_rails =
      others.empty() ? "" : absl::StrCat("; not GPU rails: ", absl::StrJoin(others, ", "));
  if (worst == Status::kPass) {
    r.summary = absl::StrCat(judged.size(), " GPU(s) each share a PCIe switch with their nearest NIC",
                             not_rails);
  } else if (worst == Status::kWarn) {
    r.summary = absl::StrCat("GPU and NIC meet only at the CPU's host bridge: ", absl::StrJoin(bad, ", "),
                             not_rails);
    r.remediation =
        "GPUDirect RDMA through the host bridge (PHB) runs below line rate on many CPUs: put the "
        "NIC and GPU in slots under one PCIe switch, or accept the lower bandwidth";
  } else {
    r.summary = absl::StrCat("a GPU's nearest NIC is on another host bridge or socket: ",
                             absl::StrJoin(bad, ", "), not_rails);
    r.remediation =
        "move the NIC (or the GPU) to a slot under the same PCIe switch or at least the same CPU "
        "socket (see the server's block diagram), and pin jobs to the GPU of each NIC's rail; "
        "check nvidia-smi topo -m before touching NIC parameters";
  }
  return r;
}

}  // namespace gdrbench::agent::preflight
