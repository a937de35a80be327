#include "controller/topology/show.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gdrbench::controller::topology {
namespace {

std::string Port(const Fabric& f, const PortRef& p) {
  const Device& d = f.devices.at(p.device);
  auto name = d.port_names.find(p.port);
  const std::string port = name != d.port_names.end() ? name->second : absl::StrCat(p.port);
  return d.description.empty() || d.description == d.id ? absl::StrCat(d.id, "[", port, "]")
                                                         : absl::StrCat(d.id, "[", port, "] \"", d.description, "\"");
}

void Switches(const Fabric& f, std::string& out) {
  std::map<std::string, size_t> cables;
  for (const Cable& c : f.cables) {
    ++cables[c.lower.device];
    ++cables[c.upper.device];
  }
  std::map<int, std::vector<const Device*>> by_tier;
  for (const auto& [id, d] : f.devices) {
    if (d.kind == DeviceKind::kSwitch) by_tier[d.tier].push_back(&d);
  }
  absl::StrAppend(&out, "switches: ", f.CountDevices(DeviceKind::kSwitch), "\n");
  for (const auto& [tier, devices] : by_tier) {
    absl::StrAppend(&out, "  tier ", tier, tier == 1 ? " (leaves)" : tier == 2 ? " (spines)" : "", ": ",
                    devices.size(), "\n");
    for (const Device* d : devices) {
      absl::StrAppend(&out, "    ", d->id, " \"", d->description, "\"  ", cables[d->id], " cables\n");
    }
  }
}

void Cables(const Fabric& f, std::string& out) {
  std::map<int, std::map<double, size_t>> rates;  // tier -> Gb/s -> cables
  for (const Cable& c : f.cables) ++rates[c.tier][c.gbps];
  absl::StrAppend(&out, "cables: ", f.cables.size(), "\n");
  for (const auto& [tier, by_rate] : rates) {
    size_t n = 0;
    std::string parts;
    for (const auto& [gbps, count] : by_rate) {
      n += count;
      absl::StrAppend(&parts, parts.empty() ? "" : ", ", count, " at ",
                      gbps > 0 ? absl::StrFormat("%g Gb/s", gbps) : std::string("an unknown rate"));
    }
    absl::StrAppend(&out, "  ", tier < 0 ? "untiered (an end has no record of its own)" : CableTierName(tier), ": ", n,
                    " (", parts, ")\n");
  }
  for (const std::string& id : f.unrecorded_peers) absl::StrAppend(&out, "  no record of its own: ", id, "\n");
}

}  // namespace

std::string CableTierName(int tier) {
  switch (tier) {
    case 0: return "host<->leaf";
    case 1: return "leaf<->spine";
    case 2: return "spine<->core";
    default: return absl::StrCat("tier ", tier);
  }
}

std::string RenderFabric(const Fabric& f, const std::string& source, const Match* match) {
  std::string out = absl::StrCat("topology ", source, ": ", f.CountDevices(DeviceKind::kSwitch), " switches, ",
                                 f.CountDevices(DeviceKind::kHost), " host ports, ", f.cables.size(), " cables\n");
  Switches(f, out);
  Cables(f, out);
  if (match == nullptr) return out;
  size_t missing = match->rails.size() - match->found();
  absl::StrAppend(&out, "rails matched: ", match->found(), " of ", match->rails.size(), "\n");
  absl::StrAppend(&out, "nodes not found: ", missing, "\n");
  for (const RailPort& r : match->rails) {
    if (!r.found) absl::StrAppend(&out, "  ", r.why, "\n");
  }
  absl::StrAppend(&out, "cables without a node: ", match->cables_without_node.size(), "\n");
  for (size_t i : match->cables_without_node) {
    const Cable& c = f.cables[i];
    absl::StrAppend(&out, "  ", Port(f, c.lower), " <-> ", Port(f, c.upper), "  (", c.where, ")\n");
  }
  return out;
}

}  // namespace gdrbench::controller::topology
