// The phase before the first pair test: every agent is asked, in parallel,
// for its node info (rails and link rates when the inventory does not give
// them) and runs its preflight. A node whose preflight FAILs, or whose agent
// does not answer, is left out (PlanNode::excluded with the reason) unless
// `force`; an agent without a preflight (UNIMPLEMENTED) is kept and the gap
// recorded as a SKIP report. Nothing here aborts: the outcome is data.
// Thread safety: call from one thread; it fans out internally.
#pragma once

#include <vector>

#include "controller/inventory/expectations.h"
#include "controller/inventory/inventory.h"
#include "controller/run/agent_api.h"
#include "controller/run/cancel.h"
#include "controller/run/plan.h"
#include "gdrbench/v1/preflight.pb.h"

namespace gdrbench::controller::run {

struct ProbeOptions {
  bool preflight = true;
  // Which NICs of a node whose inventory entry has no rails get tested:
  // false (default) its GPU rails (GetNodeInfo's rail map: each GPU's
  // nearest NIC, agent/topology "Rail NICs"); true every NIC with an active
  // port, the rails first, the others (storage, in-band) with no GPU, so
  // with host memory (`gdrbench sweep --nics all`).
  bool all_nics = false;
  bool force = false;                  // keep nodes whose preflight FAILed
  uint32_t parallelism = 32;
  v1::PreflightExpectations expectations;  // the agent's half, sent with RunPreflight
  // The controller's half (GPU and rail count, link rate and state), checked
  // from GetNodeInfo even without a preflight: a miss is a FAIL check
  // "fleet_expectations" in the node's report and leaves it out (unless force).
  inventory::Expectations expect;
  // Once cancelled, no further agent is asked (those in flight finish within
  // their RPC deadlines); the result is then incomplete. Not owned; may be null.
  const CancelToken* cancel = nullptr;
};

struct ProbeResult {
  std::vector<PlanNode> nodes;                 // inventory order
  std::vector<v1::NodeInfo> infos;             // per node; empty hostname = unreachable
  std::vector<v1::PreflightReport> preflight;  // per node; hostname = the node's inventory name
};

// `agents[i]` serves inventory node i.
ProbeResult ProbeNodes(const inventory::Inventory& inventory, const std::vector<AgentApi*>& agents,
                       const ProbeOptions& options);

// The rails of a node from its agent's report: the rail map (NIC -> GPU,
// GPU rails only) when it has one, else every NIC with an active port; with
// `all_nics`, the other active NICs too, after the rails, without a GPU.
// Restricted to the agent's owned devices. Exposed for tests.
std::vector<inventory::Rail> RailsFromNodeInfo(const v1::NodeInfo& info, bool all_nics = false);
// The active rate of `nic`'s first active port, 0 when unknown.
double LinkRateGbps(const v1::NodeInfo& info, const std::string& nic);

}  // namespace gdrbench::controller::run
