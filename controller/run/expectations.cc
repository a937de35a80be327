#include "controller/run/expectations.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "controller/run/port_state.h"

namespace gdrbench::controller::run {
namespace {

const v1::NicInfo* FindNic(const v1::NodeInfo& info, const std::string& device) {
  for (const auto& n : info.nics()) {
    if (n.device() == device) return &n;
  }
  return nullptr;
}

// The rail's port: the first active one, else the first.
const v1::RdmaPort* RailPort(const v1::NicInfo& nic) {
  for (const auto& p : nic.ports()) {
    if (PortStateOf(p) == v1::PORT_STATE_ACTIVE) return &p;
  }
  return nic.ports().empty() ? nullptr : &nic.ports(0);
}

void CheckRails(const inventory::Expectations& e, const v1::NodeInfo& info,
                const std::vector<inventory::Rail>& rails, std::vector<std::string>* misses,
                std::vector<std::string>* fixes) {
  bool link_fix = false, state_fix = false;
  for (size_t r = 0; r < rails.size(); ++r) {
    const std::string& dev = rails[r].nic;
    if (dev.empty()) continue;  // the agent's choice, unknown here
    const v1::NicInfo* nic = FindNic(info, dev);
    const v1::RdmaPort* port = nic ? RailPort(*nic) : nullptr;
    if (port == nullptr) {
      misses->push_back(absl::StrCat("rail ", r, " ", dev, " is absent"));
      continue;
    }
    if (!e.link_state.empty() && PortStateOf(*port) != PortStateFromName(e.link_state)) {
      misses->push_back(absl::StrCat("rail ", r, " ", dev, " port ", port->port_num(), " is ",
                                     PortStateText(*port), ", expected ", e.link_state));
      state_fix = true;
    }
    if (e.link_gbps && port->active_rate_gbps() + 1e-9 < *e.link_gbps) {
      misses->push_back(absl::StrFormat("rail %zu %s at %g Gb/s, expected at least %g", r, dev,
                                        port->active_rate_gbps(), *e.link_gbps));
      link_fix = true;
    }
  }
  if (state_fix) {
    fixes->push_back("bring the port up: check the cable and the switch port (ibstat, "
                     "ip link), and on InfiniBand that a subnet manager runs");
  }
  if (link_fix) {
    fixes->push_back("find why the link trained below its rate: reseat or replace the cable or "
                     "transceiver, check the switch port's speed settings (ibstat shows the rate)");
  }
}

}  // namespace

v1::CheckResult CheckExpectations(const inventory::Expectations& e, const v1::NodeInfo& info,
                                  const std::vector<inventory::Rail>& rails) {
  std::vector<std::string> misses, fixes, checked;
  if (e.gpus) {
    checked.push_back(absl::StrCat(*e.gpus, " GPUs"));
    if (static_cast<uint32_t>(info.gpus_size()) != *e.gpus) {
      misses.push_back(absl::StrCat(info.gpus_size(), " GPUs, expected ", *e.gpus,
                                    info.gpus_size() == 0 && !info.gpus_absent_reason().empty()
                                        ? absl::StrCat(" (", info.gpus_absent_reason(), ")")
                                        : ""));
      fixes.push_back("nvidia-smi -L lists the GPUs the driver sees; a missing one has fallen off "
                      "the bus (dmesg: Xid 79) or is held by another driver");
    }
  }
  if (e.rails) {
    checked.push_back(absl::StrCat(*e.rails, " rails"));
    if (rails.size() != *e.rails) {
      misses.push_back(absl::StrCat(rails.size(), " rails, expected ", *e.rails));
      fixes.push_back("ibv_devinfo lists the RDMA devices; name the rails in the inventory "
                      "(rails:) or find the NIC that is missing or down");
    }
  }
  if (e.link_gbps) checked.push_back(absl::StrCat("links at >= ", *e.link_gbps, " Gb/s"));
  if (!e.link_state.empty()) checked.push_back(absl::StrCat("ports ", e.link_state));
  CheckRails(e, info, rails, &misses, &fixes);

  v1::CheckResult r;
  r.set_id(kExpectationsCheck);
  if (misses.empty()) {
    r.set_status(v1::CHECK_STATUS_PASS);
    r.set_summary(absl::StrCat("as expected: ", absl::StrJoin(checked, ", ")));
    return r;
  }
  r.set_status(v1::CHECK_STATUS_FAIL);
  r.set_summary(absl::StrCat("missed the fleet's expectations: ", absl::StrJoin(misses, "; ")));
  r.set_remediation(absl::StrJoin(fixes, "; "));
  return r;
}

v1::PreflightExpectations AgentExpectations(const inventory::Expectations& e) {
  v1::PreflightExpectations p;
  p.set_nvidia_driver(e.nvidia_driver);
  p.set_cuda_driver(e.cuda_driver);
  p.set_rdma_core(e.rdma_core);
  p.set_ofed(e.ofed);
  p.set_hca_firmware(e.hca_firmware);
  p.set_min_mtu_bytes(e.min_mtu_bytes);
  return p;
}

}  // namespace gdrbench::controller::run
