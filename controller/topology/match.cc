#include "controller/topology/match.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"

namespace gdrbench::controller::topology {
namespace {

struct Index {
  std::map<std::string, std::string> by_port_guid;    // port GUID -> host device id
  std::map<std::string, std::string> by_description;  // "node nic" -> host device id
  std::map<std::string, PortRef> host_cable_end;      // host device id -> its port on a tier-0 cable
  std::map<PortRef, size_t> tier0_cable;              // that port -> the cable's index
};

Index BuildIndex(const Fabric& fabric) {
  Index ix;
  for (const auto& [id, d] : fabric.devices) {
    if (d.kind != DeviceKind::kHost) continue;
    if (!d.port_guid.empty()) ix.by_port_guid[d.port_guid] = id;
    if (!d.description.empty()) ix.by_description[d.description] = id;
  }
  for (size_t i = 0; i < fabric.cables.size(); ++i) {
    const Cable& c = fabric.cables[i];
    if (c.tier != 0) continue;
    ix.host_cable_end.emplace(c.lower.device, c.lower);
    ix.tier0_cable[c.lower] = i;
  }
  return ix;
}

// Port X of LLDP device N (ports named by interface).
bool ByPortName(const Fabric& fabric, const std::string& node, const std::string& nic, RailPort& r) {
  auto d = fabric.devices.find(node);
  if (d == fabric.devices.end() || d->second.kind != DeviceKind::kHost) return false;
  for (const auto& [number, name] : d->second.port_names) {
    if (name == nic) {
      r.port = PortRef{node, number};
      return true;
    }
  }
  return false;
}

void MatchRail(const Fabric& fabric, const Index& ix, const std::string& source, const KnownGuids& guids,
               const KnownGuids& netdevs, RailPort& r) {
  const std::string who = absl::StrCat(r.nic, " of ", r.node);
  if (auto g = guids.find({r.node, r.nic}); g != guids.end()) {
    const std::string guid = NormalizeGuid(g->second);
    auto it = ix.by_port_guid.find(guid);
    if (it == ix.by_port_guid.end()) {
      r.why = absl::StrCat(who, ": no port GUID ", guid.empty() ? g->second : guid, " in the topology (", source, ")");
      return;
    }
    r.port = ix.host_cable_end.count(it->second) ? ix.host_cable_end.at(it->second) : PortRef{it->second, 1};
    r.found = true;
    return;
  }
  if (auto it = ix.by_description.find(absl::StrCat(r.node, " ", r.nic)); it != ix.by_description.end()) {
    r.port = ix.host_cable_end.count(it->second) ? ix.host_cable_end.at(it->second) : PortRef{it->second, 1};
    r.found = true;
    return;
  }
  if (ByPortName(fabric, r.node, r.nic, r)) {
    r.found = true;
    return;
  }
  const auto netdev = netdevs.find({r.node, r.nic});
  if (netdev != netdevs.end() && ByPortName(fabric, r.node, netdev->second, r)) {
    r.found = true;
    return;
  }
  if (r.nic.empty()) {
    r.why = absl::StrCat("rail ", r.rail, " of ", r.node,
                         ": the inventory names no NIC (rails discovered from the agent cannot be matched offline)");
    return;
  }
  r.why = absl::StrCat(who, ": no HCA described '", r.node, " ", r.nic, "' and no port ", r.nic,
                       netdev != netdevs.end() ? absl::StrCat(" or ", netdev->second) : "", " of a host ",
                       r.node, " in the topology (", source, ")");
}

}  // namespace

size_t Match::found() const {
  size_t n = 0;
  for (const RailPort& r : rails) n += r.found ? 1 : 0;
  return n;
}

Match MatchInventory(const Fabric& fabric, const inventory::Inventory& inventory, const std::string& source,
                     const KnownGuids& guids, const KnownGuids& netdevs) {
  const Index ix = BuildIndex(fabric);
  Match m;
  std::set<PortRef> claimed;
  for (const inventory::Node& node : inventory.nodes) {
    if (node.rails.empty()) {
      RailPort rp;
      rp.node = node.name;
      rp.why = absl::StrCat(node.name, ": the inventory lists no rails (they are discovered from its agent): "
                                       "nothing to match without the agent");
      m.rails.push_back(std::move(rp));
    }
    for (size_t r = 0; r < node.rails.size(); ++r) {
      RailPort rp;
      rp.node = node.name;
      rp.rail = r;
      rp.nic = node.rails[r].nic;
      MatchRail(fabric, ix, source, guids, netdevs, rp);
      if (rp.found) claimed.insert(rp.port);
      m.rails.push_back(std::move(rp));
    }
  }
  for (const auto& [port, index] : ix.tier0_cable) {
    if (!claimed.count(port)) m.cables_without_node.push_back(index);
  }
  std::sort(m.cables_without_node.begin(), m.cables_without_node.end());
  return m;
}

}  // namespace gdrbench::controller::topology
