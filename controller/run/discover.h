// Nodes found by DNS (`--agents dns:NAME`, an inventory `dns:` entry) are
// known only by address. Their agents name them: each one's GetNodeInfo
// hostname becomes the node's name, so reports, blame and `gdrbench drain`
// speak of hosts, not pod IPs. A node reached under two addresses (a
// dual-stack Service has an A and an AAAA record per pod) answers with the
// same hostname and devices twice and is kept once, at its first address.
// Thread safety: call from one thread; it fans out internally.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "controller/inventory/inventory.h"
#include "controller/run/agent_api.h"

namespace gdrbench::controller::run {

// Asks every name_from_agent node's agent (`agents[i]` serves node i) for its
// node info, `parallelism` at a time, renames the node to its hostname and
// drops the repeated addresses of one agent. An agent that does not answer
// keeps its address as its name (the probe then reports it unreachable).
// Returns the indexes of the nodes kept, in order; `inventory` holds them.
// INVALID_ARGUMENT when two different agents report one hostname with the
// same devices (two machines with one hostname) or a hostname that another
// inventory node already has.
absl::StatusOr<std::vector<size_t>> NameDiscoveredNodes(inventory::Inventory* inventory,
                                                        const std::vector<AgentApi*>& agents,
                                                        uint32_t parallelism);

}  // namespace gdrbench::controller::run
