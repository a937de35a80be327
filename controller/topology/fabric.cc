#include "controller/topology/fabric.h"

#include <algorithm>
#include <deque>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"

namespace gdrbench::controller::topology {

size_t Fabric::CountDevices(DeviceKind kind) const {
  return std::count_if(devices.begin(), devices.end(), [&](const auto& kv) { return kv.second.kind == kind; });
}

std::vector<size_t> Fabric::CablesPerTier() const {
  std::vector<size_t> per;
  for (const Cable& c : cables) {
    if (c.tier < 0) continue;
    if (per.size() <= static_cast<size_t>(c.tier)) per.resize(c.tier + 1);
    ++per[c.tier];
  }
  return per;
}

std::string NormalizeGuid(const std::string& text) {
  std::string hex = absl::AsciiStrToLower(text);
  if (absl::StartsWith(hex, "0x")) hex = hex.substr(2);
  if (hex.empty() || hex.size() > 16 || hex.find_first_not_of("0123456789abcdef") != std::string::npos) return "";
  return "0x" + std::string(16 - hex.size(), '0') + hex;
}

double LinkGbps(const std::string& link) {
  size_t x = link.find('x');
  if (x == std::string::npos || x == 0) return 0;
  int width = 0;
  if (!absl::SimpleAtoi(link.substr(0, x), &width) || width <= 0) return 0;
  static const std::map<std::string, double> kLane = {
      {"SDR", 2.5}, {"DDR", 5},  {"QDR", 10},  {"FDR10", 10}, {"FDR", 14},
      {"EDR", 25},  {"HDR", 50}, {"NDR", 100}, {"XDR", 200}};
  auto it = kLane.find(link.substr(x + 1));
  return it == kLane.end() ? 0 : width * it->second;
}

void AssignTiers(Fabric& fabric) {
  std::map<std::string, std::vector<std::string>> adjacent;
  for (const Cable& c : fabric.cables) {
    adjacent[c.lower.device].push_back(c.upper.device);
    adjacent[c.upper.device].push_back(c.lower.device);
  }
  std::deque<std::string> queue;
  for (auto& [id, d] : fabric.devices) {
    const bool seed = d.kind == DeviceKind::kHost && d.recorded();
    d.tier = seed ? 0 : -1;
    if (seed) queue.push_back(id);
  }
  while (!queue.empty()) {
    const std::string id = queue.front();
    queue.pop_front();
    const int next = fabric.devices.at(id).tier + 1;
    for (const std::string& peer : adjacent[id]) {
      Device& p = fabric.devices.at(peer);
      if (p.tier >= 0 || !p.recorded()) continue;
      p.tier = next;
      queue.push_back(peer);
    }
  }
  for (Cable& c : fabric.cables) {
    const Device& a = fabric.devices.at(c.lower.device);
    const Device& b = fabric.devices.at(c.upper.device);
    if (b.tier >= 0 && (a.tier < 0 || b.tier < a.tier)) std::swap(c.lower, c.upper);
    c.tier = a.recorded() && b.recorded() && a.tier >= 0 && b.tier >= 0 ? std::min(a.tier, b.tier) : -1;
  }
}

}  // namespace gdrbench::controller::topology
