// FakeCluster: N in-process fake agents behind AgentApi, for unit tests and
// the controller-at-scale bench, in gdrbench_controller_run_testing (no
// shipped binary links it). Tests take zero time; the bandwidth of a test
// comes from a settable model of (src node, dst node, NIC). Failures are
// settable per node: the agent down (every RPC UNAVAILABLE), OpenTarget
// failing, a preflight status. Counts every RPC and the targets left open.
// Thread safety: RPCs may be called concurrently; setters before the run.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "controller/inventory/inventory.h"
#include "controller/run/agent_api.h"
#include "controller/run/plan.h"

namespace gdrbench::controller::run {

class FakeCluster {
 public:
  using BandwidthModel = std::function<double(uint32_t src, uint32_t dst, const std::string& nic)>;

  // Node i is "node<i>" at "fake<i>:1", with `rails` NICs "nic<r>" (rail r ->
  // GPU r) whose ports are ACTIVE at `link_gbps`. Default model: 0.95 x link.
  FakeCluster(uint32_t nodes, uint32_t rails, double link_gbps);
  ~FakeCluster();

  AgentApi* agent(uint32_t i);
  // The inventory's nodes for these agents, in their order: "node<i>" at
  // "fake<i>:1" (what agents() answers to).
  std::vector<inventory::Node> InventoryNodes() const;
  std::vector<AgentApi*> agents();
  // The plan of a sweep over these agents: the inventory's nodes probed
  // through `via` (default: agents()) as a sweep probes them, then MakePlan.
  absl::StatusOr<Plan> PlanFor(const v1::SweepParams& params, const std::string& memory = "host",
                               const schedule::ScheduleOptions& options = {},
                               const std::vector<AgentApi*>& via = {});
  uint32_t size() const { return static_cast<uint32_t>(agents_.size()); }

  void SetBandwidth(BandwidthModel model) { model_ = std::move(model); }
  // A factor on the model per memory spec of the initiator's sweep ("host",
  // "gpu:0", ...): --memory lists measure each kind (default 1).
  using MemoryFactor = std::function<double(uint32_t src, uint32_t dst, const std::string& memory)>;
  void SetMemoryFactor(MemoryFactor factor) { memory_factor_ = std::move(factor); }
  // A down agent answers every call with `why` (default: UNAVAILABLE,
  // "connection refused").
  void SetDown(uint32_t node, bool down, absl::Status why = absl::OkStatus());
  void SetOpenTargetError(uint32_t node, absl::Status status);
  void SetPreflight(uint32_t node, v1::CheckStatus status);
  // Edits what node's GetNodeInfo answers (hostname, versions, GPUs, ports);
  // its preflight report carries the edited hostname.
  void EditNodeInfo(uint32_t node, std::function<void(v1::NodeInfo&)> edit);
  // The initiator's port counters of a test from src to dst (its
  // summary's counters, as a real agent samples them around the test);
  // unset: none.
  using CountersModel = std::function<void(uint32_t src, uint32_t dst, v1::PortCounters* counters)>;
  void SetInitiatorCounters(CountersModel model) { counters_ = std::move(model); }
  // Sizes reported by each sweep (default: one, 65536 B).
  void SetSizes(std::vector<uint64_t> sizes) { sizes_ = std::move(sizes); }
  // Honour OpenTarget's hold_start as a real agent does (default: answer
  // start_held false, as an agent without it): a sweep with wait_for_start
  // sends nothing until ConnectTarget with start, and fails when its target
  // is closed first, its call is stopped (StreamStop) or its timeout passes.
  void SetHoldsStart(bool holds) { holds_start_ = holds; }
  // Held targets not started and not closed.
  size_t held_targets() const;

  // Sums over the agents (each counts its own calls: one counter shared by
  // every agent was written by both threads of the controller bench several
  // times per test, its cache line passed between the cores every time).
  uint64_t sweeps() const;
  int64_t open_targets() const;
  uint64_t rpcs() const;

 private:
  class Agent;
  friend class Agent;
  std::vector<std::unique_ptr<Agent>> agents_;
  uint32_t rails_;
  double link_gbps_;
  BandwidthModel model_;
  MemoryFactor memory_factor_;
  CountersModel counters_;
  std::vector<uint64_t> sizes_ = {65536};
  bool holds_start_ = false;
  // The held targets' states, shared by the agents (a target's start comes
  // to its own agent, its sweep runs on the initiator's).
  struct Holds;
  std::unique_ptr<Holds> holds_;
};

}  // namespace gdrbench::controller::run
