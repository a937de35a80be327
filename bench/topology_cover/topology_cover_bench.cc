// Plans `--mode cover` on a generated rail-optimized fat tree
// (controller/topology/fat_tree.h) and prints the time of each step, the
// peak RSS, the coverage per tier, the rounds beside the lower bound, and
// the estimated wall time beside all-pairs' (N - 1 rounds) with the same
// per-round time (the sweep's default test parameters at the fabric's rate).
//
// Then the path `gdrbench sweep --mode cover --dry-run` takes over the same
// fabric (sweep::PlanWithoutAgents: every inventory rail matched to its host
// port by node description, the plan made, its flows turned into the
// schedule's tests, the fingerprint), timed on its own, with the peak RSS of
// the whole process after it.
//
//   gdrbench-topology-cover-bench --tiers 3 --nodes 10240 --rails 8
#include <sys/resource.h>

#include <chrono>
#include <cstdio>

#include "CLI/CLI.hpp"
#include "absl/strings/str_format.h"
#include "common/sweep_limits.h"
#include "controller/schedule/schedule.h"
#include "controller/sweep/sweep.h"
#include "controller/topology/cover.h"
#include "controller/topology/fat_tree.h"
#include "controller/topology/route.h"
#include "controller/topology/show.h"

namespace {

double Since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

int main(int argc, char** argv) {
  namespace topo = gdrbench::controller::topology;
  CLI::App app{"cover plan at scale"};
  int tiers = 3, nodes = 10240, rails = 8;
  std::string routing = "ftree";
  app.add_option("--tiers", tiers, "2 or 3")->capture_default_str();
  app.add_option("--nodes", nodes)->capture_default_str();
  app.add_option("--rails", rails)->capture_default_str();
  app.add_option("--routing", routing, "ftree or ecmp")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  const auto t0 = std::chrono::steady_clock::now();
  auto fabric = topo::GenerateFatTree(tiers == 2 ? topo::TwoTierShape(nodes, rails) : topo::ThreeTierShape(nodes, rails));
  if (!fabric.ok()) {
    std::fprintf(stderr, "%s\n", fabric.status().ToString().c_str());
    return 1;
  }
  const double generate_s = Since(t0);
  const auto t1 = std::chrono::steady_clock::now();
  auto index = topo::FabricIndex::Build(*fabric);
  if (!index.ok()) return 1;
  const double index_s = Since(t1);
  const auto t2 = std::chrono::steady_clock::now();
  topo::CoverOptions options;
  options.routing = routing == "ecmp" ? topo::Routing::kEcmp : topo::Routing::kFtree;
  auto plan = topo::PlanCover(*fabric, *index, options);
  if (!plan.ok()) {
    std::fprintf(stderr, "%s\n", plan.status().ToString().c_str());
    return 1;
  }
  const double plan_s = Since(t2);
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  std::printf("fabric: %d tiers, %d nodes x %d rails: %d host ports, %zu switches, %zu cables (generated)\n", tiers,
              nodes, rails, index->hosts(), fabric->CountDevices(topo::DeviceKind::kSwitch), fabric->cables.size());
  std::printf("time: generate %.2f s, index %.2f s, plan %.2f s; peak RSS %.0f MB (the whole process)\n", generate_s,
              index_s, plan_s, ru.ru_maxrss / 1024.0);
  std::printf("cover (%s): %zu rounds, lower bound %d, %zu flows\n", routing.c_str(), plan->rounds.size(),
              plan->lower_bound, plan->flows());
  for (size_t t = 0; t < plan->tiers.size(); ++t) {
    std::printf("  %s: %zu / %zu cables covered\n", topo::CableTierName(static_cast<int>(t)).c_str(),
                plan->tiers[t].covered, plan->tiers[t].total);
  }
  if (options.routing == topo::Routing::kEcmp) {
    std::printf("  each uplink loaded with probability >= %.4f\n", plan->ecmp_min_probability);
  }
  // The sweep's defaults (the sizes `gdrbench sweep` uses without --sizes).
  gdrbench::controller::sweep::SweepConfig defaults;
  for (uint64_t size : gdrbench::sweep_limits::kDefaultSweepSizes) defaults.params.add_sizes_bytes(size);
  defaults.link_gbps = 400;
  const auto est = gdrbench::controller::sweep::Estimate(defaults);
  const double per_round = gdrbench::controller::schedule::EstimateTestSeconds(est);
  std::printf("estimated wall time at %.2f s per round (the sweep's default sizes 64K,1M at 400 Gb/s): cover %.1f "
              "s, all-pairs (%d rounds) %.0f s\n",
              per_round, per_round * plan->rounds.size(), nodes - 1, per_round * (nodes - 1));

  // The sweep's dry run over the same fabric: an inventory of every node and rail.
  namespace sweep = gdrbench::controller::sweep;
  sweep::SweepConfig c;
  c.inventory.source = "generated";
  for (int n = 0; n < nodes; ++n) {
    gdrbench::controller::inventory::Node node;
    node.name = absl::StrFormat("node%05d", n);
    node.address = node.name + ":7070";
    for (int r = 0; r < rails; ++r) node.rails.push_back({absl::StrFormat("mlx5_%d", r), std::nullopt});
    c.inventory.nodes.push_back(std::move(node));
  }
  c.schedule.mode = gdrbench::controller::schedule::Mode::kCover;
  sweep::FabricInput in;
  in.fabric = *std::move(fabric);
  in.source = "generated";
  in.routing = options.routing;
  c.fabric = std::make_shared<const sweep::FabricInput>(std::move(in));
  const auto t3 = std::chrono::steady_clock::now();
  auto dry = sweep::PlanWithoutAgents(c);
  if (!dry.ok()) {
    std::fprintf(stderr, "sweep dry run: %s\n", dry.status().ToString().c_str());
    return 1;
  }
  const double dry_s = Since(t3);
  getrusage(RUSAGE_SELF, &ru);
  std::printf(
      "sweep --mode cover --dry-run path: %.2f s (match %d rails, plan, schedule, fingerprint): %zu tests in "
      "%zu rounds, %zu cables not planned; peak RSS %.0f MB (the whole process)\n",
      dry_s, nodes * rails, dry->schedule.tests(), dry->schedule.rounds(), dry->fabric->not_planned.size(),
      ru.ru_maxrss / 1024.0);
  return 0;
}
