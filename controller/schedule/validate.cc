// ValidateSchedule: NIC and GPU exclusivity (and the fan-in) checked over
// every round of a built schedule, independently of how it was built.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "controller/schedule/schedule.h"

namespace gdrbench::controller::schedule {

absl::Status ValidateSchedule(const Schedule& s, const std::vector<NodeShape>& nodes, uint32_t max_fan_in) {
  // Stamp arrays indexed by node*rails+rail (NIC) and node*maxgpu+gpu (GPU):
  // a slot holding the current round number is busy; `role` says whether it
  // sends (0) or is written to, and by how many tests (1..max_fan_in).
  struct Slot {
    uint32_t round = UINT32_MAX;
    uint32_t writers = 0;  // 0: a sender
  };
  const uint32_t fan_in = std::max(max_fan_in, 1u);
  size_t rails = 1;
  int max_gpu = 0;
  for (const auto& n : nodes) {
    rails = std::max(rails, n.rail_gpu.size());
    for (int g : n.rail_gpu) max_gpu = std::max(max_gpu, g + 1);
  }
  const size_t gpus = std::max(max_gpu, 1);
  std::vector<Slot> nic(nodes.size() * rails);
  std::vector<Slot> gpu(nodes.size() * gpus);
  // Takes `slot` for round r: a sender needs it free; a target may join
  // other writers up to the fan-in. Empty string = taken, else the conflict.
  auto take = [&](Slot& slot, uint32_t r, bool target) -> std::string {
    if (slot.round != r) {
      slot = {r, target ? 1u : 0u};
      return "";
    }
    if (fan_in == 1) return "is in two tests";
    if (!target && slot.writers == 0) return "sends in two tests";
    if (!target || slot.writers == 0) return "sends and is written to in one round";
    if (slot.writers == fan_in)
      return absl::StrCat("is written to by more than ", fan_in, " tests (the fan-in)");
    ++slot.writers;
    return "";
  };
  std::vector<Test> round;  // one round at a time: a generated schedule is never made whole
  for (uint32_t r = 0; r < s.rounds(); ++r) {
    s.RoundInto(r, &round);
    for (const Test& t : round) {
      for (const bool target : {false, true}) {
        // Each end on its own rail (cross-rail: the target's is dst_rail).
        const uint32_t node = target ? t.dst : t.src;
        const uint32_t rail = target ? t.TargetRail() : t.rail;
        if (node >= nodes.size() || rail >= nodes[node].rail_gpu.size()) {
          return absl::FailedPreconditionError(
              absl::StrCat("round ", r, ": node ", node, " has no rail ", rail));
        }
        if (std::string why = take(nic[node * rails + rail], r, target); !why.empty()) {
          return absl::FailedPreconditionError(
              absl::StrCat("round ", r, ": NIC of rail ", rail, " on node ", node, " ", why));
        }
        int g = nodes[node].rail_gpu[rail];
        if (g >= 0) {
          if (std::string why = take(gpu[node * gpus + g], r, target); !why.empty()) {
            return absl::FailedPreconditionError(
                absl::StrCat("round ", r, ": GPU ", g, " on node ", node, " ", why));
          }
        }
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace gdrbench::controller::schedule
