// Rail-optimized fat trees of the shape NVIDIA's DGX SuperPOD reference
// architectures publish, generated as a Fabric (for planning at scale
// without a dump: tests, bench/topology_cover, estimates).
//
// The published shape (DGX SuperPOD RA, DGX B200 and DGX H100 editions,
// "Larger DGX SuperPOD component counts"): a scalable unit (SU) is 32
// nodes x 8 rails; each rail of an SU has its own leaf (64-port NDR switch,
// 32 ports down to the nodes' NICs of that rail, 32 up); one cable per GPU
// per tier (8,192 node-leaf, 8,192 leaf-spine and 8,192 spine-core cables
// at 32 SUs).
//
// Above the leaves this generator builds, per rail (a "rail plane"):
//   2 tiers: every leaf of the plane cabled to `spines_per_pod` spines with
//            `leaf_spine_links` cables each (16 x 2 = 32 uplinks);
//   3 tiers: pods of `leaves_per_pod` leaves and `spines_per_pod` spines
//            (leaf i's uplink u to spine u / leaf_spine_links), and spine s
//            of every pod cabled to core group s: `cores_per_group` cores,
//            `spine_core_links` cables from each spine to each of them.
// Uplink u of every leaf of a pod reaches the same spine, and uplink v of
// spine s of every pod the same core: the regular cabling ftree assumes.
//
// Ids (zero-padded, so that their order is the numeric one): hosts
// "H-n00042-r3" described "node00042 mlx5_3", leaves "S-r3-l0001", spines
// "S-r3-p002-s05", cores "S-r3-g05-c07". Tiers are set (no AssignTiers pass needed).
#pragma once

#include "absl/status/statusor.h"
#include "controller/topology/fabric.h"

namespace gdrbench::controller::topology {

struct FatTreeShape {
  int nodes = 1024;
  int rails = 8;
  int hosts_per_leaf = 32;   // one SU: 32 nodes
  int leaves_per_pod = 32;   // 2 tiers: every leaf of the plane (nodes / hosts_per_leaf)
  int spines_per_pod = 16;
  int leaf_spine_links = 2;
  int cores_per_group = 0;   // 0: two tiers
  int spine_core_links = 0;
  double gbps = 400;         // 4xNDR
};

// 1,024 nodes x 8 rails, 2 tiers: 32 leaves and 16 spines per rail, 2
// cables from each leaf to each spine of its rail.
FatTreeShape TwoTierShape(int nodes, int rails);
// `nodes` x `rails`, 3 tiers: pods of 32 leaves and 32 spines per rail,
// spine s of each pod on core group s (8 cores, 4 cables to each).
FatTreeShape ThreeTierShape(int nodes, int rails);

// INVALID_ARGUMENT when the numbers do not divide: nodes by hosts_per_leaf,
// leaves by leaves_per_pod, hosts_per_leaf uplinks by leaf_spine_links x
// spines_per_pod, or a spine's uplinks by cores_per_group x spine_core_links.
absl::StatusOr<Fabric> GenerateFatTree(const FatTreeShape& shape);

}  // namespace gdrbench::controller::topology
