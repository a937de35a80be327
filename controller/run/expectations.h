// The controller's half of the fleet expectations (inventory/expectations.h):
// GPU count, rail count, link rate and state per rail, read from a node's
// GetNodeInfo answer. The agent's preflight checks the other half
// (versions, firmware, MTU) through PreflightExpectations. Pure; thread-safe.
#pragma once

#include <vector>

#include "controller/inventory/expectations.h"
#include "controller/inventory/inventory.h"
#include "gdrbench/v1/node.pb.h"
#include "gdrbench/v1/preflight.pb.h"

namespace gdrbench::controller::run {

inline constexpr char kExpectationsCheck[] = "fleet_expectations";

// A check result with id "fleet_expectations": PASS naming what was
// checked, or FAIL listing every miss ("7 GPUs, expected 8; rail 3 mlx5_5
// at 200 Gb/s, expected at least 400") with a remedy. `rails` are the node's
// resolved rails (inventory or agent). Not called when nothing is expected.
v1::CheckResult CheckExpectations(const inventory::Expectations& expect, const v1::NodeInfo& info,
                                  const std::vector<inventory::Rail>& rails);

// The agent's half, as the RunPreflight request carries it.
v1::PreflightExpectations AgentExpectations(const inventory::Expectations& expect);

}  // namespace gdrbench::controller::run
