// The sweep's set-up: the config resolved and checked, the agents'
// clients, DNS-discovered nodes named, and the fleet preflight.
#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status.h"
#include "controller/analysis/verdicts.h"
#include "controller/run/discover.h"
#include "controller/run/expectations.h"
#include "controller/run/memory_kinds.h"
#include "controller/run/probe.h"
#include "controller/sweep/sweep_internal.h"
#include "spdlog/spdlog.h"

namespace gdrbench::controller::sweep {
namespace internal {
namespace {

// The inventory's qos: for what the params leave unset (a flag or the
// request's params win). Its service level cannot go over rdma_cm.
absl::Status ApplyInventoryQos(const inventory::Inventory& inv, v1::SweepParams* p) {
  if (!p->has_sl() && inv.qos.sl) {
    if (*inv.qos.sl != 0 && p->cm() == v1::CONNECTION_MODE_RDMA_CM) {
      return absl::InvalidArgumentError(absl::StrCat(
          inv.source, ": qos.sl ", *inv.qos.sl,
          " with rdma_cm: rdma_cm takes the service level from the "
          "path (InfiniBand) or the traffic class (RoCE); connect out of band, or give the service level 0"));
    }
    p->set_sl(*inv.qos.sl);
  }
  if (!p->has_tclass() && inv.qos.tclass) p->set_tclass(*inv.qos.tclass);
  return absl::OkStatus();
}

}  // namespace

std::string WhyEveryPair(const run::Plan& plan) {
  if (plan.schedule_options.mode == schedule::Mode::kIncast) {
    return "--mode incast groups every pair by its target (analysis/incast.h)";
  }
  if (absl::StrContains(plan.memory, ',')) {
    return "a --memory list judges each pair's memory halves (analysis/gdr.h)";
  }
  return "";
}

bool HasDiscovered(const inventory::Inventory& inv) {
  return std::any_of(inv.nodes.begin(), inv.nodes.end(),
                     [](const inventory::Node& n) { return n.name_from_agent; });
}

absl::Status NameDiscovered(const SweepConfig& c, inventory::Inventory* inv,
                            std::vector<run::AgentApi*>* agents) {
  if (!HasDiscovered(*inv)) return absl::OkStatus();
  GDR_ASSIGN_OR_RETURN(std::vector<size_t> kept, run::NameDiscoveredNodes(inv, *agents, c.parallel));
  std::vector<run::AgentApi*> named;
  for (size_t i : kept) named.push_back((*agents)[i]);
  *agents = std::move(named);
  if (inv->nodes.size() < 2 && c.schedule.mode != schedule::Mode::kPairs) {
    std::vector<std::string> found;
    for (const auto& n : inv->nodes) found.push_back(absl::StrCat(n.name, " at ", n.address));
    return absl::InvalidArgumentError(absl::StrCat(inv->source, ": a sweep needs at least 2 nodes, got ",
                                                   inv->nodes.size(), " (", absl::StrJoin(found, ", "), ")"));
  }
  return absl::OkStatus();
}

v1::PreflightExpectations MergedAgentExpectations(const inventory::Expectations& inv,
                                                  const v1::PreflightExpectations& config) {
  v1::PreflightExpectations e = run::AgentExpectations(inv);
  v1::PreflightExpectations over = config;
  over.clear_rail_nics();
  e.MergeFrom(over);  // proto3 MergeFrom: set (non-empty) scalars win
  for (const auto& nic : config.rail_nics()) e.add_rail_nics(nic);
  return e;
}

absl::StatusOr<Resolved> Resolve(const SweepConfig& c) {
  auto bad = [](auto... parts) { return absl::InvalidArgumentError(absl::StrCat(parts...)); };
  Resolved r;
  r.inventory = c.inventory;
  const size_t n = r.inventory.nodes.size();
  if (n == 0) return bad(r.inventory.source, ": no nodes");
  if (n < 2 && c.schedule.mode != schedule::Mode::kPairs && !HasDiscovered(r.inventory)) {
    return bad(r.inventory.source, ": a sweep needs at least 2 nodes, got ", n);
  }
  if (!(c.link_gbps >= 0)) return bad("link rate ", c.link_gbps, " Gb/s: give 0 (the agents') or more");
  if (c.link_gbps > 0) {
    for (auto& node : r.inventory.nodes) node.link_gbps = c.link_gbps;
  }
  r.memory = c.memory.empty() ? r.inventory.memory : c.memory;
  // One kind, or a list run kind by kind on every pair (run/memory_kinds.h).
  GDR_ASSIGN_OR_RETURN(std::vector<std::string> kinds, run::SplitMemoryKinds(r.memory));
  for (const std::string& k : kinds) {
    if (k != "host" && k != "hugepage" && k != "gpu" && k != "gpu-staged") {
      return bad("memory: expected host, hugepage, gpu or gpu-staged, or a list of them (host,gpu), got '",
                 r.memory, "'");
    }
  }
  if (!c.agents.empty() && c.agents.size() != n) {
    return bad(c.agents.size(), " agents given for ", n, " inventory nodes");
  }
  if (c.parallel == 0) return bad("parallel must be at least 1");
  r.params = c.params;
  GDR_RETURN_IF_ERROR(ApplyInventoryQos(r.inventory, &r.params));
  if (r.params.sizes_bytes().empty()) return bad("no message sizes");
  if (r.params.qps() == 0) return bad("qps must be at least 1");
  r.params.set_memory(r.memory);
  r.params.set_bidirectional(c.schedule.bidirectional);
  const v1::VerdictPolicy& p = c.policy;
  for (double f :
       {p.min_fraction_of_link(), p.fleet_min_drop(), p.baseline_tolerance(), p.max_retransmit_fraction()}) {
    if (!(f >= 0 && f <= 1)) return bad("verdict policy: fractions must be within 0 .. 1, got ", f);
  }
  if (!(p.mad_k() >= 0)) return bad("verdict policy: mad_k must be >= 0");
  if (!(p.min_gpu_host_ratio() >= 0 && p.min_gpu_host_ratio() <= 1)) {
    return bad("verdict policy: min_gpu_host_ratio must be within 0 .. 1, got ", p.min_gpu_host_ratio());
  }
  return r;
}

absl::StatusOr<run::Plan> MakeSweepPlan(const SweepConfig& c, std::vector<run::PlanNode> nodes,
                                        const std::string& memory, const v1::SweepParams& params,
                                        const std::vector<v1::NodeInfo>* infos,
                                        std::shared_ptr<const FabricRun>* fabric_run) {
  schedule::ScheduleOptions options = c.schedule;
  std::shared_ptr<const run::FabricPaths> paths;
  if (schedule::FabricMode(options.mode)) {
    if (c.fabric == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("--mode ", schedule::ModeName(options.mode),
                                                     " plans on the fabric's cables: give --topology"));
    }
    const AgentPorts ports = infos != nullptr ? PortsFromAgents(nodes, *infos) : AgentPorts{};
    GDR_ASSIGN_OR_RETURN(FabricSchedule fs, PlanOnFabric(*c.fabric, options.mode, nodes, ports));
    options.planned = std::move(fs.rounds);
    paths = std::move(fs.paths);
    if (fabric_run != nullptr) *fabric_run = std::move(fs.run);
  } else if (c.fabric != nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("--topology plans --mode cover or shift, not --mode ",
                                                   schedule::ModeName(options.mode)));
  }
  GDR_ASSIGN_OR_RETURN(run::Plan plan, run::MakePlan(std::move(nodes), memory, options, params));
  plan.fabric = std::move(paths);
  return plan;
}

Agents::~Agents() {
  if (channels == nullptr) return;
  const AgentChannels::Stats s = channels->stats();
  spdlog::info(
      "agent channels: {} opened for {} agents, at most {} open at once (bound {}), {} closed for room",
      s.opened, owned.size(), s.most_open, channels->capacity(), s.closed);
}

absl::StatusOr<Agents> ConnectAgents(const SweepConfig& c, const inventory::Inventory& inv) {
  Agents a;
  if (!c.agents.empty()) {
    a.api = c.agents;
    return a;
  }
  rpc::ClientTlsConfig tls = c.tls ? *c.tls : inv.has_tls ? inv.tls : rpc::ClientTlsConfig{};
  // One cache for the fleet: the channels (fds, TLS connections) open at
  // once follow c.parallel, not the number of agents.
  auto channels = MakeAgentChannels(tls, ChannelBound(c.parallel));
  if (!channels.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("agents' TLS: ", channels.status().message()));
  }
  a.channels = std::move(*channels);
  for (const auto& node : inv.nodes) {
    AgentClientConfig cfg;
    cfg.address = node.address;
    cfg.tls = tls;
    cfg.rpc_timeout = c.rpc_timeout;
    cfg.connect_timeout = c.connect_timeout;
    auto api = run::GrpcAgentApi::Create(std::move(cfg), a.channels);
    if (!api.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("node ", node.name, ": ", api.status().message()));
    }
    a.api.push_back(api->get());
    a.owned.push_back(std::move(*api));
  }
  return a;
}

}  // namespace internal

using internal::Agents;
using internal::Resolved;

absl::StatusOr<FleetPreflight> RunFleetPreflight(const SweepConfig& c) {
  inventory::Inventory inv = c.inventory;
  if (inv.nodes.empty()) return absl::InvalidArgumentError(absl::StrCat(inv.source, ": no nodes"));
  GDR_ASSIGN_OR_RETURN(Agents agents, internal::ConnectAgents(c, inv));
  if (internal::HasDiscovered(inv)) {
    GDR_ASSIGN_OR_RETURN(std::vector<size_t> kept, run::NameDiscoveredNodes(&inv, agents.api, c.parallel));
    std::vector<run::AgentApi*> named;
    for (size_t i : kept) named.push_back(agents.api[i]);
    agents.api = std::move(named);
  }
  run::ProbeOptions po;
  po.preflight = true;
  po.force = c.force;
  po.parallelism = c.parallel;
  po.all_nics = c.all_nics;
  po.expect = inv.expect;
  po.expectations = internal::MergedAgentExpectations(inv.expect, c.expectations);
  FleetPreflight out;
  out.probe = run::ProbeNodes(inv, agents.api, po);
  std::vector<std::string> names;
  for (const auto& n : out.probe.nodes) names.push_back(n.name);
  for (const auto& info : out.probe.infos) out.answering += !info.hostname().empty();
  out.uniformity = analysis::FleetUniformity(names, out.probe.infos);
  return out;
}

absl::StatusOr<run::Plan> PlanWithoutAgents(const SweepConfig& c) {
  GDR_ASSIGN_OR_RETURN(Resolved r, internal::Resolve(c));
  return internal::MakeSweepPlan(c, run::NodesFromInventory(r.inventory), r.memory, r.params, nullptr);
}

}  // namespace gdrbench::controller::sweep
