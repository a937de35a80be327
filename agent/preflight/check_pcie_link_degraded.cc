// pcie_link_degraded: every GPU and RDMA NIC trained its PCIe link at the
// width and speed it is capable of. A narrower link is a fault (bad slot,
// riser, or card seating). GPUs lower their link *speed* while idle to save
// power, so a GPU's speed alone below its maximum is reported, not failed.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "agent/preflight/checks.h"

namespace gdrbench::agent::preflight {
namespace {

std::string Describe(const topology::PciLink& l) {
  return absl::StrFormat("x%d @ %g GT/s (max x%d @ %g GT/s)", l.current_width, l.current_gts,
                         l.max_width, l.max_gts);
}

}  // namespace

CheckResult CheckPcieLinkDegraded(Context& ctx) {
  const char* kId = "pcie_link_degraded";
  const auto& topo = ctx.Topo();
  if (!topo.ok()) return Result(kId, Status::kSkip, std::string(topo.status().message()));
  CheckResult r;
  r.id = kId;
  std::vector<std::string> bad;
  size_t seen = 0;
  auto look = [&](const std::string& name, const topology::PciDevice& d, bool is_gpu) {
    if (!d.link.known()) return;
    ++seen;
    std::string where = ctx.Where(absl::StrCat("/sys/bus/pci/devices/", d.bdf, "/current_link_*"));
    std::string observed = Describe(d.link);
    if (d.link.width_degraded() || (!is_gpu && d.link.speed_degraded())) {
      bad.push_back(absl::StrCat(name, " (", d.bdf, ") ", observed));
    } else if (is_gpu && d.link.speed_degraded()) {
      observed += " (idle GPUs lower their link speed; width is intact)";
    }
    r.Saw(where, absl::StrCat(name, ": ", observed));
  };
  for (const auto& g : topo->gpus) look(absl::StrCat("GPU", g.index), g.pci, true);
  for (const auto& n : topo->nics) {
    if (n.has_pci) look(n.name, n.pci, false);
  }
  if (seen == 0) {
    return Result(kId, Status::kSkip, "no GPU or PCI RDMA NIC with PCIe link attributes in sysfs");
  }
  if (bad.empty()) {
    r.status = Status::kPass;
    r.summary = absl::StrCat(seen, " device link(s) at full width");
    return r;
  }
  r.status = Status::kFail;
  r.summary = absl::StrCat("degraded PCIe link: ", absl::StrJoin(bad, "; "));
  r.remediation =
      "reseat the card or riser, try another slot, check the BIOS slot bifurcation/link speed "
      "settings and lspci -vv LnkSta vs LnkCap; a NIC at reduced width or speed caps RDMA bandwidth";
  return r;
}

}  // namespace gdrbench::agent::preflight
