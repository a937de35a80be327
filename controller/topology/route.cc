#include "controller/topology/route.h"

#include <algorithm>
#include <numeric>
#include <tuple>

#include "absl/strings/str_cat.h"

namespace gdrbench::controller::topology {
namespace {

int Find(std::vector<int>& parent, int x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}

}  // namespace

absl::StatusOr<FabricIndex> FabricIndex::Build(const Fabric& fabric) {
  FabricIndex ix;
  std::unordered_map<std::string, int> id_of;
  id_of.reserve(fabric.devices.size());
  for (const auto& [id, d] : fabric.devices) {
    id_of.emplace(id, static_cast<int>(ix.ids_.size()));
    ix.ids_.push_back(id);
  }
  const int n = static_cast<int>(ix.ids_.size());
  HostPorts host_ports(n);
  std::vector<int> host_cable_of(n, -1);
  if (absl::Status st = ix.IndexCables(fabric, id_of, host_ports, host_cable_of); !st.ok()) return st;
  ix.IndexHosts(host_ports, host_cable_of);
  if (ix.host_device_.empty())
    return absl::InvalidArgumentError("the topology has no host<->leaf cable to plan over");
  ix.OrderLeaves();
  ix.CountHostsBelow(fabric, id_of);
  return ix;
}

// Every cable's upper end and tier; each device's up cables in port order
// and its plane (connected component); the host cables.
absl::Status FabricIndex::IndexCables(const Fabric& fabric, const std::unordered_map<std::string, int>& id_of,
                                      HostPorts& host_ports, std::vector<int>& host_cable_of) {
  const int n = static_cast<int>(ids_.size());
  up_.resize(n);
  HostPorts up_by_port(n);  // (lower port, cable)
  std::vector<int> parent(n);
  std::iota(parent.begin(), parent.end(), 0);
  for (size_t i = 0; i < fabric.cables.size(); ++i) {
    const Cable& c = fabric.cables[i];
    for (const std::string* end : {&c.lower.device, &c.upper.device}) {
      if (!id_of.count(*end)) {
        return absl::InvalidArgumentError(
            absl::StrCat(c.where, ": a cable to ", *end, ", a device the topology does not list"));
      }
    }
    const int lo = id_of.at(c.lower.device), hi = id_of.at(c.upper.device);
    cable_upper_.push_back(hi);
    cable_tier_.push_back(c.tier);
    if (c.tier < 0) continue;
    parent[Find(parent, lo)] = Find(parent, hi);
    if (c.tier == 0) {
      if (host_cable_of[lo] >= 0) {
        second_ports_.push_back(static_cast<int>(i));
        continue;
      }
      host_cable_of[lo] = static_cast<int>(i);
      host_ports[hi].emplace_back(c.upper.port, lo);
    } else {
      up_by_port[lo].emplace_back(c.lower.port, static_cast<int>(i));
    }
  }
  for (int d = 0; d < n; ++d) {
    std::sort(up_by_port[d].begin(), up_by_port[d].end());
    for (const auto& [port, cable] : up_by_port[d]) up_[d].push_back(cable);
  }
  component_.resize(n);
  for (int d = 0; d < n; ++d) component_[d] = Find(parent, d);
  return absl::OkStatus();
}

// The leaves and their hosts, in leaf port order.
void FabricIndex::IndexHosts(HostPorts& host_ports, const std::vector<int>& host_cable_of) {
  const int n = static_cast<int>(ids_.size());
  host_pos_.assign(n, -1);
  for (int leaf = 0; leaf < n; ++leaf) {
    if (host_ports[leaf].empty()) continue;
    std::sort(host_ports[leaf].begin(), host_ports[leaf].end());
    leaves_.push_back(leaf);
    auto& list = leaf_hosts_[leaf];
    for (const auto& [port, dev] : host_ports[leaf]) {
      const int h = static_cast<int>(host_device_.size());
      host_pos_[dev] = static_cast<int>(list.size());
      list.push_back(h);
      host_device_.push_back(dev);
      host_leaf_.push_back(leaf);
      host_cable_.push_back(host_cable_of[dev]);
    }
  }
}

// Each leaf's rank among the leaves under its first spine (the ftree key one
// tier up), and the leaves in CA order: by plane, then pod (the first
// spine), then rank in the pod.
void FabricIndex::OrderLeaves() {
  std::unordered_map<int, std::vector<int>> below;
  for (int leaf : leaves_) {
    if (!up_[leaf].empty()) below[cable_upper_[up_[leaf][0]]].push_back(leaf);
  }
  leaf_rank_.assign(ids_.size(), 0);
  for (auto& [spine, leaves] : below) {
    std::sort(leaves.begin(), leaves.end());
    leaves.erase(std::unique(leaves.begin(), leaves.end()), leaves.end());
    for (size_t r = 0; r < leaves.size(); ++r) leaf_rank_[leaves[r]] = static_cast<int>(r);
  }
  auto pod = [&](int leaf) { return up_[leaf].empty() ? leaf : cable_upper_[up_[leaf][0]]; };
  std::sort(leaves_.begin(), leaves_.end(), [&](int a, int b) {
    return std::tuple(component_[a], pod(a), leaf_rank_[a], a) <
           std::tuple(component_[b], pod(b), leaf_rank_[b], b);
  });
}

// Hosts below each switch, climbing every host's up cables breadth-first by tier.
void FabricIndex::CountHostsBelow(const Fabric& fabric, const std::unordered_map<std::string, int>& id_of) {
  hosts_below_.assign(ids_.size(), 0);
  for (int leaf : leaves_) hosts_below_[leaf] = static_cast<int>(leaf_hosts_[leaf].size());
  std::vector<std::vector<int>> by_tier(8);
  for (int i = 0; i < static_cast<int>(cable_tier_.size()); ++i) {
    if (cable_tier_[i] >= 1 && cable_tier_[i] < 8) by_tier[cable_tier_[i]].push_back(i);
  }
  for (int t = 1; t < 8; ++t) {
    std::unordered_map<int, std::vector<int>> children;  // upper -> distinct lowers
    for (int i : by_tier[t]) children[cable_upper_[i]].push_back(id_of.at(fabric.cables[i].lower.device));
    for (auto& [up, lows] : children) {
      std::sort(lows.begin(), lows.end());
      lows.erase(std::unique(lows.begin(), lows.end()), lows.end());
      for (int low : lows) hosts_below_[up] += hosts_below_[low];
    }
  }
}

std::vector<CableUse> FabricIndex::FtreePath(int s, int d) const {
  const int a = host_leaf_[s], b = host_leaf_[d];
  std::vector<CableUse> path{static_cast<CableUse>(host_cable_[s]) * 2};
  const int keys[] = {host_pos_[host_device_[d]], leaf_rank_[b]};
  auto key = [&](int t) { return t < 2 ? keys[t] : 0; };
  // d's canonical climb: the switches (level 0 = b) and the cable taken up from each.
  std::vector<int> canon{b}, canon_cable;
  for (int t = 0, x = b; !up_[x].empty() && t < 8; ++t) {
    const int c = up_[x][key(t) % up_[x].size()];
    canon_cable.push_back(c);
    x = cable_upper_[c];
    canon.push_back(x);
  }
  int x = a;
  for (size_t t = 0;; ++t) {
    if (t < canon.size() && x == canon[t]) {
      for (size_t k = t; k-- > 0;) path.push_back(static_cast<CableUse>(canon_cable[k]) * 2 + 1);
      path.push_back(static_cast<CableUse>(host_cable_[d]) * 2 + 1);
      return path;
    }
    if (up_[x].empty() || t >= 8) return {};
    const int c = up_[x][key(static_cast<int>(t)) % up_[x].size()];
    path.push_back(static_cast<CableUse>(c) * 2);
    x = cable_upper_[c];
  }
}

}  // namespace gdrbench::controller::topology
