#include "agent/verbs/device_info.h"
#include "agent/verbs/handles.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <infiniband/verbs.h>
#include <net/if.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/limits.h"
#include "common/status.h"

namespace gdrbench::agent::verbs {
namespace {

std::string LinkLayer(uint8_t l) {
  switch (l) {
    case IBV_LINK_LAYER_INFINIBAND: return "InfiniBand";
    case IBV_LINK_LAYER_ETHERNET: return "Ethernet";
    default: return "InfiniBand";  // unspecified means IB by spec
  }
}

uint32_t MtuBytes(ibv_mtu mtu) {
  switch (mtu) {
    case IBV_MTU_256: return 256;
    case IBV_MTU_512: return 512;
    case IBV_MTU_1024: return 1024;
    case IBV_MTU_2048: return 2048;
    case IBV_MTU_4096: return 4096;
    default: return 0;
  }
}

std::string FormatGid(const ibv_gid& gid) {
  std::string out;
  for (int i = 0; i < 16; i += 2) {
    if (i) out += ':';
    out += absl::StrFormat("%02x%02x", gid.raw[i], gid.raw[i + 1]);
  }
  return out;
}

std::string FormatGuid(uint64_t be_guid) {
  uint64_t g = be64toh(be_guid);
  return absl::StrFormat("%04x:%04x:%04x:%04x", (g >> 48) & 0xffff, (g >> 32) & 0xffff,
                         (g >> 16) & 0xffff, g & 0xffff);
}

int PrefixLength(const sockaddr* mask) {
  if (mask == nullptr) return 0;
  const uint8_t* b = nullptr;
  size_t n = 0;
  if (mask->sa_family == AF_INET) {
    b = reinterpret_cast<const uint8_t*>(&reinterpret_cast<const sockaddr_in*>(mask)->sin_addr);
    n = 4;
  } else if (mask->sa_family == AF_INET6) {
    b = reinterpret_cast<const sockaddr_in6*>(mask)->sin6_addr.s6_addr;
    n = 16;
  }
  int bits = 0;
  for (size_t i = 0; i < n; ++i) bits += __builtin_popcount(b[i]);
  return bits;
}

// IPv4 and IPv6 addresses of an interface, from getifaddrs: plain, and with
// their prefix length ("10.0.0.1/24").
// The distinct netdevs of a port's GIDs, port.netdev (the first GID's) first.
std::vector<std::string> PortNetdevs(const PortInfo& port) {
  std::vector<std::string> out;
  if (!port.netdev.empty()) out.push_back(port.netdev);
  for (const GidEntry& g : port.gids) {
    if (!g.netdev.empty() && std::find(out.begin(), out.end(), g.netdev) == out.end()) {
      out.push_back(g.netdev);
    }
  }
  return out;
}

void AddressesOf(const std::string& netdev, std::vector<std::string>* plain,
                 std::vector<std::string>* cidrs) {
  ifaddrs* ifa = nullptr;
  if (getifaddrs(&ifa) != 0) return;
  for (ifaddrs* p = ifa; p != nullptr; p = p->ifa_next) {
    if (p->ifa_addr == nullptr || netdev != p->ifa_name) continue;
    char buf[INET6_ADDRSTRLEN] = {};
    if (p->ifa_addr->sa_family == AF_INET) {
      inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(p->ifa_addr)->sin_addr, buf, sizeof(buf));
    } else if (p->ifa_addr->sa_family == AF_INET6) {
      inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(p->ifa_addr)->sin6_addr, buf,
                sizeof(buf));
    } else {
      continue;
    }
    plain->emplace_back(buf);
    cidrs->push_back(absl::StrCat(buf, "/", PrefixLength(p->ifa_netmask)));
  }
  freeifaddrs(ifa);
}

}  // namespace

std::string PhysStateName(int phys_state) {
  switch (phys_state) {
    case 1: return "SLEEP";
    case 2: return "POLLING";
    case 3: return "DISABLED";
    case 4: return "PORT_CONFIGURATION_TRAINING";
    case 5: return "LINK_UP";
    case 6: return "LINK_ERROR_RECOVERY";
    case 7: return "PHY_TEST";
    default: return absl::StrCat("UNKNOWN(", phys_state, ")");
  }
}

double LaneRateGbps(uint32_t s) {
  switch (s) {
    case 1: return 2.5;     // SDR
    case 2: return 5.0;     // DDR
    case 4: return 10.0;    // QDR (and 10GbE RoCE)
    case 8: return 10.3125; // FDR10
    case 16: return 14.0625;  // FDR
    case 32: return 25.78125; // EDR
    case 64: return 53.125;   // HDR
    case 128: return 106.25;  // NDR
    case 256: return 212.5;   // XDR
    default: return 0;
  }
}

uint32_t WidthLanes(uint32_t w) {
  switch (w) {
    case 1: return 1;
    case 2: return 4;
    case 4: return 8;
    case 8: return 12;
    case 16: return 2;
    default: return 0;
  }
}

namespace {

// The kernel's names for GID types, as sysfs gid_attrs/types/N prints them
// (drivers/infiniband/core/cache.c, gid_type_str[]: IB and RoCE v1 share one).
const char* GidTypeName(uint32_t type) {
  return type == IBV_GID_TYPE_ROCE_V2 ? "RoCE v2" : "IB/RoCE v1";
}

// The device's valid GIDs through ibv_query_gid_table (rdma-core >= 30: one
// UVERBS_METHOD_QUERY_GID_TABLE ioctl, or libibverbs' own sysfs walk on a
// kernel without it); an error when even that fails.
absl::StatusOr<std::vector<ibv_gid_entry>> GidTable(ibv_context* ctx, const std::vector<ibv_port_attr>& ports) {
  size_t max_entries = 0;
  for (const ibv_port_attr& pa : ports) max_entries += static_cast<size_t>(std::max(pa.gid_tbl_len, 0));
  std::vector<ibv_gid_entry> entries(std::max<size_t>(max_entries, 1));
  ssize_t n = ibv_query_gid_table(ctx, entries.data(), entries.size(), 0);
  if (n < 0) return ErrnoToStatus(static_cast<int>(-n), "ibv_query_gid_table");
  entries.resize(static_cast<size_t>(n));
  return entries;
}

void GidsFromTable(const std::vector<ibv_gid_entry>& table, uint32_t port_num, PortInfo* port) {
  std::vector<const ibv_gid_entry*> mine;
  for (const ibv_gid_entry& e : table) {
    if (e.port_num == port_num) mine.push_back(&e);
  }
  std::sort(mine.begin(), mine.end(), [](auto* a, auto* b) { return a->gid_index < b->gid_index; });
  for (const ibv_gid_entry* t : mine) {
    bool zero = std::all_of(std::begin(t->gid.raw), std::end(t->gid.raw), [](uint8_t b) { return b == 0; });
    if (zero) continue;
    GidEntry e;
    e.index = static_cast<int>(t->gid_index);
    e.gid = FormatGid(t->gid);
    e.type = GidTypeName(t->gid_type);
    char name[IF_NAMESIZE] = {};
    if (t->ndev_ifindex != 0 && if_indextoname(t->ndev_ifindex, name) != nullptr) {
      e.netdev = name;
      if (port->netdev.empty()) port->netdev = e.netdev;
    }
    port->gids.push_back(std::move(e));
  }
}

// The same one index at a time, the type and netdev from sysfs.
void GidsByIndex(ibv_context* ctx, const FsRoot& fs, const std::string& psys, uint32_t p, int gid_tbl_len,
                 PortInfo* port) {
  for (int g = 0; g < gid_tbl_len; ++g) {
    ibv_gid gid{};
    if (ibv_query_gid(ctx, p, g, &gid) != 0) continue;
    bool zero = std::all_of(std::begin(gid.raw), std::end(gid.raw),
                            [](uint8_t b) { return b == 0; });
    if (zero) continue;
    GidEntry e;
    e.index = g;
    e.gid = FormatGid(gid);
    if (auto t = fs.ReadLine(absl::StrCat(psys, "/gid_attrs/types/", g)); t.ok()) {
      e.type = *t;
    }
    if (auto nd = fs.ReadLine(absl::StrCat(psys, "/gid_attrs/ndevs/", g)); nd.ok()) {
      e.netdev = *nd;
      if (port->netdev.empty()) port->netdev = *nd;
    }
    port->gids.push_back(std::move(e));
  }
}

// One port: its state, link, MTUs, GIDs (from `gid_table`, else one index
// at a time) and the addresses of the netdevs its GIDs sit on.
PortInfo DescribePort(ibv_context* ctx, const FsRoot& fs, const std::string& sys, uint32_t p,
                      const ibv_port_attr& pa, const absl::StatusOr<std::vector<ibv_gid_entry>>& gid_table) {
  PortInfo port;
  port.port_num = p;
  port.state = PortStateFromIbv(pa.state);
  port.physical_state = PhysStateName(pa.phys_state);
  port.link_layer = LinkLayer(pa.link_layer);
  port.active_width_lanes = WidthLanes(pa.active_width);
  double lane = LaneRateGbps(pa.active_speed);
  port.active_speed = absl::StrFormat("%.1f Gbps", lane);
  port.active_rate_gbps = lane * port.active_width_lanes;
  port.active_mtu_bytes = MtuBytes(pa.active_mtu);
  port.max_mtu_bytes = MtuBytes(pa.max_mtu);
  port.lid = pa.lid;
  std::string psys = absl::StrCat(sys, "/ports/", p);
  if (gid_table.ok()) {
    GidsFromTable(*gid_table, p, &port);
  } else {
    GidsByIndex(ctx, fs, psys, p, pa.gid_tbl_len, &port);
  }
  // Every netdev the port's GIDs sit on (the base device first, then its
  // VLAN or macvlan netdevs), so a GID of a VLAN carries its address and
  // prefix too.
  for (const std::string& nd : PortNetdevs(port)) {
    AddressesOf(nd, &port.ip_addresses, &port.ip_cidrs);
  }
  return port;
}

// One device: firmware, GUID, PCI function, NUMA node and every port.
absl::StatusOr<DeviceInfo> DescribeDevice(const FsRoot& fs, ibv_device* dev, const std::string& name) {
  ContextPtr ctx(ibv_open_device(dev));
  if (!ctx) {
    return ErrnoToStatus(errno, absl::StrCat("ibv_open_device(", name, ")"));
  }
  ibv_device_attr attr{};
  if (int rc = ibv_query_device(ctx.get(), &attr); rc != 0) {
    return ErrnoToStatus(rc, absl::StrCat("ibv_query_device(", name, ")"));
  }
  DeviceInfo d;
  d.name = name;
  d.firmware_version = attr.fw_ver;
  d.node_guid = FormatGuid(ibv_get_device_guid(dev));
  d.transport = dev->transport_type == IBV_TRANSPORT_IWARP ? "iWARP" : "InfiniBand";
  std::string sys = absl::StrCat("/sys/class/infiniband/", name);
  if (auto real = fs.RealPath(sys + "/device"); real.ok()) {
    std::string last = real->substr(real->rfind('/') + 1);
    // A PCI function looks like 0000:17:00.0; rxe has no PCI parent.
    if (std::count(last.begin(), last.end(), ':') == 2 && absl::StrContains(last, ".")) {
      d.pci_bdf = last;
    }
  }
  if (auto numa = fs.ReadLine(sys + "/device/numa_node"); numa.ok()) {
    (void)absl::SimpleAtoi(*numa, &d.numa_node);
  }
  std::vector<ibv_port_attr> attrs(attr.phys_port_cnt);
  for (uint32_t p = 1; p <= attr.phys_port_cnt; ++p) {
    if (int rc = ibv_query_port(ctx.get(), p, &attrs[p - 1]); rc != 0) {
      return ErrnoToStatus(rc, absl::StrCat("ibv_query_port(", name, ", ", p, ")"));
    }
  }
  // Every valid GID of the device in one call (a port's table is up to
  // 1024 entries on rxe, 255 on mlx5 RoCE: one ioctl against as many).
  const absl::StatusOr<std::vector<ibv_gid_entry>> gid_table = GidTable(ctx.get(), attrs);
  for (uint32_t p = 1; p <= attr.phys_port_cnt; ++p) {
    d.ports.push_back(DescribePort(ctx.get(), fs, sys, p, attrs[p - 1], gid_table));
  }
  return d;
}

}  // namespace

absl::StatusOr<std::vector<DeviceInfo>> ListDevices(const FsRoot& fs,
                                                    const std::vector<std::string>& only,
                                                    std::string* absent_reason) {
  int n = 0;
  DeviceListPtr list(ibv_get_device_list(&n));
  std::vector<DeviceInfo> out;
  std::vector<std::string> seen;
  if (list == nullptr) {
    int err = errno;
    if (absent_reason) {
      *absent_reason = absl::StrCat(
          "no RDMA devices: ibv_get_device_list failed (", std::strerror(err),
          "); the kernel has no RDMA support loaded (ib_uverbs and a NIC driver such as mlx5_ib)");
    }
    n = 0;
  }
  for (int i = 0; i < n; ++i) {
    ibv_device* dev = list.get()[i];
    std::string name = ibv_get_device_name(dev);
    seen.push_back(name);
    if (!only.empty() && std::find(only.begin(), only.end(), name) == only.end()) continue;
    absl::StatusOr<DeviceInfo> d = DescribeDevice(fs, dev, name);
    if (!d.ok()) return d.status();
    out.push_back(std::move(*d));
  }
  for (const auto& want : only) {
    if (std::find(seen.begin(), seen.end(), want) == seen.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "RDMA device '", want, "' does not exist on this node (present: ",
          seen.empty() ? "none" : absl::StrJoin(seen, ", "), ")"));
    }
  }
  if (out.empty() && absent_reason && absent_reason->empty()) {
    *absent_reason = fs.Exists("/sys/class/infiniband")
                         ? "no RDMA devices: /sys/class/infiniband is empty (no NIC driver bound)"
                         : "no RDMA devices: /sys/class/infiniband is absent (the kernel has no "
                           "RDMA support loaded)";
  }
  return out;
}

std::string RdmaCoreVersion(const FsRoot& fs) {
  auto status = fs.ReadFile("/var/lib/dpkg/status", limits::kMaxPackageDbBytes);
  if (!status.ok()) return "";
  for (absl::string_view block : absl::StrSplit(*status, "\n\n")) {
    if (!absl::StartsWith(block, "Package: libibverbs1\n")) continue;
    for (absl::string_view line : absl::StrSplit(block, '\n')) {
      if (absl::ConsumePrefix(&line, "Version: ")) return std::string(line);
    }
  }
  return "";
}

}  // namespace gdrbench::agent::verbs
