// rdma_port_active: every port of every RDMA device is PORT_ACTIVE with its
// physical link up. A port that is down FAILs on a GPU rail and WARNs on a
// NIC that is not one (a storage or in-band port the sweep does not use).
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/preflight/checks.h"

namespace gdrbench::agent::preflight {

CheckResult CheckRdmaPortActive(Context& ctx) {
  const char* kId = "rdma_port_active";
  const auto& devs = ctx.RdmaDevices();
  if (!devs.ok() || devs->empty()) {
    return Result(kId, Status::kSkip, "no RDMA device (see rdma_devices)");
  }
  CheckResult r;
  r.id = kId;
  std::vector<std::string> down;
  Status worst = Status::kPass;
  bool init_on_ib = false;
  size_t ports = 0;
  std::vector<std::string> unknown;  // no port listed, or a state not readable
  for (const auto& d : *devs) {
    if (d.ports.empty()) {
      unknown.push_back(absl::StrCat(d.name, " (no port listed)"));
      r.Saw(absl::StrCat(ctx.rdma().source(), "(", d.name, ")"), "no port listed");
    }
    for (const auto& p : d.ports) {
      ++ports;
      std::string where = absl::StrCat(d.name, " port ", p.port_num);
      const bool unread = p.state == verbs::PortState::kUnread;
      const std::string state = verbs::PortStateName(p.state);
      r.Saw(absl::StrCat(ctx.rdma().source(), "(", d.name, ", ", p.port_num, ")"),
            absl::StrCat(unread ? "state not readable" : state, ", ", p.physical_state, ", ", p.link_layer,
                         p.active_rate_gbps > 0 ? absl::StrCat(", ", p.active_rate_gbps, " Gb/s") : ""));
      if (unread) {
        unknown.push_back(absl::StrCat(where, " (state not readable)"));
      } else if (p.state != verbs::PortState::kActive) {
        down.push_back(absl::StrCat(where, " ", state, "/", p.physical_state, NotRailNote(ctx, d.name)));
        worst = Worse(worst, StrictNic(ctx, d.name) ? Status::kFail : Status::kWarn);
        if (p.state == verbs::PortState::kInit && p.link_layer == "InfiniBand") init_on_ib = true;
      }
    }
  }
  if (down.empty() && !unknown.empty()) {
    r.status = Status::kWarn;
    r.summary = absl::StrCat("cannot tell whether every port is active: ", absl::StrJoin(unknown, ", "));
    r.remediation = "ibv_devinfo -d <dev> (every RDMA device has at least one port; sysfs: "
                    "/sys/class/infiniband/<dev>/ports/)";
    return r;
  }
  if (down.empty()) {  // every listed port read PORT_ACTIVE
    r.status = Status::kPass;
    r.summary = absl::StrCat("all ", ports, " port(s) PORT_ACTIVE");
    return r;
  }
  r.status = worst;
  r.summary = absl::StrCat("port(s) not active: ", absl::StrJoin(down, ", "),
                           unknown.empty() ? "" : absl::StrCat("; not readable: ", absl::StrJoin(unknown, ", ")));
  r.remediation =
      init_on_ib
          ? "PORT_INIT on InfiniBand: the link is up but no subnet manager configured it: start "
            "opensm on a node or the managed switch (systemctl start opensm), then sminfo"
          : "check the cable, transceiver and switch port (ibstat / ethtool <netdev>, switch "
            "logs); for RoCE bring the netdev up (ip link set <netdev> up); a DISABLED port needs "
            "ibportstate enable or the switch side enabled";
  if (worst == Status::kFail) {
    absl::StrAppend(&r.remediation,
                    ". A port that is unused on purpose but shares a GPU's PCIe switch is a rail by "
                    "proximity: name the agent's NICs with --devices (or the inventory's rails) to "
                    "leave it out");
  }
  return r;
}

}  // namespace gdrbench::agent::preflight
