// Plans that prove every cable (issue 28, `--mode cover` and `--mode shift`).
//
// cover: rounds of leaf-pair matchings inside each connected part of the
// fabric (each rail plane of a rail-optimized fabric; planes run in
// parallel, round r of every plane at once). In a round, the leaves are
// paired (in leaf order, the first half with the second, the second half
// rotated by the round number; directions alternate), and host p of one
// leaf sends to host p of its partner. Under ftree every such flow's cables
// are known (FabricIndex::FtreePath); a flow that would put a second flow
// on a cable direction in the round is left out, and hosts left without a
// partner pair within their leaf (their host cables still carry a flow).
// NIC exclusivity: a host port is in at most one flow per round. Rounds are
// added until every cable of the plane carries a flow, or until a round
// adds nothing, when the cables left are reported with the reason.
//
// ecmp: the same rounds, but the switches spread flows by hash, so only the
// host cables are known. A switch X with U uplinks that n flows cross in a
// round leaves a given uplink unloaded with probability (1 - 1/U)^n; rounds
// are added until every uplink is loaded with at least `ecmp_confidence`,
// and the plan prints the probability it reached.
//
// shift: every leaf-pair of each plane once per direction, (L - 1) rounds
// of the leaf matrix (round k: leaf a -> leaf (a + k) mod L; NIC
// exclusivity splits each into a send and a receive half), with the paths
// as cover computes them.
//
// The lower bound on rounds: a host port is in one flow per round, and a
// flow crosses a switch's uplinks at most once, so a switch with U uplinks
// and H host ports below it needs ceil(U / H) rounds; at least 1.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "controller/topology/fabric.h"
#include "controller/topology/route.h"

namespace gdrbench::controller::topology {

enum class Routing { kFtree, kEcmp };

struct CoverOptions {
  Routing routing = Routing::kFtree;
  double ecmp_confidence = 0.99;  // each uplink loaded with at least this probability
  int max_rounds = 64;            // a cap; cables left uncovered are reported
  // Host indices not to put in any flow (a node the sweep does not test):
  // 1 = skip. Their host cables are left out of the plan and of `uncovered`
  // (the caller says why); routing still counts them (ftree's positions are
  // the subnet's, tested or not). Empty: every host.
  std::vector<char> skip_hosts;
};

struct PlannedFlow {
  int src = 0, dst = 0;           // FabricIndex host indices
  std::vector<CableUse> cables;   // with direction; ecmp: the host cables only
};

struct TierCoverage {
  size_t total = 0;
  size_t covered = 0;             // cables a planned flow's known path crosses (ecmp: host cables only)
  double mean_flows = 0;          // flows per covered cable over the plan
  int max_per_round = 0;          // the most flows on one cable direction in one round
  double expected_per_round = 0;  // ecmp: flows a switch's uplink carries per round, on average
};

struct UncoveredCable {
  int cable = 0;
  std::string why;
};

struct CoverPlan {
  std::vector<std::vector<PlannedFlow>> rounds;
  int lower_bound = 1;
  std::vector<TierCoverage> tiers;  // [0] host<->leaf, [1] leaf<->spine, ...
  std::vector<UncoveredCable> uncovered;
  double ecmp_min_probability = 1;  // ecmp: the least likely uplink's probability of a flow
  size_t flows() const;
};

absl::StatusOr<CoverPlan> PlanCover(const Fabric& fabric, const FabricIndex& index, const CoverOptions& options);
absl::StatusOr<CoverPlan> PlanShift(const Fabric& fabric, const FabricIndex& index,
                                    const std::vector<char>& skip_hosts = {});

// The bound above.
int CoverLowerBound(const FabricIndex& index);

}  // namespace gdrbench::controller::topology
