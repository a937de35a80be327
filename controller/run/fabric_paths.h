// --mode cover | shift: the fabric's cables, the cables each planned test's
// flow crosses under the plan's routing assumption, and what the plan could
// not cover. Made once per run by controller/sweep/fabric_plan.h from the
// topology; pure data here, so that the plan, the runner's callers and the
// reports read it without the topology library. Immutable once made (shared
// by pointer between the plan and its retest copies; safe to read from any
// thread).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "controller/schedule/schedule.h"

namespace gdrbench::controller::run {

// One end of a cable as switch counters may name it: the device by any of
// `devices` (its id, node description, GUID), the port by `port` (its name,
// else its number).
struct CableEnd {
  std::vector<std::string> devices;
  std::string port;
};

struct FabricCable {
  std::string name;       // "node01 mlx5_0 -> leaf1 port 3", "leaf1 port 33 -> spine2 port 5"
  int tier = -1;          // 0 host<->leaf, 1 leaf<->spine, 2 spine<->core; -1 untiered
  std::string where;      // "FILE:LINE" of the topology record that listed it
  CableEnd lower, upper;  // lower: the end nearer the hosts
};

struct FabricPaths {
  std::string topology;                 // the file or directory it came from
  std::string routing;                  // "ftree" | "ecmp"
  std::vector<FabricCable> cables;      // every cable of the topology, by the topology's index
  std::vector<std::string> tier_names;  // [0] "host<->leaf", [1] "leaf<->spine", ...
  size_t planned_rounds = 0;            // the fabric plan's rounds (before a GPU split or a cap)
  int lower_bound_rounds = 1;
  double ecmp_min_probability = 1;  // ecmp: the least likely uplink's chance of a flow
  // Cables the plan itself leaves without a flow, with why (the planner could
  // not place one, or the host port has no inventory rail).
  std::vector<std::pair<int, std::string>> not_planned;

  // A flow's key: (src node, src rail, dst node, dst rail) in the plan's
  // node indices; under ftree the path depends only on the two host ports.
  using Key = std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>;
  static Key KeyOf(const schedule::Test& t) { return {t.src, t.rail, t.dst, t.TargetRail()}; }
  // The cables a test's flow crosses, each as cable * 2 + 1 when crossed
  // downward (the topology's CableUse); ecmp: the host cables only.
  std::map<Key, std::vector<uint32_t>> paths;

  // nullptr when the test is not one the plan made.
  const std::vector<uint32_t>* Path(const schedule::Test& t) const {
    auto it = paths.find(KeyOf(t));
    return it == paths.end() ? nullptr : &it->second;
  }
  size_t Tiers() const { return tier_names.size(); }
};

}  // namespace gdrbench::controller::run
