#include "controller/topology/isolate.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status.h"

namespace gdrbench::controller::topology {
namespace {

bool Bad(FlowVerdict v) { return v != FlowVerdict::kOk; }

}  // namespace

// ---------------------------------------------------------------- set-up

Isolator::Isolator(const Fabric& fabric, const FabricIndex& index, Routing routing)
    : fabric_(&fabric), ix_(&index), routing_(routing) {}

absl::StatusOr<Isolator> Isolator::Create(const Fabric& fabric, const FabricIndex& index, Routing routing,
                                          HostNamer names) {
  if (static_cast<size_t>(index.cables()) != fabric.cables.size()) {
    return absl::InvalidArgumentError(absl::StrCat("isolate: the fabric index has ", index.cables(),
                                                   " cables and the fabric ", fabric.cables.size(),
                                                   ": the index was built from another fabric"));
  }
  std::unordered_set<std::string> known;
  for (int d = 0; d < index.devices(); ++d) known.insert(index.DeviceId(d));
  for (const Cable& c : fabric.cables) {
    for (const std::string* end : {&c.lower.device, &c.upper.device}) {
      if (!known.count(*end)) {
        return absl::InvalidArgumentError(absl::StrCat("isolate: ", c.where, ": a cable to ", *end,
                                                       ", a device the fabric index does not list: the index "
                                                       "was built from another fabric"));
      }
    }
  }
  Isolator iso(fabric, index, routing);
  iso.IndexDevices(names ? names : DescriptionNames(fabric, index));
  return iso;
}

// Device indices of cable ends, host positions, each leaf's ancestors, the
// planes' leaves, and every host's name (asked once).
void Isolator::IndexDevices(const HostNamer& names) {
  const FabricIndex& ix = *ix_;
  std::unordered_map<std::string, int> id_of;
  for (int d = 0; d < ix.devices(); ++d) id_of.emplace(ix.DeviceId(d), d);
  for (const Cable& c : fabric_->cables) cable_lower_.push_back(id_of.at(c.lower.device));
  host_of_device_.assign(ix.devices(), -1);
  host_names_.resize(ix.hosts());
  pos_.assign(ix.hosts(), 0);
  for (int h = 0; h < ix.hosts(); ++h) {
    host_of_device_[id_of.at(ix.HostId(h))] = h;
    host_names_[h] = names(h);
  }
  above_.resize(ix.devices());
  std::vector<int> seen_from(ix.devices(), -1);  // the leaf whose climb last reached a device
  std::map<int, int> plane_index;                // component -> index into plane_leaves_
  for (int leaf : ix.Leaves()) {
    const auto& hosts = ix.LeafHosts(leaf);
    for (size_t p = 0; p < hosts.size(); ++p) pos_[hosts[p]] = static_cast<int>(p);
    auto [it, fresh] = plane_index.emplace(ix.DeviceComponent(leaf), static_cast<int>(plane_leaves_.size()));
    if (fresh) plane_leaves_.emplace_back();
    plane_leaves_[it->second].push_back(leaf);
    std::vector<int>& up = above_[leaf];
    for (size_t k = 0; k <= up.size(); ++k) {  // breadth-first: `up` grows as it is walked
      const int from = k == 0 ? leaf : up[k - 1];
      for (int c : ix.Up(from)) {
        if (seen_from[ix.Upper(c)] != leaf) up.push_back(ix.Upper(c));
        seen_from[ix.Upper(c)] = leaf;
      }
    }
    std::sort(up.begin(), up.end());
  }
  plane_of_.assign(ix.hosts(), 0);
  for (int h = 0; h < ix.hosts(); ++h) plane_of_[h] = plane_index.at(ix.DeviceComponent(ix.LeafOf(h)));
  cleared_by_.assign(ix.cables(), -1);
}

// ---------------------------------------------------------------- evidence

bool Isolator::KnownPath(int s, int d, std::vector<CableUse>& path) const {
  if (routing_ == Routing::kFtree) {
    path = ix_->FtreePath(s, d);
    return true;
  }
  path = {static_cast<CableUse>(ix_->HostCable(s)) * 2, static_cast<CableUse>(ix_->HostCable(d)) * 2 + 1};
  return ix_->LeafOf(s) == ix_->LeafOf(d);
}

absl::Status Isolator::Parse(const FlowOutcome& o, size_t i, Flow& out) const {
  const PlannedFlow& p = o.flow;
  for (int h : {p.src, p.dst}) {
    if (h < 0 || h >= ix_->hosts()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "outcome ", i, ": host ", h, " is out of range (the fabric has ", ix_->hosts(), " host ports)"));
    }
  }
  out = Flow{p.src, p.dst, {}, true, o.verdict, o.gbps, 0};
  const std::string what = absl::StrCat("outcome ", i, " (", FlowText(out), ")");
  if (p.src == p.dst)
    return absl::InvalidArgumentError(absl::StrCat(what, ": a flow from a host port to itself"));
  if (!(o.gbps >= 0) || std::isinf(o.gbps)) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": ", o.gbps, " Gb/s is not a rate"));
  }
  for (CableUse u : p.cables) {
    if (CableOf(u) >= static_cast<uint32_t>(ix_->cables())) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": cable ", CableOf(u), " is not in the fabric (it has ", ix_->cables(), " cables)"));
    }
  }
  out.complete = KnownPath(p.src, p.dst, out.path);
  const char* routing = routing_ == Routing::kFtree ? "ftree" : "ecmp";
  if (out.path.empty()) return absl::InvalidArgumentError(absl::StrCat(what, ": no ftree path joins them"));
  if (p.cables.empty() || p.cables == out.path) return absl::OkStatus();
  const size_t hop = std::mismatch(p.cables.begin(), p.cables.end(), out.path.begin(), out.path.end()).first -
                     p.cables.begin();
  auto use = [&](const std::vector<CableUse>& v, size_t k) {
    if (k >= v.size()) return std::string("nothing");
    return absl::StrCat("cable ", CableOf(v[k]), Downward(v[k]) ? " down (" : " up (",
                        CableText(CableOf(v[k])), ")");
  };
  return absl::InvalidArgumentError(absl::StrCat(what, ": hop ", hop + 1, " is ", use(p.cables, hop),
                                                 ", but ", routing, " routes it on ", use(out.path, hop)));
}

absl::Status Isolator::MatchesOutstanding(const std::vector<Flow>& flows) const {
  std::map<std::pair<int, int>, int> count;
  for (const PlannedFlow& p : outstanding_) ++count[{p.src, p.dst}];
  for (const Flow& f : flows) --count[{f.src, f.dst}];
  for (const auto& [pair, n] : count) {
    if (n == 0) continue;
    Flow f;
    f.src = pair.first;
    f.dst = pair.second;
    return absl::InvalidArgumentError(
        absl::StrCat("retest round ", rounds_ + 1, ": ", FlowText(f),
                     n > 0 ? " was planned but has no outcome" : " has an outcome but was not planned"));
  }
  return absl::OkStatus();
}

absl::Status Isolator::Record(absl::Span<const FlowOutcome> outcomes) {
  std::vector<Flow> parsed(outcomes.size());
  for (size_t i = 0; i < outcomes.size(); ++i) GDR_RETURN_IF_ERROR(Parse(outcomes[i], i, parsed[i]));
  const bool retest = !outstanding_.empty();
  if (retest) GDR_RETURN_IF_ERROR(MatchesOutstanding(parsed));
  for (Flow& f : parsed) {
    f.round = retest ? rounds_ + 1 : 0;
    if (!Bad(f.verdict)) {
      for (CableUse u : f.path) {
        if (cleared_by_[CableOf(u)] < 0) cleared_by_[CableOf(u)] = static_cast<int>(flows_.size());
      }
    }
    flows_.push_back(std::move(f));
  }
  if (retest) {
    ++rounds_;
    outstanding_.clear();
  }
  finished_ = false;
  return absl::OkStatus();
}

std::vector<int> Isolator::Suspects(const Flow& f) const {
  std::vector<int> out;
  for (CableUse u : f.path) {
    if (cleared_by_[CableOf(u)] < 0) out.push_back(static_cast<int>(CableOf(u)));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// Convictions are derived afresh from the evidence: a cable that a later
// flow passed over is no longer convicted by an earlier one. The latest
// convicting flow is cited (a retest aimed at the cable, where there is one).
Isolator::Analysis Isolator::Analyze() const {
  Analysis a;
  a.convicted_by.assign(ix_->cables(), -1);
  std::vector<std::vector<int>> suspects(flows_.size());
  for (size_t i = flows_.size(); i-- > 0;) {
    const Flow& f = flows_[i];
    if (!Bad(f.verdict)) continue;
    suspects[i] = Suspects(f);
    if (f.complete && suspects[i].size() == 1 && a.convicted_by[suspects[i][0]] < 0) {
      a.convicted_by[suspects[i][0]] = static_cast<int>(i);
    }
  }
  for (size_t i = 0; i < flows_.size(); ++i) {
    if (!Bad(flows_[i].verdict)) continue;
    const auto& s = suspects[i];
    if (std::none_of(s.begin(), s.end(), [&](int c) { return a.convicted_by[c] >= 0; })) {
      a.unexplained.push_back(static_cast<int>(i));
    }
  }
  return a;
}

// ---------------------------------------------------------------- retests

struct Isolator::RoundState {
  std::vector<char> busy;             // per host: in a flow of this round
  std::unordered_set<CableUse> used;  // cable directions a flow of this round crosses
  std::vector<PlannedFlow> flows;
};

// The bad flow's two leaves, and on every leaf of its plane the hosts at
// its source's and destination's positions, each once, in that order.
std::vector<int> Isolator::Partners(const Flow& f) const {
  std::vector<int> out;
  std::unordered_set<int> seen;
  auto add = [&](int h) {
    if (seen.insert(h).second) out.push_back(h);
  };
  for (int end : {f.src, f.dst}) {
    for (int h : ix_->LeafHosts(ix_->LeafOf(end))) add(h);
  }
  for (int plane : {plane_of_[f.src], plane_of_[f.dst]}) {
    for (int leaf : plane_leaves_[plane]) {
      const auto& hosts = ix_->LeafHosts(leaf);
      for (int p : {pos_[f.src], pos_[f.dst]}) {
        if (p < static_cast<int>(hosts.size())) add(hosts[p]);
      }
    }
  }
  return out;
}

// Whether `host` hangs below the cable's lower end (so a flow between it and
// a host not below may cross the cable).
bool Isolator::Below(int host, int cable) const {
  const int x = cable_lower_[cable];
  if (ix_->Tier(cable) == 0) return host_of_device_[x] == host;
  const int leaf = ix_->LeafOf(host);
  return leaf == x || std::binary_search(above_[leaf].begin(), above_[leaf].end(), x);
}

// The path's uncleared cables when it crosses `cable`; empty when it does not.
std::vector<int> Isolator::Unknowns(int cable, const std::vector<CableUse>& path) const {
  std::vector<int> out;
  bool crosses = false;
  for (CableUse u : path) {
    const int c = static_cast<int>(CableOf(u));
    crosses = crosses || c == cable;
    if (cleared_by_[c] < 0 && std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  }
  if (!crosses) out.clear();
  return out;
}

// Whether a probe over `unknowns` is worth a flow: at most one of them is
// doubted (a suspect of a bad flow with at most kMaxProbe suspects, such as
// a probe that was low), so that probes among the cables of one dead switch
// stop once each has been doubted, instead of pairing them all.
bool Isolator::Informative(const std::vector<int>& unknowns, const std::vector<char>& doubted) const {
  return std::count_if(unknowns.begin(), unknowns.end(), [&](int c) { return doubted[c] != 0; }) <= 1;
}

// A flow between a partner below the cable and one not below it, in either
// direction, that fits the round and whose known path isolates the cable
// (its only uncleared cable); with `doubted`, failing that, an informative
// probe with the fewest uncleared cables (at most kMaxProbe; the first of
// two, as small as probes come).
bool Isolator::PlaceRetest(int cable, const Flow& f, const std::vector<char>* doubted,
                           RoundState& round) const {
  std::vector<int> inside, outside;
  for (int h : Partners(f)) (Below(h, cable) ? inside : outside).push_back(h);
  std::vector<CableUse> path;
  std::pair<int, int> best{-1, -1};
  size_t best_unknowns = kMaxProbe + 1;
  const size_t good_enough = doubted ? 2 : 1;
  for (size_t k = 0; k < inside.size() * outside.size() * 2 && best_unknowns > good_enough; ++k) {
    const int a = inside[k / 2 / outside.size()], b = outside[k / 2 % outside.size()];
    const int s = k % 2 == 0 ? a : b, d = k % 2 == 0 ? b : a;
    if (round.busy[a] || round.busy[b] || !KnownPath(s, d, path)) continue;
    const std::vector<int> unknowns = Unknowns(cable, path);
    if (unknowns.empty() || unknowns.size() >= best_unknowns) continue;
    if (unknowns.size() > 1 && (!doubted || !Informative(unknowns, *doubted))) continue;
    const bool free = routing_ == Routing::kEcmp ||
                      std::none_of(path.begin(), path.end(), [&](CableUse u) { return round.used.count(u); });
    if (!free) continue;
    best = {s, d};
    best_unknowns = unknowns.size();
  }
  if (best.first < 0) return false;
  KnownPath(best.first, best.second, path);
  round.busy[best.first] = round.busy[best.second] = 1;
  round.used.insert(path.begin(), path.end());
  round.flows.push_back(PlannedFlow{best.first, best.second, path});
  return true;
}

// Retests that isolate one suspect first, for every suspect that has one;
// then probes for the suspects left. A suspect is tried from at most two
// bad flows per pass (their partners differ), which bounds a round's search
// when many flows share a dead switch.
std::vector<PlannedFlow> Isolator::NextRound() {
  if (!outstanding_.empty()) return outstanding_;
  if (rounds_ >= kMaxRounds) {
    finished_ = true;
    return {};
  }
  const Analysis a = Analyze();
  std::vector<char> doubted(ix_->cables(), 0);
  for (const Flow& f : flows_) {
    if (!Bad(f.verdict) || !f.complete) continue;
    const std::vector<int> s = Suspects(f);
    if (s.size() <= kMaxProbe) {
      for (int c : s) doubted[c] = 1;
    }
  }
  RoundState round;
  round.busy.assign(ix_->hosts(), 0);
  std::unordered_set<int> placed;
  const std::vector<char>* const passes[] = {nullptr, &doubted};  // isolating retests, then probes
  for (const std::vector<char>* probe : passes) {
    std::unordered_map<int, int> tries;
    for (int i : a.unexplained) {
      for (int c : Suspects(flows_[i])) {
        if (placed.count(c) || tries[c]++ >= 2) continue;
        if (PlaceRetest(c, flows_[i], probe, round)) placed.insert(c);
      }
    }
  }
  outstanding_ = std::move(round.flows);
  finished_ = outstanding_.empty();
  return outstanding_;
}

}  // namespace gdrbench::controller::topology
