// Which fabric port is which inventory rail. A rail (node N, NIC X) is
// matched to the host device of the topology
//   - whose CA port GUID is the one the caller knows for (N, X) (the agent's
//     GetNodeInfo: the interface id of the port's link-local GID), when known;
//   - else whose node description is "N X" (the IB convention: the host name,
//     a space, the HCA name, as "hxa-gpu01 mlx5_0" or "thing4 HCA-1");
//   - else, for an LLDP fabric (hosts named by system, ports by interface),
//     port X of the device named N, or the port named by X's netdev as the
//     agent reported it (`netdevs`: lldpctl names interfaces by netdev).
// What does not match is reported, never guessed: a rail with no port, a
// fabric host port with no rail ("cables without a node").
//
// Thread safety: pure functions.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "controller/inventory/inventory.h"
#include "controller/topology/fabric.h"

namespace gdrbench::controller::topology {

struct RailPort {
  std::string node;
  size_t rail = 0;
  std::string nic;
  PortRef port;       // the host device and its port (the host<->leaf cable's lower end)
  bool found = false;
  std::string why;    // when !found: "mlx5_3 of gpu07: no port GUID 0x... in the topology (fabric.txt)"
};

struct Match {
  std::vector<RailPort> rails;           // every (node, rail) of the inventory, in order
  std::vector<size_t> cables_without_node;  // indices into Fabric::cables: host<->leaf cables no rail claims
  size_t found() const;
};

// (node, NIC) -> port GUID ("0x..." in any case or padding), where known.
using KnownGuids = std::map<std::pair<std::string, std::string>, std::string>;

// `source` names the topology in the reasons. `netdevs`: (node, NIC) ->
// the netdev of its port (from the agents' GetNodeInfo), same key form.
Match MatchInventory(const Fabric& fabric, const inventory::Inventory& inventory, const std::string& source,
                     const KnownGuids& guids = {}, const KnownGuids& netdevs = {});

}  // namespace gdrbench::controller::topology
