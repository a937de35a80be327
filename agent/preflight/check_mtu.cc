// mtu: the RDMA path MTU. RoCE derives it from the netdev MTU (4096 needs a
// netdev MTU of at least 4200, jumbo frames in practice); InfiniBand gets it
// from the subnet manager's partition. Below 4096 costs bandwidth at large
// messages; below a pinned minimum is a failure on a GPU rail (a WARN on a
// NIC that is not one).
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/preflight/checks.h"

namespace gdrbench::agent::preflight {

CheckResult CheckMtu(Context& ctx) {
  const char* kId = "mtu";
  const auto& devs = ctx.RdmaDevices();
  if (!devs.ok() || devs->empty()) return Result(kId, Status::kSkip, "no RDMA device (see rdma_devices)");
  uint32_t want = ctx.expect().min_mtu_bytes;
  CheckResult r;
  r.id = kId;
  std::vector<std::string> below_pin, below_max;
  bool pin_strict = false;
  bool roce = false;
  size_t known = 0;
  for (const auto& d : *devs) {
    for (const auto& p : d.ports) {
      std::string name = absl::StrCat(d.name, " port ", p.port_num);
      std::string netdev_mtu;
      if (!p.netdev.empty()) {
        if (auto m = ctx.fs().ReadLine(absl::StrCat("/sys/class/net/", p.netdev, "/mtu")); m.ok()) {
          netdev_mtu = absl::StrCat(", ", p.netdev, " mtu ", *m);
        }
      }
      r.Saw(absl::StrCat(ctx.rdma().source(), "(", d.name, ", ", p.port_num, ")"),
            p.active_mtu_bytes == 0 ? absl::StrCat("active MTU unknown", netdev_mtu)
                                    : absl::StrCat("active MTU ", p.active_mtu_bytes, netdev_mtu));
      if (p.active_mtu_bytes == 0) continue;
      ++known;
      roce = roce || p.link_layer == "Ethernet";
      if (want > 0 && p.active_mtu_bytes < want) {
        below_pin.push_back(absl::StrCat(name, " ", p.active_mtu_bytes, NotRailNote(ctx, d.name)));
        pin_strict = pin_strict || StrictNic(ctx, d.name);
      } else if (p.active_mtu_bytes < 4096) {
        below_max.push_back(absl::StrCat(name, " ", p.active_mtu_bytes));
      }
    }
  }
  if (known == 0) return Result(kId, Status::kSkip, "no port reports an active MTU");
  std::string fix =
      roce ? "raise the netdev MTU end to end (ip link set <netdev> mtu 9000, and the switch "
             "ports); RoCE then uses 4096"
           : "set the partition MTU to 4096 on the subnet manager (opensm partitions.conf: "
             "mtu=5) and restart it";
  if (!below_pin.empty()) {
    r.status = pin_strict ? Status::kFail : Status::kWarn;
    r.summary = absl::StrCat("active MTU below the pinned ", want, ": ", absl::StrJoin(below_pin, ", "));
    r.remediation = fix;
  } else if (!below_max.empty()) {
    r.status = Status::kWarn;
    r.summary = absl::StrCat("active MTU below 4096: ", absl::StrJoin(below_max, ", "));
    r.remediation = fix;
  } else {
    r.status = Status::kPass;
    r.summary = want > 0 ? absl::StrCat("every port at or above the pinned ", want)
                         : "every port at MTU 4096";
  }
  return r;
}

}  // namespace gdrbench::agent::preflight
