#include "controller/analysis/uniformity.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace gdrbench::controller::analysis {
namespace {

constexpr char kAbsent[] = "absent";
constexpr size_t kNamedAtMost = 8;  // nodes named per value before "and N more"

std::string Names(const std::vector<std::string>& nodes) {
  if (nodes.size() <= kNamedAtMost) return absl::StrJoin(nodes, ", ");
  std::vector<std::string> head(nodes.begin(), nodes.begin() + kNamedAtMost);
  return absl::StrCat(absl::StrJoin(head, ", "), " and ", nodes.size() - kNamedAtMost, " more");
}

VersionSpread Spread(const std::string& component, const std::vector<std::string>& names,
                     const std::vector<v1::NodeInfo>& infos,
                     const std::function<std::string(const v1::NodeInfo&)>& get) {
  VersionSpread s;
  s.component = component;
  std::map<std::string, std::vector<std::string>> by_value;
  for (size_t i = 0; i < names.size() && i < infos.size(); ++i) {
    if (infos[i].hostname().empty()) continue;  // the agent did not answer
    std::string v = get(infos[i]);
    by_value[v.empty() ? kAbsent : v].push_back(names[i]);
  }
  for (auto& [v, nodes] : by_value) s.values.emplace_back(v, std::move(nodes));
  std::stable_sort(s.values.begin(), s.values.end(), [](const auto& a, const auto& b) {
    return a.second.size() > b.second.size();
  });
  if (s.values.size() > 1) {
    s.split = s.values[0].second.size() == s.values[1].second.size();
    for (size_t v = 1; v < s.values.size(); ++v) {
      s.odd_nodes.insert(s.odd_nodes.end(), s.values[v].second.begin(), s.values[v].second.end());
    }
  }
  return s;
}

}  // namespace

std::string HcaFirmware(const v1::NodeInfo& info) {
  std::set<std::string> fw;
  for (const auto& nic : info.nics()) {
    if (!nic.firmware_version().empty()) fw.insert(nic.firmware_version());
  }
  return absl::StrJoin(fw, ", ");
}

std::vector<VersionSpread> FleetUniformity(const std::vector<std::string>& names,
                                           const std::vector<v1::NodeInfo>& infos) {
  using Get = std::function<std::string(const v1::NodeInfo&)>;
  const std::pair<const char*, Get> components[] = {
      {"kernel", [](const v1::NodeInfo& i) { return i.software().kernel(); }},
      {"NVIDIA driver", [](const v1::NodeInfo& i) { return i.software().nvidia_driver(); }},
      {"CUDA driver", [](const v1::NodeInfo& i) { return i.software().cuda_driver(); }},
      {"rdma-core", [](const v1::NodeInfo& i) { return i.software().rdma_core(); }},
      {"OFED", [](const v1::NodeInfo& i) { return i.software().ofed(); }},
      {"HCA firmware", HcaFirmware},
      {"gdrbench agent", [](const v1::NodeInfo& i) { return i.software().agent(); }},
  };
  std::vector<VersionSpread> out;
  for (const auto& [component, get] : components) {
    VersionSpread s = Spread(component, names, infos, get);
    if (s.values.empty() || (s.values.size() == 1 && s.values[0].first == kAbsent)) continue;
    out.push_back(std::move(s));
  }
  return out;
}

std::string FormatUniformity(const std::vector<VersionSpread>& spreads, size_t nodes_answering) {
  size_t differ = 0;
  for (const auto& s : spreads) differ += !s.uniform();
  std::string out = absl::StrCat(
      "fleet uniformity (", nodes_answering, " nodes answering): ",
      differ == 0 ? "every component is on one version"
                  : absl::StrCat(differ, " component(s) differ: upgrade the stack together, in one "
                                         "maintenance window"),
      "\n");
  size_t width = 0;
  for (const auto& s : spreads) width = std::max(width, s.component.size());
  for (const auto& s : spreads) {
    absl::StrAppend(&out, "  ", s.component, std::string(width - s.component.size() + 2, ' '));
    if (s.uniform()) {
      absl::StrAppend(&out, s.values[0].first, " on all ", s.values[0].second.size(), " nodes\n");
      continue;
    }
    std::vector<std::string> parts;
    for (size_t v = 0; v < s.values.size(); ++v) {
      const auto& [value, nodes] = s.values[v];
      parts.push_back(v == 0 && !s.split ? absl::StrCat(value, " on ", nodes.size(), " nodes")
                                         : absl::StrCat(value, " on ", Names(nodes)));
    }
    absl::StrAppend(&out, absl::StrJoin(parts, "; "),
                    s.split ? ": no majority" : absl::StrCat(": odd one(s) out: ", Names(s.odd_nodes)),
                    "\n");
  }
  return out;
}

}  // namespace gdrbench::controller::analysis
