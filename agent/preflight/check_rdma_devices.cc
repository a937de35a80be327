// rdma_devices: at least one RDMA device is visible.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/preflight/checks.h"

namespace gdrbench::agent::preflight {

CheckResult CheckRdmaDevices(Context& ctx) {
  const char* kId = "rdma_devices";
  const auto& devs = ctx.RdmaDevices();
  std::string source = ctx.rdma().source();
  if (!devs.ok()) {
    return Result(kId, Status::kFail,
                  absl::StrCat("cannot list RDMA devices: ", devs.status().message()),
                  "check dmesg for the NIC driver (mlx5_core/mlx5_ib) and that ib_uverbs is loaded")
        .Saw(source, std::string(devs.status().message()));
  }
  if (devs->empty()) {
    return Result(kId, Status::kFail, "no RDMA device on this node",
                  "install rdma-core and load the NIC's RDMA driver (modprobe mlx5_ib ib_uverbs; "
                  "MLNX_OFED/DOCA: /etc/init.d/openibd restart); ibv_devinfo must list the NIC. "
                  "In a container, pass /dev/infiniband (--device=/dev/infiniband or the RDMA "
                  "device plugin)")
        .Saw(source, ctx.RdmaAbsentReason());
  }
  std::vector<std::string> names;
  CheckResult r;
  for (const auto& d : *devs) {
    names.push_back(d.name);
    r.Saw(source, absl::StrCat(d.name, d.pci_bdf.empty() ? " (software)" : " at " + d.pci_bdf,
                               ", ", d.ports.size(), " port(s)",
                               d.firmware_version.empty() ? "" : ", fw " + d.firmware_version));
  }
  r.id = kId;
  r.status = Status::kPass;
  r.summary = absl::StrCat(devs->size(), " RDMA device(s): ", absl::StrJoin(names, ", "));
  return r;
}

}  // namespace gdrbench::agent::preflight
