// pcie_link_degraded: every GPU and RDMA NIC trained its PCIe link at the
// width and speed it is capable of.
//   - A narrower link is a fault (bad slot, riser, card seating): FAIL.
//   - A NIC below its maximum speed is a fault: NICs do not lower their link
//     speed when idle. FAIL on a GPU rail, WARN on a NIC that is not one.
//   - A GPU below its maximum speed is either idle (GPUs lower their link
//     speed to save power) or degraded. Live, the GPU is put under a short
//     load (device-to-host copies, ~100 ms) and current_link_speed is read
//     again during it: degraded only if it stays low. Offline the two cannot
//     be told apart: WARN "idle or degraded: run live to tell".
#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "agent/preflight/checks.h"

namespace gdrbench::agent::preflight {
namespace {

constexpr absl::Duration kLoad = absl::Milliseconds(100);

std::string Describe(const topology::PciLink& l) {
  return absl::StrFormat("x%d @ %g GT/s (max x%d @ %g GT/s)", l.current_width, l.current_gts,
                         l.max_width, l.max_gts);
}

// The CUDA index of the GPU at `bdf`, -1 when the driver does not list it.
int CudaIndex(Context& ctx, const std::string& bdf) {
  const auto& gpus = ctx.CudaGpus();
  if (!gpus.ok()) return -1;
  for (const auto& g : *gpus) {
    if (absl::AsciiStrToLower(g.device.pci_bdf) == absl::AsciiStrToLower(bdf)) return g.device.index;
  }
  return -1;
}

struct UnderLoad {
  absl::Status status;  // UNAVAILABLE offline
  double max_gts = 0;   // the highest current_link_speed read during the load
  int reads = 0;
  std::string how;
};

// Loads GPU `bdf` and reads its current_link_speed while the copies run.
UnderLoad MeasureUnderLoad(Context& ctx, const topology::PciDevice& gpu) {
  UnderLoad u;
  if (ctx.gpu_load() == nullptr) {
    u.status = absl::UnavailableError("no GPU load in this run");
    return u;
  }
  int index = CudaIndex(ctx, gpu.bdf);
  if (index < 0) {
    const auto& gpus = ctx.CudaGpus();
    u.status = gpus.ok() ? absl::NotFoundError(absl::StrCat("the CUDA driver does not list ", gpu.bdf))
                         : gpus.status();
    return u;
  }
  std::string speed_file = absl::StrCat("/sys/bus/pci/devices/", gpu.bdf, "/current_link_speed");
  auto load = ctx.gpu_load()->RunWhile(index, kLoad, [&] {
    if (auto s = ctx.fs().ReadLine(speed_file); s.ok()) {
      u.max_gts = std::max(u.max_gts, topology::ParseLinkSpeed(*s));
      ++u.reads;
    }
  });
  if (!load.ok()) {
    u.status = load.status();
    return u;
  }
  u.how = absl::StrFormat("%s: %.1f GB in %.0f ms, %d reads of current_link_speed", load->method,
                          load->bytes / 1e9, load->seconds * 1e3, u.reads);
  return u;
}

// What the links checked so far showed.
struct LinkFindings {
  Status worst = Status::kPass;
  std::vector<std::string> bad, unsure, idle;
  size_t seen = 0;
};

std::string LinkWhere(Context& ctx, const topology::PciDevice& d) {
  return ctx.Where(absl::StrCat("/sys/bus/pci/devices/", d.bdf, "/current_link_*"));
}

// One GPU's link: narrow is degraded; slow (or every link, when asked) is
// read again under load, since an idle GPU saves power by slowing its link.
void CheckGpuLink(Context& ctx, const topology::Gpu& g, LinkFindings& f, CheckResult& r) {
  const topology::PciLink& l = g.pci.link;
  if (!l.known()) return;
  ++f.seen;
  std::string name = absl::StrCat("GPU", g.index, " (", g.pci.bdf, ") ", Describe(l));
  std::string observed = absl::StrCat("GPU", g.index, ": ", Describe(l));
  bool low_speed = l.speed_degraded();
  if (l.width_degraded()) {
    f.bad.push_back(name);
    f.worst = Worse(f.worst, Status::kFail);
  } else if (low_speed || ctx.load_all_gpu_links()) {
    UnderLoad u = MeasureUnderLoad(ctx, g.pci);
    if (absl::IsUnavailable(u.status) && low_speed) {
      absl::StrAppend(&observed, "; idle or degraded: run live to tell (", u.status.message(), ")");
      f.unsure.push_back(name);
      f.worst = Worse(f.worst, Status::kWarn);
    } else if (!u.status.ok()) {
      absl::StrAppend(&observed, "; could not load the GPU: ", u.status.message());
      if (low_speed) {
        f.unsure.push_back(name);
        f.worst = Worse(f.worst, Status::kWarn);
      }
    } else if (u.max_gts >= l.max_gts) {
      absl::StrAppend(&observed, absl::StrFormat("; under load %g GT/s = max (%s)%s", u.max_gts, u.how,
                                                 low_speed ? ": idle power saving, not a fault" : ""));
      if (low_speed) f.idle.push_back(absl::StrCat("GPU", g.index));
    } else {
      absl::StrAppend(&observed, absl::StrFormat("; under load still %g GT/s of %g (%s): degraded", u.max_gts,
                                                 l.max_gts, u.how));
      f.bad.push_back(absl::StrFormat("%s, %g GT/s under load", name, u.max_gts));
      f.worst = Worse(f.worst, Status::kFail);
    }
  }
  r.Saw(LinkWhere(ctx, g.pci), observed);
}

}  // namespace

CheckResult CheckPcieLinkDegraded(Context& ctx) {
  const char* kId = "pcie_link_degraded";
  const auto& topo = ctx.Topo();
  if (!topo.ok()) return Result(kId, Status::kSkip, std::string(topo.status().message()));
  CheckResult r;
  r.id = kId;
  LinkFindings f;
  for (const auto& g : topo->gpus) CheckGpuLink(ctx, g, f, r);
  for (const auto& n : topo->nics) {
    if (!n.has_pci || !n.pci.link.known()) continue;
    ++f.seen;
    const topology::PciLink& l = n.pci.link;
    r.Saw(LinkWhere(ctx, n.pci), absl::StrCat(n.name, ": ", Describe(l)));
    if (l.width_degraded() || l.speed_degraded()) {
      f.bad.push_back(absl::StrCat(n.name, " (", n.pci.bdf, ") ", Describe(l), NotRailNote(ctx, n.name)));
      f.worst = Worse(f.worst, StrictNic(ctx, n.name) ? Status::kFail : Status::kWarn);
    }
  }
  if (f.seen == 0) {
    return Result(kId, Status::kSkip, "no GPU or PCI RDMA NIC with PCIe link attributes in sysfs");
  }
  r.status = f.worst;
  if (f.worst == Status::kPass) {
    r.summary = absl::StrCat(f.seen, " device link(s) at full width and speed",
                             f.idle.empty() ? ""
                                            : absl::StrCat(" (", absl::StrJoin(f.idle, ", "),
                                                           " idle at rest, at full speed under load)"));
    return r;
  }
  std::vector<std::string> parts;
  if (!f.bad.empty()) parts.push_back(absl::StrCat("degraded PCIe link: ", absl::StrJoin(f.bad, "; ")));
  if (!f.unsure.empty()) {
    parts.push_back(absl::StrCat("GPU link below its maximum speed, idle or degraded (run live to tell): ",
                                 absl::StrJoin(f.unsure, "; ")));
  }
  r.summary = absl::StrJoin(parts, "; ");
  r.remediation =
      f.bad.empty()
          ? "run the preflight live on the node (gdrbench-agent preflight, or the RunPreflight RPC): it "
            "loads the GPU for 100 ms and reads the link again; an idle GPU returns to full speed"
          : "reseat the card or riser, try another slot, check the BIOS slot bifurcation/link speed "
            "settings and lspci -vv LnkSta vs LnkCap; a link at reduced width or speed caps RDMA bandwidth";
  return r;
}

}  // namespace gdrbench::agent::preflight
