#include "controller/run/discover.h"

#include "common/printable.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "spdlog/spdlog.h"

namespace gdrbench::controller::run {
namespace {

// What tells one agent from another beyond its hostname: the devices it owns
// and the hardware's own identifiers (NIC node GUIDs, GPU UUIDs).
std::string Identity(const v1::NodeInfo& info) {
  std::vector<std::string> parts(info.devices_owned().begin(), info.devices_owned().end());
  for (const auto& nic : info.nics()) parts.push_back(absl::StrCat("nic=", nic.node_guid()));
  for (const auto& gpu : info.gpus()) parts.push_back(absl::StrCat("gpu=", gpu.uuid()));
  std::sort(parts.begin(), parts.end());
  return absl::StrJoin(parts, ",");
}

std::vector<std::optional<v1::NodeInfo>> AskDiscovered(const inventory::Inventory& inv,
                                                       const std::vector<AgentApi*>& agents,
                                                       uint32_t parallelism) {
  std::vector<std::optional<v1::NodeInfo>> infos(inv.nodes.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next.fetch_add(1); i < inv.nodes.size(); i = next.fetch_add(1)) {
      if (!inv.nodes[i].name_from_agent) continue;
      auto info = agents[i]->GetNodeInfo();
      if (info.ok() && !info->hostname().empty()) {
        infos[i] = std::move(*info);
      } else if (!info.ok()) {
        spdlog::warn("{}: no node name from its agent: {}", inv.nodes[i].address,
                     std::string(info.status().message()));
      }
    }
  };
  std::vector<std::thread> threads;
  size_t n = std::min<size_t>(std::max<uint32_t>(parallelism, 1), inv.nodes.size());
  for (size_t t = 0; t < n; ++t) threads.emplace_back(work);
  for (auto& t : threads) t.join();
  return infos;
}

}  // namespace

absl::StatusOr<std::vector<size_t>> NameDiscoveredNodes(inventory::Inventory* inv,
                                                        const std::vector<AgentApi*>& agents,
                                                        uint32_t parallelism) {
  std::vector<std::optional<v1::NodeInfo>> infos = AskDiscovered(*inv, agents, parallelism);
  struct Seen {
    size_t index;
    std::string identity;
  };
  std::map<std::string, Seen> by_name;
  std::vector<size_t> kept;
  std::vector<inventory::Node> nodes;
  for (size_t i = 0; i < inv->nodes.size(); ++i) {
    inventory::Node node = inv->nodes[i];
    std::string identity;
    if (infos[i]) {
      node.name = Printable(infos[i]->hostname());  // the agent's word: no control bytes
      identity = Identity(*infos[i]);
    }
    auto [it, fresh] = by_name.try_emplace(node.name, Seen{i, identity});
    if (!fresh) {
      const inventory::Node& first = inv->nodes[it->second.index];
      if (infos[i] && first.name_from_agent && it->second.identity == identity) {
        spdlog::info("{}: {} is also at {}; kept once", node.name, node.address, first.address);
        continue;
      }
      if (!first.name_from_agent) {
        return absl::InvalidArgumentError(absl::StrCat(
            inv->source, ": node '", node.name, "' is listed at ", first.address,
            " and found by DNS at ", node.address, ": list it once"));
      }
      return absl::InvalidArgumentError(absl::StrCat(
          inv->source, ": the agents at ", first.address, " and ", node.address,
          " both report hostname '", node.name,
          "' but are not the same agent (other devices): give the nodes distinct hostnames"));
    }
    kept.push_back(i);
    nodes.push_back(std::move(node));
  }
  inv->nodes = std::move(nodes);
  return kept;
}

}  // namespace gdrbench::controller::run
