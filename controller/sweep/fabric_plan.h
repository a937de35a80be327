// --mode cover | shift on a real sweep: the fabric plan (controller/
// topology/cover.h) made over the sweep's nodes, its flows turned into the
// schedule's tests, and the cables each test crosses kept beside the plan
// (run::FabricPaths) for the dry run's JSON, the run's coverage and the
// counters.
//
//   sweep::FabricInput in;                      // the CLI loads it from --topology
//   in.fabric = *topology::LoadTopology(path, "auto", hosts);
//   in.source = path;
//   config.fabric = std::make_shared<const sweep::FabricInput>(std::move(in));
//   config.schedule.mode = schedule::Mode::kCover;
//   // RunSweep / PlanWithoutAgents plan on it (PlanOnFabric below).
//
// Rails are matched to host ports by MatchInventory (topology/match.h): by
// the port GUID an agent reported (the interface id of its port's link-local
// GID, InfiniBand), else the node description "NODE NIC", else (LLDP) port
// NIC or the agent's netdev of NIC on the host named NODE. A flow with an
// end that matched no rail is not run; the cables it would have covered
// are reported with the reason, never silently lost.
//
// Thread safety: pure functions over immutable inputs.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "controller/run/fabric_paths.h"
#include "controller/run/plan.h"
#include "controller/schedule/schedule.h"
#include "controller/sweep/cable_counters.h"
#include "controller/topology/cover.h"
#include "controller/topology/fabric.h"
#include "controller/topology/match.h"
#include "controller/topology/route.h"
#include "gdrbench/v1/node.pb.h"
#include "gdrbench/v1/run.pb.h"

namespace gdrbench::controller::sweep {

// The topology a cover or shift sweep plans on.
struct FabricInput {
  topology::Fabric fabric;
  std::string source;  // the file or directory, for messages and the run
  topology::Routing routing = topology::Routing::kFtree;
  double ecmp_confidence = 0.99;
  int max_rounds = 64;
};

// What the plan was made over, kept for the isolation after the first
// pass: the fabric (FabricInput's: it must outlive this), its index, the
// match, and host <-> (node, rail) for the host ports a rail claims.
struct FabricRun {
  const topology::Fabric* fabric = nullptr;
  topology::FabricIndex index;
  topology::Match match;                       // against FabricInput.fabric (ports are the same)
  std::vector<int> host_node, host_rail;       // per index host; -1: no rail claims it
  std::map<std::pair<int, int>, int> host_of;  // (node, rail) -> host
  schedule::Test TestOf(int src_host, int dst_host) const;
  int HostOf(uint32_t node, uint32_t rail) const;  // -1: not a host port of the plan
};

struct FabricSchedule {
  std::vector<std::vector<schedule::Test>> rounds;  // for ScheduleOptions::planned
  std::shared_ptr<const run::FabricPaths> paths;    // cables indexed as FabricInput.fabric's
  std::shared_ptr<const FabricRun> run;
};

// What the agents told about their ports, for matching: (node, NIC) ->
// port GUID (InfiniBand ports: the link-local GID's interface id) and ->
// netdev (RoCE). `infos` and `nodes` are in the plan's order; a node whose
// agent did not answer adds nothing.
struct AgentPorts {
  topology::KnownGuids guids;
  topology::KnownGuids netdevs;
};
AgentPorts PortsFromAgents(const std::vector<run::PlanNode>& nodes, const std::vector<v1::NodeInfo>& infos);

// The plan over `nodes` (their resolved rails). INVALID_ARGUMENT for a mode
// other than cover and shift, shift under ecmp, a topology the index
// rejects, or no rail of any node matched (each unmatched rail's reason,
// the first few named).
absl::StatusOr<FabricSchedule> PlanOnFabric(const FabricInput& input, schedule::Mode mode,
                                            const std::vector<run::PlanNode>& nodes,
                                            const AgentPorts& ports = {});

// "node01 mlx5_0" for a host port a rail matched (`rails`: the matched
// ports' names, RailNames), else the device's description (or id) and
// port: "leaf1 port swp3", "S-0ff0... port 17".
using RailNames = std::map<topology::PortRef, std::string>;
RailNames RailNamesOf(const topology::Match& match);
std::string PortName(const topology::Fabric& fabric, const topology::PortRef& port,
                     const RailNames* rails = nullptr);

// The plan's coverage before anything runs, for the dry run: per tier
// "host<->leaf: 8 / 8 cables planned", then each cable the plan leaves out
// with why (at most `limit`, then "... and N more").
std::vector<std::string> PlannedCoverageLines(std::shared_ptr<const run::FabricPaths> paths, size_t limit);

// Which planned cables a completed (OK) test crossed: call Measured for
// every OK result of a planned test, then Coverage for the run.
class CoverageTally {
 public:
  explicit CoverageTally(std::shared_ptr<const run::FabricPaths> paths);
  // `payload_bytes`: what the test moved (its sizes x measured iterations),
  // added to each of its cables in the direction it crossed it.
  void Measured(const schedule::Test& t, uint64_t payload_bytes);
  const std::vector<CableLoad>& loads() const { return loads_; }
  // The run's coverage: per tier the cables, those planned and those a
  // completed test crossed; every cable not measured with why (not planned:
  // the plan's reason; planned but its tests did not complete: "its flows
  // did not complete (node03 left out ...)" as `why_not_run` says).
  v1::FabricCoverage Coverage() const;

 private:
  std::shared_ptr<const run::FabricPaths> paths_;
  std::vector<char> planned_, measured_;
  std::vector<CableLoad> loads_;
};

}  // namespace gdrbench::controller::sweep
