// Small generated fat trees the topology tests share.
#pragma once

#include "controller/topology/fat_tree.h"

namespace gdrbench::controller::topology {

// 8 leaves of 8 hosts per rail, 4 spines with 2 cables from each leaf.
inline FatTreeShape Small2Tier() {
  FatTreeShape s;
  s.nodes = 64;
  s.rails = 2;
  s.hosts_per_leaf = 8;
  s.leaves_per_pod = 8;
  s.spines_per_pod = 4;
  s.leaf_spine_links = 2;
  return s;
}

// 4 pods of 4 leaves of 4 hosts per rail; 4 spines per pod; spine s of each
// pod on core group s (2 cores, 2 cables to each).
inline FatTreeShape Small3Tier() {
  FatTreeShape s;
  s.nodes = 64;
  s.rails = 2;
  s.hosts_per_leaf = 4;
  s.leaves_per_pod = 4;
  s.spines_per_pod = 4;
  s.leaf_spine_links = 1;
  s.cores_per_group = 2;
  s.spine_core_links = 2;
  return s;
}

}  // namespace gdrbench::controller::topology
