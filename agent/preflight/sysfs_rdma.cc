#include "agent/preflight/sysfs_rdma.h"

#include <algorithm>
#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "agent/topology/pci.h"
#include "agent/verbs/device_info.h"

namespace gdrbench::agent::preflight {
namespace {

// sysfs prints "4: ACTIVE" and "5: LinkUp": the code is ibv_port_attr's.
std::string PhysState(const std::string& s) { return verbs::PhysStateName(std::atoi(s.c_str())); }

}  // namespace

uint32_t RoceMtuForNetdevMtu(uint32_t mtu) {
  // GRH 40 + UDP 8 + BTH 12 + extended headers 28 + ICRC 4 + 4 (kernel's sum).
  int usable = static_cast<int>(mtu) - 96;
  for (uint32_t m : {4096u, 2048u, 1024u, 512u, 256u}) {
    if (usable >= static_cast<int>(m)) return m;
  }
  return 0;
}

absl::StatusOr<std::vector<verbs::DeviceInfo>> SysfsRdma::ListDevices(std::string* absent_reason) {
  std::vector<verbs::DeviceInfo> out;
  auto names = fs_.ListDir("/sys/class/infiniband");
  if (!names.ok()) {
    if (absent_reason) {
      *absent_reason = absl::StrCat(fs_.Resolve("/sys/class/infiniband"),
                                    " is absent: the kernel has no RDMA driver loaded");
    }
    return out;
  }
  for (const auto& name : *names) {
    std::string sys = absl::StrCat("/sys/class/infiniband/", name);
    // A dangling link or a symlink loop is no device (a damaged capture).
    if (!fs_.IsDirectory(sys)) continue;
    verbs::DeviceInfo d;
    d.name = name;
    if (auto fw = fs_.ReadLine(sys + "/fw_ver"); fw.ok()) d.firmware_version = *fw;
    if (auto g = fs_.ReadLine(sys + "/node_guid"); g.ok()) d.node_guid = *g;
    d.transport = "InfiniBand";
    if (auto real = fs_.RealPath(sys + "/device"); real.ok()) {
      std::string last = real->substr(real->rfind('/') + 1);
      if (topology::IsBdf(last)) d.pci_bdf = last;
    }
    if (auto numa = fs_.ReadLine(sys + "/device/numa_node"); numa.ok()) {
      (void)absl::SimpleAtoi(*numa, &d.numa_node);
    }
    auto ports = fs_.ListDir(sys + "/ports");
    if (ports.ok()) {
      for (const auto& pn : *ports) {
        std::string psys = absl::StrCat(sys, "/ports/", pn);
        verbs::PortInfo p;
        if (!absl::SimpleAtoi(pn, &p.port_num)) continue;
        if (auto s = fs_.ReadLine(psys + "/state"); s.ok()) p.state = verbs::ParsePortState(*s);
        if (auto s = fs_.ReadLine(psys + "/phys_state"); s.ok()) p.physical_state = PhysState(*s);
        if (auto s = fs_.ReadLine(psys + "/link_layer"); s.ok()) p.link_layer = *s;
        if (auto s = fs_.ReadLine(psys + "/rate"); s.ok()) {
          p.active_rate_gbps = std::strtod(s->c_str(), nullptr);  // "100 Gb/sec (4X EDR)"
        }
        if (auto gids = fs_.ListDir(psys + "/gids"); gids.ok()) {
          for (const auto& gi : *gids) {
            auto gid = fs_.ReadLine(absl::StrCat(psys, "/gids/", gi));
            if (!gid.ok() || *gid == "0000:0000:0000:0000:0000:0000:0000:0000") continue;
            verbs::GidEntry e;
            (void)absl::SimpleAtoi(gi, &e.index);
            e.gid = *gid;
            if (auto t = fs_.ReadLine(absl::StrCat(psys, "/gid_attrs/types/", gi)); t.ok()) e.type = *t;
            if (auto nd = fs_.ReadLine(absl::StrCat(psys, "/gid_attrs/ndevs/", gi)); nd.ok()) {
              e.netdev = *nd;
              if (p.netdev.empty()) p.netdev = *nd;
            }
            p.gids.push_back(std::move(e));
          }
          std::sort(p.gids.begin(), p.gids.end(),
                    [](const auto& a, const auto& b) { return a.index < b.index; });
        }
        if (p.link_layer == "Ethernet" && !p.netdev.empty()) {
          uint32_t mtu = 0;
          if (auto m = fs_.ReadLine(absl::StrCat("/sys/class/net/", p.netdev, "/mtu"));
              m.ok() && absl::SimpleAtoi(*m, &mtu)) {
            p.active_mtu_bytes = RoceMtuForNetdevMtu(mtu);
          }
        }
        d.ports.push_back(std::move(p));
      }
    }
    out.push_back(std::move(d));
  }
  if (out.empty() && absent_reason) {
    *absent_reason = absl::StrCat(fs_.Resolve("/sys/class/infiniband"),
                                  " is empty: no RDMA NIC driver bound");
  }
  return out;
}

absl::StatusOr<bool> SysfsRdma::DmabufRegistrationSupported(const std::string&) {
  return absl::UnavailableError("offline (sysfs only): ibv_reg_dmabuf_mr cannot be probed");
}

}  // namespace gdrbench::agent::preflight
