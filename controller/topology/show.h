// `gdrbench topology show`: the fabric model as text, with what matched the
// inventory. Pure formatting.
#pragma once

#include <string>

#include "controller/topology/fabric.h"
#include "controller/topology/match.h"

namespace gdrbench::controller::topology {

// The tier's name: 0 "host<->leaf", 1 "leaf<->spine", 2 "spine<->core",
// then "tier N".
std::string CableTierName(int tier);

// Switches by tier (each with its description and cable count), cables per
// tier with their rates, untiered cables and why, then, when `match` is
// given, the rails matched, the nodes not found (each with its reason) and
// the host cables without a node.
std::string RenderFabric(const Fabric& fabric, const std::string& source, const Match* match);

}  // namespace gdrbench::controller::topology
