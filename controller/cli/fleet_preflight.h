// `gdrbench preflight --inventory FILE | --agents LIST | --hostlist EXPR`:
// every node's preflight in parallel, printed as one nodes x checks table,
// the findings grouped by check (the same finding on many nodes once), and
// the fleet's uniformity (versions that differ, the odd nodes out).
// --json: {"nodes": [...], "uniformity": [...]} with each node's v1
// PreflightReport. Exit 1 when a node FAILs a check or does not answer.
#pragma once

#include <string>
#include <vector>

#include "controller/cli/commands.h"
#include "controller/sweep/sweep.h"

namespace gdrbench::controller::cli {

// One row per node: its name, the agent's host, one status letter per check
// (P pass, W warn, F fail, S skip, - not run), the overall status; the check
// ids under the table, numbered as the columns. Checks in first-seen order.
std::string FormatFleetTable(const sweep::FleetPreflight& fleet);

// FAIL and WARN findings grouped by (check, status, summary): "FAIL mtu on
// a, b: <summary> -> fix: <remedy>". Empty when there is none.
std::string FormatFleetFindings(const sweep::FleetPreflight& fleet);

std::string FleetPreflightJson(const sweep::FleetPreflight& fleet);

struct FleetPreflightOptions {
  CommonOptions common;
  std::string inventory, agents, hostlist;  // exactly one
  int port = inventory::kDefaultAgentPort;
  uint32_t parallel = sweep_limits::kDefaultParallel;
  inventory::Expectations expect;           // the --expect-* flags: over the inventory's expect:
};

int FleetPreflightCommand(const FleetPreflightOptions& options);

}  // namespace gdrbench::controller::cli
