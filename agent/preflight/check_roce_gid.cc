// roce_gid: a RoCE (Ethernet link layer) port needs a RoCE v2 GID derived from
// a routable address (IPv4-mapped ::ffff:a.b.c.d or a global IPv6); the
// link-local fe80:: GID alone does not cross a router and rdma_cm cannot
// resolve it. FAIL on a GPU rail, WARN on a NIC that is not one (a storage
// port without an IP address has no RoCE v2 GID and needs none).
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/preflight/checks.h"

namespace gdrbench::agent::preflight {

CheckResult CheckRoceGid(Context& ctx) {
  const char* kId = "roce_gid";
  const auto& devs = ctx.RdmaDevices();
  if (!devs.ok() || devs->empty()) return Result(kId, Status::kSkip, "no RDMA device (see rdma_devices)");
  CheckResult r;
  r.id = kId;
  std::vector<std::string> lacking;
  Status worst = Status::kPass;
  size_t roce_ports = 0;
  std::vector<std::string> unknown;  // ports whose link layer could not be read
  for (const auto& d : *devs) {
    for (const auto& p : d.ports) {
      if (p.link_layer.empty()) {
        unknown.push_back(absl::StrCat(d.name, " port ", p.port_num));
        r.Saw(absl::StrCat(ctx.Where("/sys/class/infiniband/"), d.name, "/ports/", p.port_num, "/link_layer"),
              "not readable");
        continue;
      }
      if (p.link_layer != "Ethernet") continue;
      ++roce_ports;
      std::string best;
      for (const auto& g : p.gids) {
        if (g.type != "RoCE v2" || absl::StartsWith(g.gid, "fe80:")) continue;
        best = absl::StrCat("index ", g.index, " ", g.gid, g.netdev.empty() ? "" : " on " + g.netdev);
        break;
      }
      r.Saw(absl::StrCat(ctx.Where("/sys/class/infiniband/"), d.name, "/ports/", p.port_num, "/gids"),
            best.empty() ? absl::StrCat(p.gids.size(), " GID(s), no routable RoCE v2 one")
                         : absl::StrCat("RoCE v2 ", best));
      if (best.empty()) {
        lacking.push_back(absl::StrCat(d.name, " port ", p.port_num,
                                       p.netdev.empty() ? "" : " (" + p.netdev + ")",
                                       NotRailNote(ctx, d.name)));
        worst = Worse(worst, StrictNic(ctx, d.name) ? Status::kFail : Status::kWarn);
      }
    }
  }
  if (roce_ports == 0 && unknown.empty()) return Result(kId, Status::kSkip, "no RoCE port (InfiniBand link layer only)");
  if (!lacking.empty()) {
    r.status = worst;
    r.summary = absl::StrCat("no routable RoCE v2 GID on ", absl::StrJoin(lacking, ", "));
    r.remediation =
        "give the port's netdev an IPv4 or global IPv6 address (ip addr add <ip>/<len> dev "
        "<netdev>; persist it in netplan/NetworkManager); the RoCE v2 GID appears with it. "
        "Check the RoCE mode too: cma_roce_mode -d <dev> -p 1 -m 2";
    return r;
  }
  if (!unknown.empty()) {
    // Unknown is not "InfiniBand": such a port may be RoCE without a GID.
    r.status = Status::kWarn;
    r.summary = absl::StrCat("cannot tell whether ", absl::StrJoin(unknown, ", "),
                             " need a RoCE v2 GID: link layer not readable",
                             roce_ports == 0 ? "" : absl::StrCat(" (", roce_ports, " RoCE port(s) have one)"));
    r.remediation = "ibv_devinfo -d <dev> (link_layer), or read /sys/class/infiniband/<dev>/ports/<n>/link_layer";
    return r;
  }
  r.status = Status::kPass;
  r.summary = absl::StrCat("all ", roce_ports, " RoCE port(s) have a routable RoCE v2 GID");
  return r;
}

}  // namespace gdrbench::agent::preflight
