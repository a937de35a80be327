#include "controller/cli/topology_command.h"

#include <cstdio>
#include <set>

#include "controller/cli/cli_util.h"
#include "controller/cli/commands.h"
#include "controller/inventory/inventory.h"
#include "controller/cli/topology_plan.h"
#include "controller/topology/cover.h"
#include "controller/topology/load.h"
#include "controller/topology/route.h"
#include "controller/topology/match.h"
#include "controller/topology/show.h"

namespace gdrbench::controller::cli {

int TopologyShowCommand(const TopologyOptions& options) {
  inventory::Inventory inv;
  std::set<std::string> hosts;
  if (!options.inventory.empty()) {
    auto loaded = inventory::LoadInventoryFile(options.inventory);
    if (!loaded.ok()) return PrintError(UsageIfUnreadable(loaded.status()));
    inv = std::move(*loaded);
    for (const auto& n : inv.nodes) hosts.insert(n.name);
  }
  auto fabric = topology::LoadTopology(options.topology, options.format, hosts);
  if (!fabric.ok()) return PrintError(UsageIfUnreadable(fabric.status()));
  std::string out;
  if (options.inventory.empty()) {
    out = topology::RenderFabric(*fabric, options.topology, nullptr);
  } else {
    const topology::Match match = topology::MatchInventory(*fabric, inv, options.topology);
    out = topology::RenderFabric(*fabric, options.topology, &match);
  }
  std::fputs(out.c_str(), stdout);
  return 0;
}

int TopologyPlanCommand(const TopologyOptions& options) {
  if (options.mode != "cover" && options.mode != "shift") {
    return PrintError(absl::InvalidArgumentError("--mode: expected cover or shift, got " + options.mode));
  }
  if (options.routing != "ftree" && options.routing != "ecmp") {
    return PrintError(absl::InvalidArgumentError("--routing: expected ftree or ecmp, got " + options.routing));
  }
  if (options.mode == "shift" && options.routing != "ftree") {
    return PrintError(absl::InvalidArgumentError("--mode shift plans under --routing ftree only"));
  }
  std::set<std::string> hosts;
  if (!options.inventory.empty()) {
    auto loaded = inventory::LoadInventoryFile(options.inventory);
    if (!loaded.ok()) return PrintError(UsageIfUnreadable(loaded.status()));
    for (const auto& n : loaded->nodes) hosts.insert(n.name);
  }
  auto fabric = topology::LoadTopology(options.topology, options.format, hosts);
  if (!fabric.ok()) return PrintError(UsageIfUnreadable(fabric.status()));
  auto index = topology::FabricIndex::Build(*fabric);
  if (!index.ok()) return PrintError(index.status());
  topology::CoverOptions cover;
  cover.routing = options.routing == "ecmp" ? topology::Routing::kEcmp : topology::Routing::kFtree;
  cover.ecmp_confidence = options.ecmp_confidence;
  cover.max_rounds = options.max_rounds;
  auto plan = options.mode == "cover" ? topology::PlanCover(*fabric, *index, cover)
                                      : topology::PlanShift(*fabric, *index);
  if (!plan.ok()) return PrintError(plan.status());
  if (options.json) {
    auto json = PlanJson(*fabric, *index, *plan, options.mode, options.routing);
    if (!json.ok()) return PrintError(json.status());
    std::fputs(json->c_str(), stdout);
  } else {
    std::fputs(PlanText(*fabric, *index, *plan, options.mode, options.routing).c_str(), stdout);
  }
  return 0;
}

void AddTopologySubcommands(CLI::App& app, TopologyOptions& options, std::function<int()>* run) {
  CLI::App* topo = app.add_subcommand("topology", "the fabric model: switches, cables and tiers");
  topo->require_subcommand(1);
  CLI::App* show = topo->add_subcommand(
      "show", "print the fabric a dump describes and how the inventory's rails match its host ports");
  show->add_option("--topology", options.topology,
                   "ibnetdiscover output, iblinkinfo --line output, or a directory of NAME.json "
                   "(lldpctl -f json on NAME)")
      ->required();
  show->add_option("--topology-format", options.format, "auto, ibnetdiscover, iblinkinfo or lldp")
      ->capture_default_str();
  show->add_option("--inventory", options.inventory,
                   "YAML inventory (docs/inventory.md): match its rails to host ports (needed for lldp)");
  show->callback([run, &options] { *run = [&options] { return TopologyShowCommand(options); }; });

  CLI::App* plan = topo->add_subcommand(
      "plan", "a dry run of --mode cover or shift over the fabric: rounds beside the lower bound, cables "
              "covered per tier and the load per cable (nothing is run)");
  plan->add_option("--topology", options.topology, "as for show")->required();
  plan->add_option("--topology-format", options.format, "auto, ibnetdiscover, iblinkinfo or lldp")
      ->capture_default_str();
  plan->add_option("--inventory", options.inventory, "YAML inventory (needed for lldp)");
  plan->add_option("--mode", options.mode,
                   "cover: every host<->leaf and leaf<->spine cable carries a flow, in few rounds; shift: "
                   "every leaf pair of each rail plane")
      ->capture_default_str();
  plan->add_option("--routing", options.routing,
                   "ftree: each flow's cables known (OpenSM fat-tree routing); ecmp: spread by hash, rounds "
                   "until each uplink carried a flow with --ecmp-confidence")
      ->capture_default_str();
  plan->add_option("--ecmp-confidence", options.ecmp_confidence, "with --routing ecmp")
      ->capture_default_str()
      ->check(CLI::Range(0.5, 0.999999));
  plan->add_option("--max-rounds", options.max_rounds, "cover: stop adding rounds here; cables left are listed")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  plan->add_flag("--json", options.json, "the plan as JSON, with each flow's cables");
  plan->callback([run, &options] { *run = [&options] { return TopologyPlanCommand(options); }; });
}

}  // namespace gdrbench::controller::cli
