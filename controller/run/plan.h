// Plan: the resolved nodes (rails, link rates, exclusions), the schedule and
// the sweep parameters of one run. Built once before the first test; its
// fingerprint ties a journal to it. Plain data, not synchronized.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "controller/inventory/inventory.h"
#include "controller/run/fabric_paths.h"
#include "controller/schedule/schedule.h"
#include "gdrbench/v1/sweep.pb.h"

namespace gdrbench::controller::run {

struct PlanNode {
  std::string name;
  std::string address;
  std::vector<inventory::Rail> rails;   // resolved: from the inventory or the agent
  std::vector<double> rail_gbps;        // link rate per rail; 0 = unknown
  bool excluded = false;                // left out of the sweep (preflight FAIL, unreachable)
  std::string excluded_reason;
};

struct Plan {
  std::vector<PlanNode> nodes;
  // host | hugepage | gpu | gpu-staged, or a list of them ("host,gpu":
  // every test once per kind, memory_kinds.h)
  std::string memory = "host";
  schedule::ScheduleOptions schedule_options;
  schedule::Schedule schedule;
  v1::SweepParams params;
  std::string fingerprint;
  // Unique per MakePlan in this process (a copy keeps it: the retest's plan
  // runs the same params). `params` do not change after MakePlan: the pair
  // tester keeps its requests' copy of them from test to test by this id.
  uint64_t id = 0;
  // --mode cover | shift: the cables each test crosses (null in other modes).
  std::shared_ptr<const FabricPaths> fabric;
};

// Builds the schedule over `nodes` (excluded nodes keep their slots: their
// tests become SKIPPED cells). INVALID_ARGUMENT when memory is gpu* and a
// rail of a node not excluded has no GPU (a list that names gpu* too), or as BuildSchedule.
absl::StatusOr<Plan> MakePlan(std::vector<PlanNode> nodes, const std::string& memory,
                              const schedule::ScheduleOptions& options,
                              const v1::SweepParams& params);

// The scheduler's view: rail -> GPU index when the memory lives on the GPU.
std::vector<schedule::NodeShape> Shapes(const std::vector<PlanNode>& nodes,
                                        const std::string& memory);

// The memory spec an endpoint asks its agent for: "host", "gpu:3", ...
// (for a list, its first kind's)
std::string EndpointMemory(const PlanNode& node, uint32_t rail, const std::string& memory);

// Whether any kind of a --memory list lives on a GPU (gpu, gpu-staged).
bool AnyGpuKind(absl::string_view memory);

// A stable 64-bit FNV-1a digest (hex) of everything that decides which tests
// run and how: nodes, addresses, rails, memory, schedule options, parameters.
std::string Fingerprint(const Plan& plan);

// Rails resolved from inventory nodes without an agent (dry run): nodes that
// discover their rails get one rail with an empty NIC ("auto").
std::vector<PlanNode> NodesFromInventory(const inventory::Inventory& inventory);

}  // namespace gdrbench::controller::run
