#include "controller/run/plan.h"

#include <atomic>
#include <cinttypes>
#include <cstdio>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/status.h"

namespace gdrbench::controller::run {

std::vector<schedule::NodeShape> Shapes(const std::vector<PlanNode>& nodes,
                                        const std::string& memory) {
  // A list ("host,gpu") runs each kind on the same NICs: the GPU is in the test.
  const bool gpu = AnyGpuKind(memory);
  std::vector<schedule::NodeShape> shapes(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const auto& r : nodes[i].rails) {
      shapes[i].rail_gpu.push_back(gpu && r.gpu ? static_cast<int>(*r.gpu) : -1);
    }
  }
  return shapes;
}

bool AnyGpuKind(absl::string_view memory) {
  for (absl::string_view item : absl::StrSplit(memory, ',')) {
    if (absl::StartsWith(absl::StripAsciiWhitespace(item), "gpu")) return true;
  }
  return false;
}

std::string EndpointMemory(const PlanNode& node, uint32_t rail, const std::string& memory) {
  if (memory.find(',') != std::string::npos) {  // a list: the first kind's
    return EndpointMemory(node, rail, memory.substr(0, memory.find(',')));
  }
  if (memory.rfind("gpu", 0) == 0 && rail < node.rails.size() && node.rails[rail].gpu) {
    return absl::StrCat(memory, ":", *node.rails[rail].gpu);
  }
  return memory;
}

absl::StatusOr<Plan> MakePlan(std::vector<PlanNode> nodes, const std::string& memory,
                              const schedule::ScheduleOptions& options,
                              const v1::SweepParams& params) {
  // A list with a GPU kind is refused as the GPU kind alone is (it used to
  // run and fail its GPU halves, exit 0). A node left out (unreachable, its
  // preflight FAILed) has no known rails: its reason is reported, not its rails.
  if (AnyGpuKind(memory)) {
    for (const auto& n : nodes) {
      if (n.excluded) continue;
      for (size_t r = 0; r < n.rails.size(); ++r) {
        if (!n.rails[r].gpu) {
          return absl::InvalidArgumentError(absl::StrCat(
              "memory ", memory, ": rail ", r, " (NIC '", n.rails[r].nic, "') of node ", n.name,
              " has no GPU: give rails as {nic, gpu} in the inventory",
              memory.find(',') == std::string::npos ? "" : ", or leave the GPU kinds out of the list"));
        }
      }
    }
  }
  Plan plan;
  plan.nodes = std::move(nodes);
  plan.memory = memory;
  plan.schedule_options = options;
  plan.params = params;
  GDR_ASSIGN_OR_RETURN(plan.schedule, schedule::BuildSchedule(Shapes(plan.nodes, memory), options));
  plan.fingerprint = Fingerprint(plan);
  static std::atomic<uint64_t> next_id{1};
  plan.id = next_id.fetch_add(1);
  return plan;
}

std::string Fingerprint(const Plan& plan) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](absl::string_view s) {
    for (unsigned char c : s) {
      h ^= c;
      h *= 1099511628211ull;
    }
    h ^= 0xff;
    h *= 1099511628211ull;
  };
  for (const auto& n : plan.nodes) {
    mix(n.name);
    mix(n.address);
    for (const auto& r : n.rails) mix(absl::StrCat(r.nic, "/", r.gpu ? static_cast<int>(*r.gpu) : -1));
  }
  mix(plan.memory);
  const auto& o = plan.schedule_options;
  mix(absl::StrCat(schedule::ModeName(o.mode), o.bidirectional, o.quick_matchings, o.seed,
                   o.max_concurrent, o.mode == schedule::Mode::kIncast ? absl::StrCat("/", o.fan_in) : ""));
  for (const auto& [a, b] : o.pairs) mix(absl::StrCat(a, ">", b));
  for (size_t r = 0; r < o.planned.size(); ++r) {  // cover, shift: the fabric's rounds
    std::string round = absl::StrCat("round ", r);
    for (const schedule::Test& t : o.planned[r])
      absl::StrAppend(&round, " ", t.src, ".", t.rail, ">", t.dst, ".", t.TargetRail());
    mix(round);
  }
  std::string params;
  plan.params.SerializeToString(&params);  // proto3 scalars serialize deterministically
  mix(params);
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, h);
  return buf;
}

std::vector<PlanNode> NodesFromInventory(const inventory::Inventory& inventory) {
  std::vector<PlanNode> out;
  out.reserve(inventory.nodes.size());
  for (const auto& n : inventory.nodes) {
    PlanNode p;
    p.name = n.name;
    p.address = n.address;
    p.rails = n.rails.empty() ? std::vector<inventory::Rail>{inventory::Rail{}} : n.rails;
    p.rail_gbps.assign(p.rails.size(), n.link_gbps);
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace gdrbench::controller::run
