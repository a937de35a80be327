#include "controller/sweep/fabric_plan.h"

#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "controller/topology/route.h"
#include "controller/topology/show.h"

namespace gdrbench::controller::sweep {
namespace {

namespace topo = topology;

constexpr size_t kMaxGapsListed = 1000;

// "fe80:0000:0000:0000:0c42:a103:0065:b7c4" -> "0x0c42a1030065b7c4": the
// interface id of a link-local GID, an InfiniBand port's GUID (IBTA: the
// default GID is the subnet prefix fe80::/64 and the port GUID). "" for
// another form.
std::string GuidOfGid(const std::string& gid) {
  std::vector<std::string> groups = absl::StrSplit(gid, ':');
  if (groups.size() != 8 || groups[0] != "fe80") return "";
  std::string hex;
  for (size_t i = 4; i < 8; ++i) {
    if (groups[i].size() != 4) return "";
    hex += groups[i];
  }
  return topo::NormalizeGuid(hex);
}

// The inventory MatchInventory reads: the plan's nodes with their resolved rails.
inventory::Inventory AsInventory(const std::vector<run::PlanNode>& nodes, const std::string& source) {
  inventory::Inventory inv;
  inv.source = source;
  for (const run::PlanNode& n : nodes) {
    inventory::Node node;
    node.name = n.name;
    node.address = n.address;
    node.rails = n.rails;
    inv.nodes.push_back(std::move(node));
  }
  return inv;
}

std::string UnmatchedText(const topo::Match& match) {
  std::vector<std::string> why;
  size_t n = 0;
  for (const topo::RailPort& r : match.rails) {
    if (r.found) continue;
    if (++n <= 3) why.push_back(r.why);
  }
  return absl::StrCat(absl::StrJoin(why, "; "), n > 3 ? absl::StrCat("; and ", n - 3, " more") : "");
}

// Host ports the sweep does not test (no rail claims them: MapHosts left
// them -1, or their node is left out): skipped by the planner, each host
// cable named with why.
std::vector<char> UntestedHosts(const topo::FabricIndex& ix, const FabricRun& fr,
                                const std::vector<run::PlanNode>& nodes,
                                std::map<int, std::string>& not_tested) {
  std::vector<char> skip(ix.hosts(), 0);
  for (int h = 0; h < ix.hosts(); ++h) {
    const int cable = ix.HostCable(h), node = fr.host_node[h];
    if (node < 0) {
      not_tested.emplace(cable, "its host port matches no rail of the nodes (not run)");
    } else if (nodes[node].excluded) {
      not_tested.emplace(cable, absl::StrCat(nodes[node].name, " left out: ", nodes[node].excluded_reason));
    } else {
      continue;
    }
    skip[h] = 1;
  }
  return skip;
}

// Host index <-> (node, rail) of the plan, for the host ports a rail claims.
void MapHosts(const topo::Fabric& f, const topo::FabricIndex& ix, const topo::Match& match,
              const std::vector<run::PlanNode>& nodes, FabricRun& run) {
  std::map<std::string, int> node_of;
  for (size_t i = 0; i < nodes.size(); ++i) node_of[nodes[i].name] = static_cast<int>(i);
  std::map<topo::PortRef, std::pair<int, int>> rail_of;
  for (const topo::RailPort& r : match.rails) {
    if (r.found) rail_of[r.port] = {node_of.at(r.node), static_cast<int>(r.rail)};
  }
  run.host_node.assign(ix.hosts(), -1);
  run.host_rail.assign(ix.hosts(), -1);
  for (int h = 0; h < ix.hosts(); ++h) {
    auto it = rail_of.find(f.cables[ix.HostCable(h)].lower);
    if (it == rail_of.end()) continue;
    const auto& [node, rail] = it->second;
    run.host_node[h] = node;
    run.host_rail[h] = rail;
    run.host_of[{node, rail}] = h;
  }
}

run::CableEnd EndOf(const topo::Fabric& f, const topo::PortRef& p) {
  run::CableEnd end;
  end.devices.push_back(p.device);
  end.port = std::to_string(p.port);
  if (auto d = f.devices.find(p.device); d != f.devices.end()) {
    for (const std::string* alias : {&d->second.description, &d->second.guid}) {
      if (!alias->empty() && *alias != p.device) end.devices.push_back(*alias);
    }
    if (auto name = d->second.port_names.find(p.port); name != d->second.port_names.end())
      end.port = name->second;
  }
  return end;
}

std::shared_ptr<run::FabricPaths> Describe(const FabricInput& in, const topo::Match& match,
                                           const topo::CoverPlan& plan) {
  auto p = std::make_shared<run::FabricPaths>();
  const RailNames rails = RailNamesOf(match);
  p->topology = in.source;
  p->routing = in.routing == topo::Routing::kEcmp ? "ecmp" : "ftree";
  for (const topo::Cable& c : in.fabric.cables) {
    p->cables.push_back(run::FabricCable{
        absl::StrCat(PortName(in.fabric, c.lower, &rails), " -> ", PortName(in.fabric, c.upper, &rails)),
        c.tier, c.where, EndOf(in.fabric, c.lower), EndOf(in.fabric, c.upper)});
  }
  for (size_t t = 0; t < plan.tiers.size(); ++t)
    p->tier_names.push_back(topo::CableTierName(static_cast<int>(t)));
  p->planned_rounds = plan.rounds.size();
  p->lower_bound_rounds = plan.lower_bound;
  p->ecmp_min_probability = plan.ecmp_min_probability;
  for (const topo::UncoveredCable& u : plan.uncovered) p->not_planned.emplace_back(u.cable, u.why);
  return p;
}

}  // namespace

schedule::Test FabricRun::TestOf(int src_host, int dst_host) const {
  schedule::Test t;
  t.src = static_cast<uint32_t>(host_node[src_host]);
  t.dst = static_cast<uint32_t>(host_node[dst_host]);
  t.rail = static_cast<uint32_t>(host_rail[src_host]);
  if (host_rail[dst_host] != host_rail[src_host]) t.dst_rail = static_cast<uint32_t>(host_rail[dst_host]);
  return t;
}

int FabricRun::HostOf(uint32_t node, uint32_t rail) const {
  auto it = host_of.find({static_cast<int>(node), static_cast<int>(rail)});
  return it == host_of.end() ? -1 : it->second;
}

RailNames RailNamesOf(const topo::Match& match) {
  RailNames names;
  for (const topo::RailPort& r : match.rails) {
    if (r.found)
      names.emplace(r.port,
                    absl::StrCat(r.node, " ", r.nic.empty() ? "rail " + std::to_string(r.rail) : r.nic));
  }
  return names;
}

std::string PortName(const topo::Fabric& f, const topo::PortRef& port, const RailNames* rails) {
  if (rails != nullptr) {
    if (auto it = rails->find(port); it != rails->end()) return it->second;
  }
  auto d = f.devices.find(port.device);
  if (d == f.devices.end()) return absl::StrCat(port.device, " port ", port.port);
  auto name = d->second.port_names.find(port.port);
  const std::string who = d->second.description.empty() ? d->first : d->second.description;
  return absl::StrCat(who, " port ",
                      name != d->second.port_names.end() ? name->second : std::to_string(port.port));
}

AgentPorts PortsFromAgents(const std::vector<run::PlanNode>& nodes, const std::vector<v1::NodeInfo>& infos) {
  AgentPorts out;
  for (size_t i = 0; i < nodes.size() && i < infos.size(); ++i) {
    for (const v1::NicInfo& nic : infos[i].nics()) {
      for (const v1::RdmaPort& port : nic.ports()) {
        if (!port.netdev().empty())
          out.netdevs.emplace(std::pair{nodes[i].name, nic.device()}, port.netdev());
        if (port.link_layer() != "InfiniBand") continue;
        for (const v1::Gid& gid : port.gids()) {
          if (std::string guid = GuidOfGid(gid.gid()); !guid.empty()) {
            out.guids.emplace(std::pair{nodes[i].name, nic.device()}, guid);
            break;
          }
        }
      }
    }
  }
  return out;
}

absl::StatusOr<FabricSchedule> PlanOnFabric(const FabricInput& in, schedule::Mode mode,
                                            const std::vector<run::PlanNode>& nodes,
                                            const AgentPorts& ports) {
  if (!schedule::FabricMode(mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--topology plans --mode cover or shift, not ", schedule::ModeName(mode)));
  }
  if (mode == schedule::Mode::kShift && in.routing != topo::Routing::kFtree) {
    return absl::InvalidArgumentError(
        "--mode shift plans under --routing ftree only (its paths must be known)");
  }
  auto run = std::make_shared<FabricRun>();
  run->match =
      topo::MatchInventory(in.fabric, AsInventory(nodes, in.source), in.source, ports.guids, ports.netdevs);
  if (run->match.found() == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--topology ", in.source, ": no rail of the ", nodes.size(),
                     " nodes matched a host port: ", UnmatchedText(run->match)));
  }
  absl::StatusOr<topo::FabricIndex> ix = topo::FabricIndex::Build(in.fabric);
  if (!ix.ok()) return ix.status();
  run->fabric = &in.fabric;
  run->index = *std::move(ix);
  // Plan over the host ports this sweep tests: a partner missing (no rail,
  // or its node left out) would leave its peer's cables without a flow.
  std::map<int, std::string> not_tested;  // cable -> why its host port is not planned
  topo::CoverOptions co;
  co.routing = in.routing;
  co.ecmp_confidence = in.ecmp_confidence;
  co.max_rounds = in.max_rounds;
  MapHosts(in.fabric, run->index, run->match, nodes, *run);
  co.skip_hosts = UntestedHosts(run->index, *run, nodes, not_tested);
  absl::StatusOr<topo::CoverPlan> plan = mode == schedule::Mode::kCover
                                             ? topo::PlanCover(in.fabric, run->index, co)
                                             : topo::PlanShift(in.fabric, run->index, co.skip_hosts);
  if (!plan.ok()) return plan.status();
  std::shared_ptr<run::FabricPaths> paths = Describe(in, run->match, *plan);
  for (const auto& [cable, why] : not_tested) paths->not_planned.emplace_back(cable, why);
  FabricSchedule out;
  for (const std::vector<topo::PlannedFlow>& round : plan->rounds) {
    std::vector<schedule::Test> tests;
    for (const topo::PlannedFlow& flow : round) {
      const schedule::Test t = run->TestOf(flow.src, flow.dst);
      paths->paths.emplace(run::FabricPaths::KeyOf(t),
                           std::vector<uint32_t>(flow.cables.begin(), flow.cables.end()));
      tests.push_back(t);
    }
    if (!tests.empty()) out.rounds.push_back(std::move(tests));
  }
  out.paths = std::move(paths);
  out.run = std::move(run);
  return out;
}

std::vector<std::string> PlannedCoverageLines(std::shared_ptr<const run::FabricPaths> paths, size_t limit) {
  const run::FabricPaths& p = *paths;
  const v1::FabricCoverage planned = CoverageTally(paths).Coverage();  // nothing measured: totals and planned
  std::vector<std::string> lines;
  for (int t = 0; t < planned.tiers_size(); ++t) {
    const v1::CableTierCoverage& tier = planned.tiers(t);
    if (tier.total() == 0) continue;
    if (p.routing == "ecmp" && t > 0) {
      lines.push_back(absl::StrCat(tier.tier(), ": ", tier.total(),
                                   " cables, each carrying a flow with probability >= ",
                                   p.ecmp_min_probability, " (ecmp: paths by hash)"));
    } else {
      lines.push_back(
          absl::StrCat(tier.tier(), ": ", tier.planned(), " / ", tier.total(), " cables planned"));
    }
  }
  size_t listed = 0;
  for (const auto& [cable, why] : p.not_planned) {
    if (listed++ == limit) {
      lines.push_back(absl::StrCat("... and ", p.not_planned.size() - limit, " more cables not planned"));
      break;
    }
    lines.push_back(absl::StrCat("not planned: ", p.cables[cable].name, ": ", why));
  }
  return lines;
}

CoverageTally::CoverageTally(std::shared_ptr<const run::FabricPaths> paths) : paths_(std::move(paths)) {
  if (paths_ == nullptr) return;
  planned_.assign(paths_->cables.size(), 0);
  measured_.assign(paths_->cables.size(), 0);
  loads_.assign(paths_->cables.size(), CableLoad{});
  for (const auto& [key, cables] : paths_->paths) {
    for (uint32_t u : cables) planned_[topo::CableOf(u)] = 1;
  }
}

void CoverageTally::Measured(const schedule::Test& t, uint64_t payload_bytes) {
  if (paths_ == nullptr) return;
  if (const std::vector<uint32_t>* path = paths_->Path(t)) {
    for (uint32_t u : *path) {
      measured_[topo::CableOf(u)] = 1;
      if (payload_bytes == 0) continue;  // a resumed test: its traffic is before the counters' first read
      CableLoad& load = loads_[topo::CableOf(u)];
      const int dir = topo::Downward(u) ? 1 : 0;
      load.bytes[dir] += payload_bytes;
      ++load.flows[dir];
    }
  }
}

v1::FabricCoverage CoverageTally::Coverage() const {
  v1::FabricCoverage c;
  if (paths_ == nullptr) return c;
  c.set_topology(paths_->topology);
  c.set_routing(paths_->routing);
  c.set_planned_rounds(static_cast<uint32_t>(paths_->planned_rounds));
  c.set_lower_bound_rounds(static_cast<uint32_t>(paths_->lower_bound_rounds));
  if (paths_->routing == "ecmp") c.set_ecmp_min_probability(paths_->ecmp_min_probability);
  for (const std::string& name : paths_->tier_names) c.add_tiers()->set_tier(name);
  std::map<int, std::string> not_planned(paths_->not_planned.begin(), paths_->not_planned.end());
  const bool ecmp = paths_->routing == "ecmp";
  for (size_t i = 0; i < paths_->cables.size(); ++i) {
    const run::FabricCable& cable = paths_->cables[i];
    if (cable.tier < 0 || cable.tier >= c.tiers_size()) continue;
    v1::CableTierCoverage& tier = *c.mutable_tiers(cable.tier);
    tier.set_total(tier.total() + 1);
    tier.set_planned(tier.planned() + (planned_[i] ? 1 : 0));
    tier.set_measured(tier.measured() + (measured_[i] ? 1 : 0));
    if (measured_[i] || (ecmp && cable.tier > 0)) continue;  // ecmp: uplinks by probability, not path
    c.set_gaps_total(c.gaps_total() + 1);
    if (static_cast<size_t>(c.gaps_size()) >= kMaxGapsListed) continue;
    v1::CableGap& gap = *c.add_gaps();
    gap.set_cable(cable.name);
    gap.set_tier(static_cast<uint32_t>(cable.tier));
    auto np = not_planned.find(static_cast<int>(i));
    gap.set_why(planned_[i]               ? "its planned flows did not complete (see the cells' reasons)"
                : np != not_planned.end() ? absl::StrCat("no planned flow: ", np->second)
                                          : "no planned flow");
  }
  return c;
}

}  // namespace gdrbench::controller::sweep
