// The findings' words: names of hosts, switches, cables and flows, and the
// Result() steps (convictions, nodes, ecmp uplinks, what is left).
#include "controller/topology/isolate.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace gdrbench::controller::topology {
namespace {

bool Bad(FlowVerdict v) { return v != FlowVerdict::kOk; }

// "A", "A and B", "A, B and C".
std::string JoinAnd(const std::vector<std::string>& items) {
  if (items.size() <= 1) return items.empty() ? "" : items[0];
  std::vector<std::string> head(items.begin(), items.end() - 1);
  return absl::StrCat(absl::StrJoin(head, ", "), " and ", items.back());
}

// At most `shown` items, then "and N more".
std::string JoinSome(const std::vector<std::string>& items, size_t shown) {
  if (items.size() <= shown) return absl::StrJoin(items, "; ");
  std::vector<std::string> head(items.begin(), items.begin() + shown);
  return absl::StrCat(absl::StrJoin(head, "; "), "; and ", items.size() - shown, " more");
}

std::vector<HostName> NamesFromDescriptions(const Fabric& fabric, const FabricIndex& index) {
  std::vector<HostName> names(index.hosts());
  for (int h = 0; h < index.hosts(); ++h) {
    const std::string& id = index.HostId(h);
    auto it = fabric.devices.find(id);
    const std::string text =
        it == fabric.devices.end() || it->second.description.empty() ? id : it->second.description;
    const size_t space = text.find(' ');
    names[h] = space == std::string::npos ? HostName{text, ""}
                                          : HostName{text.substr(0, space), text.substr(space + 1)};
  }
  return names;
}

HostNamer FromVector(std::vector<HostName> names) {
  return [names = std::move(names)](int h) {
    if (h < 0 || static_cast<size_t>(h) >= names.size()) return HostName{absl::StrCat("host ", h), ""};
    return names[h];
  };
}

}  // namespace

HostNamer DescriptionNames(const Fabric& fabric, const FabricIndex& index) {
  return FromVector(NamesFromDescriptions(fabric, index));
}

HostNamer MatchNames(const Match& match, const Fabric& fabric, const FabricIndex& index) {
  std::vector<HostName> names = NamesFromDescriptions(fabric, index);
  std::unordered_map<std::string, int> host_of;
  for (int h = 0; h < index.hosts(); ++h) host_of.emplace(index.HostId(h), h);
  for (const RailPort& rail : match.rails) {
    auto it = rail.found ? host_of.find(rail.port.device) : host_of.end();
    if (it != host_of.end()) names[it->second] = HostName{rail.node, rail.nic};
  }
  return FromVector(std::move(names));
}

const char* FindingKindName(FindingKind kind) {
  switch (kind) {
    case FindingKind::kCable: return "cable";
    case FindingKind::kNic: return "nic";
    case FindingKind::kNode: return "node";
    case FindingKind::kUplinks: return "uplinks";
  }
  return "?";
}

// ---------------------------------------------------------------- findings

std::string Isolator::HostText(int h) const {
  const HostName& n = host_names_[h];
  return n.nic.empty() ? n.node : absl::StrCat(n.node, " ", n.nic);
}

std::string Isolator::FlowText(const Flow& f) const {
  return absl::StrCat(HostText(f.src), " -> ", HostText(f.dst));
}

std::string Isolator::Evidence(const Flow& f) const {
  const std::string when = f.round == 0 ? "in the sweep" : absl::StrCat("in retest round ", f.round);
  // One decimal on a real fabric ("118.5"), three digits below 1 Gb/s (the lab: "0.0285").
  const std::string gbps =
      f.gbps >= 1 || f.gbps == 0 ? absl::StrFormat("%.1f", f.gbps) : absl::StrFormat("%.3g", f.gbps);
  const std::string read = f.verdict == FlowVerdict::kFailed ? absl::StrCat("failed (", gbps, " Gb/s)")
                           : f.verdict == FlowVerdict::kLow  ? absl::StrCat("read ", gbps, " Gb/s (low)")
                                                             : absl::StrCat("read ", gbps, " Gb/s (ok)");
  return absl::StrCat(FlowText(f), " ", read, " ", when);
}

std::string Isolator::DeviceName(const std::string& id) const {
  auto it = fabric_->devices.find(id);
  return it == fabric_->devices.end() || it->second.description.empty() ? id : it->second.description;
}

std::string Isolator::DeviceText(const std::string& id, int port) const {
  auto it = fabric_->devices.find(id);
  if (it != fabric_->devices.end()) {
    auto named = it->second.port_names.find(port);
    if (named != it->second.port_names.end()) return absl::StrCat(DeviceName(id), " ", named->second);
  }
  return absl::StrCat(DeviceName(id), " port ", port);
}

std::string Isolator::CableText(int cable) const {
  const Cable& c = fabric_->cables[cable];
  const int host = host_of_device_[cable_lower_[cable]];
  if (c.tier == 0 && host >= 0)
    return absl::StrCat(HostText(host), " <-> ", DeviceText(c.upper.device, c.upper.port));
  return absl::StrCat(DeviceText(c.lower.device, c.lower.port), c.tier == 0 ? " <-> " : " -> ",
                      DeviceText(c.upper.device, c.upper.port));
}

std::string Isolator::SuspectsText(const std::vector<int>& cables) const {
  std::vector<std::string> texts;
  for (int c : cables) texts.push_back(CableText(c));
  return JoinAnd(texts);
}

// The other bad flows across the cable, as evidence.
std::string Isolator::AlsoLow(int cable, int except) const {
  std::vector<std::string> items;
  for (size_t i = 0; i < flows_.size(); ++i) {
    const Flow& f = flows_[i];
    if (static_cast<int>(i) == except || !Bad(f.verdict)) continue;
    if (std::any_of(f.path.begin(), f.path.end(),
                    [&](CableUse u) { return static_cast<int>(CableOf(u)) == cable; })) {
      items.push_back(Evidence(f));
    }
  }
  return items.empty() ? "" : absl::StrCat("; also bad across it: ", JoinSome(items, 3));
}

void Isolator::Convictions(const Analysis& a, Isolation& out) const {
  for (int c = 0; c < ix_->cables(); ++c) {
    const int by = a.convicted_by[c];
    if (by < 0) continue;
    Finding f;
    f.kind = ix_->Tier(c) == 0 ? FindingKind::kNic : FindingKind::kCable;
    f.subject = CableText(c);
    f.reason = absl::StrCat(
        f.kind == FindingKind::kNic ? "the NIC or its cable (flows cannot tell them apart): " : "",
        Evidence(flows_[by]),
        flows_[by].path.size() > 1 ? ", and every other cable of its path carried a flow that passed" : "",
        AlsoLow(c, by));
    f.cables = {c};
    out.findings.push_back(std::move(f));
  }
}

// A node all of whose host ports (two or more) are convicted is named once,
// as the node, in place of its ports.
void Isolator::Nodes(const Analysis& a, Isolation& out) const {
  std::map<std::string, int> ports;  // node -> host ports in the fabric
  for (const HostName& n : host_names_) ++ports[n.node];
  std::map<std::string, std::vector<size_t>> convicted;  // node -> its kNic findings
  for (size_t k = 0; k < out.findings.size(); ++k) {
    const Finding& f = out.findings[k];
    if (f.kind == FindingKind::kNic)
      convicted[host_names_[host_of_device_[cable_lower_[f.cables[0]]]].node].push_back(k);
  }
  std::vector<char> drop(out.findings.size(), 0);
  std::vector<Finding> nodes;
  for (const auto& [node, ks] : convicted) {
    if (ports[node] < 2 || static_cast<int>(ks.size()) != ports[node]) continue;
    Finding n{FindingKind::kNode, node, "", {}};
    std::vector<std::string> each;
    for (size_t k : ks) {
      const int c = out.findings[k].cables[0];
      each.push_back(absl::StrCat(host_names_[host_of_device_[cable_lower_[c]]].nic, ": ",
                                  Evidence(flows_[a.convicted_by[c]])));
      n.cables.push_back(c);
      drop[k] = 1;
    }
    n.reason = absl::StrCat("every one of its ", ks.size(),
                            " host ports is low on its own: ", absl::StrJoin(each, "; "));
    nodes.push_back(std::move(n));
  }
  std::vector<Finding> kept;
  for (size_t k = 0; k < out.findings.size(); ++k) {
    if (!drop[k]) kept.push_back(std::move(out.findings[k]));
  }
  kept.insert(kept.end(), std::make_move_iterator(nodes.begin()), std::make_move_iterator(nodes.end()));
  out.findings = std::move(kept);
}

// ecmp: bad flows between leaves whose host cables both passed elsewhere.
// Returns, per flow, whether it was taken here (named or left unresolved).
std::vector<char> Isolator::Uplinks(const Analysis& a, Isolation& out) const {
  std::vector<char> taken(flows_.size(), 0);
  std::vector<int> open;
  for (int i : a.unexplained) {
    if (!flows_[i].complete && Suspects(flows_[i]).empty()) open.push_back(i);
  }
  while (!open.empty()) {
    std::map<int, int> count;  // leaf -> open flows through it
    for (int i : open) {
      ++count[ix_->LeafOf(flows_[i].src)];
      ++count[ix_->LeafOf(flows_[i].dst)];
    }
    const auto best = std::max_element(count.begin(), count.end(),
                                       [](const auto& x, const auto& y) { return x.second < y.second; });
    if (best->second < 2) break;
    const int leaf = best->first;
    Finding f{FindingKind::kUplinks, "", "", ix_->Up(leaf)};
    f.subject = absl::StrCat(DeviceName(ix_->DeviceId(leaf)), " uplinks");
    std::vector<std::string> items;
    std::vector<int> rest;
    for (int i : open) {
      const bool through = ix_->LeafOf(flows_[i].src) == leaf || ix_->LeafOf(flows_[i].dst) == leaf;
      if (!through) {
        rest.push_back(i);
        continue;
      }
      items.push_back(Evidence(flows_[i]));
      taken[i] = 1;
    }
    f.reason = absl::StrCat(
        "under ecmp the switches spread flows by hash, so no path singles out one uplink; ", items.size(),
        " flows through this leaf were bad while both their host cables carried flows that passed, so the "
        "bad "
        "cable is one of its uplinks or above them: ",
        JoinSome(items, 3));
    out.findings.push_back(std::move(f));
    open = std::move(rest);
  }
  for (int i : open) {
    taken[i] = 1;
    if (!out.finished) continue;
    const Flow& f = flows_[i];
    auto name = [&](int h) { return DeviceName(ix_->DeviceId(ix_->LeafOf(h))); };
    out.unresolved.push_back(Unresolved{
        {},
        absl::StrCat(
            "cannot separate the uplinks of ", name(f.src), " and ", name(f.dst),
            ": under ecmp no path singles out an uplink, and this is the only bad flow through either (",
            Evidence(f), ")")});
  }
  return taken;
}

// Bad flows nothing explains, grouped by their suspects.
void Isolator::Unexplained(const Analysis& a, const std::vector<char>& taken, Isolation& out) const {
  std::map<std::vector<int>, std::vector<int>> groups;  // suspects -> flows
  for (int i : a.unexplained) {
    if (!taken[i]) groups[Suspects(flows_[i])].push_back(i);
  }
  SharedSwitches(groups, out);
  for (const auto& [suspects, flows] : groups) {
    std::vector<std::string> items;
    for (int i : flows) items.push_back(Evidence(flows_[i]));
    const std::string evidence = JoinSome(items, 3);
    std::string why;
    if (suspects.empty()) {
      why = absl::StrCat(
          "every cable of its path carried a flow that passed, so no cable explains it (the hosts' "
          "PCIe or GPU, a transient, or routing other than the one assumed): ",
          evidence);
    } else if (!flows_[flows[0]].complete) {
      why = absl::StrCat(
          "cannot separate ", SuspectsText(suspects),
          " and the uplinks between their leaves: no exonerated path isolates them (under ecmp only "
          "flows within one leaf have a known path): ",
          evidence);
    } else if (rounds_ >= kMaxRounds) {
      why = absl::StrCat("cannot separate ", SuspectsText(suspects), " within ", kMaxRounds,
                         " retest rounds: ", evidence);
    } else {
      why = absl::StrCat("cannot separate ", SuspectsText(suspects),
                         ": no exonerated path isolates them: ", evidence);
    }
    out.unresolved.push_back(Unresolved{suspects, std::move(why)});
  }
}

// The one switch every suspect of a group touches, -1 when none (or a
// group of one cable, or an ecmp flow).
int Isolator::CommonSwitch(const std::vector<int>& suspects) const {
  if (suspects.size() < 2) return -1;
  std::vector<int> common;
  for (size_t k = 0; k < suspects.size(); ++k) {
    std::vector<int> ends;
    for (int d : {cable_lower_[suspects[k]], ix_->Upper(suspects[k])}) {
      if (host_of_device_[d] < 0 && (k == 0 || std::count(common.begin(), common.end(), d)))
        ends.push_back(d);
    }
    common = std::move(ends);
  }
  return common.size() == 1 ? common[0] : -1;
}

// Groups whose suspects all touch one switch, two groups or more to a
// switch, are reported once, as that switch's cables (a dead switch leaves
// every path across it with two of its cables and none cleared), and taken
// out of `groups`.
void Isolator::SharedSwitches(std::map<std::vector<int>, std::vector<int>>& groups, Isolation& out) const {
  std::map<int, std::vector<std::vector<int>>> by_switch;
  for (const auto& [suspects, flows] : groups) {
    const int sw = flows_[flows[0]].complete ? CommonSwitch(suspects) : -1;
    if (sw >= 0) by_switch[sw].push_back(suspects);
  }
  for (const auto& [sw, keys] : by_switch) {
    if (keys.size() < 2) continue;
    std::set<int> cables;
    std::vector<std::string> items;
    for (const std::vector<int>& key : keys) {
      cables.insert(key.begin(), key.end());
      for (int i : groups.at(key)) items.push_back(Evidence(flows_[i]));
      groups.erase(key);
    }
    std::vector<std::string> texts;
    for (int c : cables) texts.push_back(CableText(c));
    out.unresolved.push_back(Unresolved{
        std::vector<int>(cables.begin(), cables.end()),
        absl::StrCat(
            "cannot separate the ", cables.size(), " cables of ", DeviceName(ix_->DeviceId(sw)),
            " that bad flows crossed: no flow across any of them passed, so the switch itself is suspect: ",
            JoinSome(texts, 4), "; flows: ", JoinSome(items, 3))});
  }
}

Isolation Isolator::Result() const {
  Isolation out;
  out.extra_rounds = rounds_;
  out.finished = finished_ && outstanding_.empty();
  const Analysis a = Analyze();
  Convictions(a, out);
  Nodes(a, out);
  const std::vector<char> taken = Uplinks(a, out);
  if (out.finished) Unexplained(a, taken, out);
  return out;
}

}  // namespace gdrbench::controller::topology
