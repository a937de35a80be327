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
  ix.up_.resize(n);
  std::vector<std::vector<std::pair<int, int>>> up_by_port(n), host_ports(n);
  std::vector<int> parent(n);
  std::iota(parent.begin(), parent.end(), 0);
  std::vector<int> host_cable_of(n, -1);
  for (size_t i = 0; i < fabric.cables.size(); ++i) {
    const Cable& c = fabric.cables[i];
    for (const std::string* end : {&c.lower.device, &c.upper.device}) {
      if (!id_of.count(*end)) {
        return absl::InvalidArgumentError(
            absl::StrCat(c.where, ": a cable to ", *end, ", a device the topology does not list"));
      }
    }
    const int lo = id_of.at(c.lower.device), hi = id_of.at(c.upper.device);
    ix.cable_upper_.push_back(hi);
    ix.cable_tier_.push_back(c.tier);
    if (c.tier < 0) continue;
    parent[Find(parent, lo)] = Find(parent, hi);
    if (c.tier == 0) {
      if (host_cable_of[lo] >= 0) {
        ix.second_ports_.push_back(static_cast<int>(i));
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
    for (const auto& [port, cable] : up_by_port[d]) ix.up_[d].push_back(cable);
  }
  ix.component_.resize(n);
  for (int d = 0; d < n; ++d) ix.component_[d] = Find(parent, d);
  ix.host_pos_.assign(n, -1);
  for (int leaf = 0; leaf < n; ++leaf) {
    if (host_ports[leaf].empty()) continue;
    std::sort(host_ports[leaf].begin(), host_ports[leaf].end());
    ix.leaves_.push_back(leaf);
    auto& list = ix.leaf_hosts_[leaf];
    for (const auto& [port, dev] : host_ports[leaf]) {
      const int h = static_cast<int>(ix.host_device_.size());
      ix.host_pos_[dev] = static_cast<int>(list.size());
      list.push_back(h);
      ix.host_device_.push_back(dev);
      ix.host_leaf_.push_back(leaf);
      ix.host_cable_.push_back(host_cable_of[dev]);
    }
  }
  if (ix.host_device_.empty()) return absl::InvalidArgumentError("the topology has no host<->leaf cable to plan over");
  // A leaf's rank among the leaves under its first spine (the ftree key one tier up).
  std::unordered_map<int, std::vector<int>> below;
  for (int leaf : ix.leaves_) {
    if (!ix.up_[leaf].empty()) below[ix.cable_upper_[ix.up_[leaf][0]]].push_back(leaf);
  }
  ix.leaf_rank_.assign(n, 0);
  for (auto& [spine, leaves] : below) {
    std::sort(leaves.begin(), leaves.end());
    leaves.erase(std::unique(leaves.begin(), leaves.end()), leaves.end());
    for (size_t r = 0; r < leaves.size(); ++r) ix.leaf_rank_[leaves[r]] = static_cast<int>(r);
  }
  // CA order: by plane, then pod (the first spine), then rank in the pod.
  auto pod = [&](int leaf) { return ix.up_[leaf].empty() ? leaf : ix.cable_upper_[ix.up_[leaf][0]]; };
  std::sort(ix.leaves_.begin(), ix.leaves_.end(), [&](int a, int b) {
    return std::tuple(ix.component_[a], pod(a), ix.leaf_rank_[a], a) <
           std::tuple(ix.component_[b], pod(b), ix.leaf_rank_[b], b);
  });
  // Hosts below each switch, climbing every host's up cables breadth-first by tier.
  ix.hosts_below_.assign(n, 0);
  for (int leaf : ix.leaves_) ix.hosts_below_[leaf] = static_cast<int>(ix.leaf_hosts_[leaf].size());
  std::vector<std::vector<int>> by_tier(8);
  for (int i = 0; i < static_cast<int>(ix.cable_tier_.size()); ++i) {
    if (ix.cable_tier_[i] >= 1 && ix.cable_tier_[i] < 8) by_tier[ix.cable_tier_[i]].push_back(i);
  }
  for (int t = 1; t < 8; ++t) {
    std::unordered_map<int, std::vector<int>> children;  // upper -> distinct lowers
    for (int i : by_tier[t]) children[ix.cable_upper_[i]].push_back(id_of.at(fabric.cables[i].lower.device));
    for (auto& [up, lows] : children) {
      std::sort(lows.begin(), lows.end());
      lows.erase(std::unique(lows.begin(), lows.end()), lows.end());
      for (int low : lows) ix.hosts_below_[up] += ix.hosts_below_[low];
    }
  }
  return ix;
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
