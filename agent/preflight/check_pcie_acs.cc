// pcie_acs: Access Control Services on a PCIe switch port with P2P request or
// completion redirect enabled sends every GPU<->NIC transaction up to the root
// complex (and through the IOMMU), which cuts GPUDirect bandwidth and often
// breaks it. Only pairs under a common switch (PIX/PXB) are affected.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "agent/preflight/checks.h"

namespace gdrbench::agent::preflight {

CheckResult CheckPcieAcs(Context& ctx) {
  const char* kId = "pcie_acs";
  const auto& topo = ctx.Topo();
  if (!topo.ok() || topo->rails.empty()) {
    return Result(kId, Status::kSkip, "no GPU/NIC pair to check (see gpu_nic_topology)");
  }
  CheckResult r;
  r.id = kId;
  std::vector<std::string> enabled;
  std::vector<std::string> unreadable;
  size_t pairs = 0;
  for (const auto& rail : topo->rails) {
    if (rail.path > topology::PathType::kPxb) continue;
    const auto* rel = topo->Find(rail.gpu_index, rail.nic);
    if (rel == nullptr) continue;
    ++pairs;
    for (const auto& bdf : rel->bridges) {
      std::string src = ctx.Where(absl::StrCat("/sys/bus/pci/devices/", bdf, "/config"));
      auto acs = topology::ReadAcs(ctx.fs(), bdf);
      if (!acs.ok()) {
        unreadable.push_back(bdf);
        r.Saw(src, std::string(acs.status().message()));
        continue;
      }
      if (!acs->has_value()) {
        r.Saw(src, "no ACS capability");
        continue;
      }
      r.Saw(src, absl::StrFormat("ACS control 0x%04x%s", (*acs)->control,
                                 (*acs)->redirects_p2p() ? " (P2P redirect on)" : ""));
      if ((*acs)->redirects_p2p()) {
        enabled.push_back(absl::StrCat(bdf, " (", rail.nic, "<->GPU", rail.gpu_index, ")"));
      }
    }
  }
  if (pairs == 0) {
    return Result(kId, Status::kSkip, "no GPU/NIC pair shares a PCIe switch: ACS does not apply");
  }
  if (!enabled.empty()) {
    r.status = Status::kFail;
    r.summary = absl::StrCat("ACS redirects GPU<->NIC peer-to-peer on ", absl::StrJoin(enabled, ", "));
    r.remediation =
        "disable ACS on those bridges: setpci -s <bridge> ECAP_ACS+0x6.w=0000 at every boot (a "
        "systemd unit), or turn off ACS / PCIe ACS control in the BIOS; with virtualization keep "
        "the IOMMU in passthrough (iommu=pt)";
    return r;
  }
  if (!unreadable.empty()) {
    r.status = Status::kWarn;
    r.summary = absl::StrCat("cannot read ACS on ", absl::StrJoin(unreadable, ", "));
    r.remediation = "run the agent as root (extended PCI config space is root-only)";
    return r;
  }
  r.status = Status::kPass;
  r.summary = absl::StrCat("no P2P redirect on the bridges of ", pairs, " GPU/NIC pair(s)");
  return r;
}

}  // namespace gdrbench::agent::preflight
