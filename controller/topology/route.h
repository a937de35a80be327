// The fabric as integer indices, and the path a flow takes under a stated
// routing assumption. Built once per plan; read-only afterwards (safe to
// share across threads).
//
// ftree (OpenSM's fat-tree engine, destination-based up/down routing): a
// destination's traffic climbs from every leaf on the same uplink index,
// chosen by the destination's position: at a leaf, uplink
// (pos(d) mod uplinks) where pos(d) is d's rank among its leaf's host ports
// by port number; at a spine, uplink (rank(leaf(d)) mod uplinks) where
// rank is the leaf's rank among the leaves under its first spine. Traffic
// for d descends along d's own climb ("canonical path") from the first
// switch where the two meet. This is the property OpenSM documents: shift
// permutations in CA order run without two flows on one link direction.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "controller/topology/fabric.h"

namespace gdrbench::controller::topology {

// A cable crossed in one direction: cable index * 2 + (1 when downward).
using CableUse = uint32_t;
inline uint32_t CableOf(CableUse u) { return u >> 1; }
inline bool Downward(CableUse u) { return (u & 1) != 0; }

class FabricIndex {
 public:
  // INVALID_ARGUMENT when no host has a host<->leaf cable, or a cable names
  // a device the fabric does not list.
  static absl::StatusOr<FabricIndex> Build(const Fabric& fabric);

  int hosts() const { return static_cast<int>(host_device_.size()); }
  const std::string& HostId(int h) const { return ids_[host_device_[h]]; }
  int LeafOf(int h) const { return host_leaf_[h]; }        // a device index
  int HostCable(int h) const { return host_cable_[h]; }    // a cable index
  int Component(int h) const { return component_[host_leaf_[h]]; }
  int DeviceComponent(int d) const { return component_[d]; }
  const std::vector<int>& LeafHosts(int leaf) const { return leaf_hosts_.at(leaf); }  // by leaf port
  const std::vector<int>& Leaves() const { return leaves_; }  // every leaf, by component then device order
  const std::vector<int>& Up(int device) const { return up_[device]; }  // up cables by port number
  int Upper(int cable) const { return cable_upper_[cable]; }
  int Tier(int cable) const { return cable_tier_[cable]; }
  int cables() const { return static_cast<int>(cable_upper_.size()); }
  const std::vector<int>& SecondPortCables() const { return second_ports_; }
  int HostsBelow(int device) const { return hosts_below_[device]; }
  int devices() const { return static_cast<int>(ids_.size()); }
  const std::string& DeviceId(int d) const { return ids_[d]; }

  // The cables (with direction) of a flow from host s to host d under
  // ftree, host cables included. Empty when the climb from s's leaf reaches
  // the top without meeting d's canonical path (not a fat tree ftree covers).
  std::vector<CableUse> FtreePath(int s, int d) const;

 private:
  // Build's steps, in order. The host cables found, per leaf: (leaf port,
  // host device); per device, the index of its first host cable (-1: none).
  using HostPorts = std::vector<std::vector<std::pair<int, int>>>;
  absl::Status IndexCables(const Fabric& fabric, const std::unordered_map<std::string, int>& id_of,
                           HostPorts& host_ports, std::vector<int>& host_cable_of);
  void IndexHosts(HostPorts& host_ports, const std::vector<int>& host_cable_of);
  void OrderLeaves();
  void CountHostsBelow(const Fabric& fabric, const std::unordered_map<std::string, int>& id_of);

  std::vector<std::string> ids_;
  std::vector<int> host_device_, host_leaf_, host_cable_, host_pos_;
  std::unordered_map<int, std::vector<int>> leaf_hosts_;
  std::vector<int> leaves_, leaf_rank_, component_, hosts_below_;
  std::vector<std::vector<int>> up_;
  std::vector<int> cable_upper_, cable_tier_, second_ports_;
};

}  // namespace gdrbench::controller::topology
