// rdma_port_active: every port of every RDMA device is PORT_ACTIVE with its
// physical link up.
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
  bool init_on_ib = false;
  size_t ports = 0;
  for (const auto& d : *devs) {
    for (const auto& p : d.ports) {
      ++ports;
      std::string where = absl::StrCat(d.name, " port ", p.port_num);
      r.Saw(absl::StrCat(ctx.rdma().source(), "(", d.name, ", ", p.port_num, ")"),
            absl::StrCat(NormalizePortState(p.state), ", ", p.physical_state, ", ", p.link_layer,
                         p.active_rate_gbps > 0 ? absl::StrCat(", ", p.active_rate_gbps, " Gb/s") : ""));
      std::string state = NormalizePortState(p.state);
      if (state != "PORT_ACTIVE") {
        down.push_back(absl::StrCat(where, " ", state, "/", p.physical_state));
        if (state == "PORT_INIT" && p.link_layer == "InfiniBand") init_on_ib = true;
      }
    }
  }
  if (down.empty()) {
    r.status = Status::kPass;
    r.summary = absl::StrCat("all ", ports, " port(s) PORT_ACTIVE");
    return r;
  }
  r.status = Status::kFail;
  r.summary = absl::StrCat("port(s) not active: ", absl::StrJoin(down, ", "));
  r.remediation =
      init_on_ib
          ? "PORT_INIT on InfiniBand: the link is up but no subnet manager configured it: start "
            "opensm on a node or the managed switch (systemctl start opensm), then sminfo"
          : "check the cable, transceiver and switch port (ibstat / ethtool <netdev>, switch "
            "logs); for RoCE bring the netdev up (ip link set <netdev> up); a DISABLED port needs "
            "ibportstate enable or the switch side enabled";
  return r;
}

}  // namespace gdrbench::agent::preflight
