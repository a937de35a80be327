// iommu_mode: with the IOMMU translating (DMA mode) every GPU<->NIC
// transaction is remapped, and P2P between devices in different groups may be
// blocked or routed through the root complex. Off or passthrough (identity)
// is what GPUDirect RDMA wants.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/preflight/checks.h"

namespace gdrbench::agent::preflight {

CheckResult CheckIommuMode(Context& ctx) {
  const char* kId = "iommu_mode";
  const FsRoot& fs = ctx.fs();
  CheckResult r;
  r.id = kId;
  if (auto cmdline = fs.ReadLine("/proc/cmdline"); cmdline.ok()) r.Saw(ctx.Where("/proc/cmdline"), *cmdline);
  auto units = fs.ListDir("/sys/class/iommu");
  if (!units.ok() || units->empty()) {
    r.Saw(ctx.Where("/sys/class/iommu"), units.ok() ? "empty" : "absent");
    r.status = Status::kPass;
    r.summary = "no IOMMU active: DMA is untranslated";
    return r;
  }
  r.Saw(ctx.Where("/sys/class/iommu"), absl::StrJoin(*units, " "));
  const auto& topo = ctx.Topo();
  std::vector<std::pair<std::string, std::string>> devices;  // name, bdf
  if (topo.ok()) {
    for (const auto& g : topo->gpus) devices.emplace_back(absl::StrCat("GPU", g.index), g.pci.bdf);
    for (const auto& n : topo->nics) {
      if (n.has_pci) devices.emplace_back(n.name, n.pci.bdf);
    }
  }
  if (devices.empty()) {
    r.status = Status::kSkip;
    r.summary = "IOMMU active, but no GPU or PCI RDMA NIC to check";
    return r;
  }
  std::vector<std::string> translated;
  for (const auto& [name, bdf] : devices) {
    std::string group_link = absl::StrCat("/sys/bus/pci/devices/", bdf, "/iommu_group");
    auto group = fs.RealPath(group_link);
    if (!group.ok()) {
      r.Saw(ctx.Where(group_link), "absent (device not behind the IOMMU)");
      continue;
    }
    auto type = fs.ReadLine(*group + "/type");
    std::string t = type.ok() ? *type : "unknown";
    r.Saw(ctx.Where(*group + "/type"), absl::StrCat(name, ": ", t));
    if (t != "identity") translated.push_back(absl::StrCat(name, " (", t, ")"));
  }
  if (translated.empty()) {
    r.status = Status::kPass;
    r.summary = "no GPU or NIC DMA is translated (passthrough or outside the IOMMU)";
    return r;
  }
  r.status = Status::kWarn;
  r.summary = absl::StrCat("IOMMU translates DMA for ", absl::StrJoin(translated, ", "),
                           ": GPU<->NIC P2P goes through remapping");
  r.remediation =
      "boot with iommu=pt (Intel: intel_iommu=on iommu=pt; AMD: amd_iommu=on iommu=pt) in "
      "GRUB_CMDLINE_LINUX, update-grub, reboot; or disable the IOMMU if no VFIO/SR-IOV is used";
  return r;
}

}  // namespace gdrbench::agent::preflight
