#include "controller/topology/cover.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"

namespace gdrbench::controller::topology {
namespace {

// One round under construction: NIC exclusivity and one flow per cable direction.
class Round {
 public:
  Round(const FabricIndex& ix, Routing routing, std::vector<int>& load, std::vector<char>& busy)
      : ix_(ix), routing_(routing), load_(load), busy_(busy) {}
  ~Round() {
    for (CableUse u : touched_) load_[u] = 0;
    for (const PlannedFlow& f : flows_) busy_[f.src] = busy_[f.dst] = 0;
  }

  bool Try(int s, int d) {
    if (s == d || busy_[s] || busy_[d]) return false;
    std::vector<CableUse> path;
    if (routing_ == Routing::kFtree) {
      path = ix_.FtreePath(s, d);
    } else {
      path = {static_cast<CableUse>(ix_.HostCable(s)) * 2, static_cast<CableUse>(ix_.HostCable(d)) * 2 + 1};
    }
    if (path.empty()) return false;
    for (CableUse u : path) {
      if (load_[u] > 0) return false;
    }
    for (CableUse u : path) {
      load_[u] = 1;
      touched_.push_back(u);
    }
    busy_[s] = busy_[d] = 1;
    flows_.push_back(PlannedFlow{s, d, std::move(path)});
    return true;
  }

  // Hosts of `leaf` without a flow pair among themselves.
  void PairWithinLeaf(int leaf) {
    int waiting = -1;
    for (int h : ix_.LeafHosts(leaf)) {
      if (busy_[h]) continue;
      if (waiting < 0) {
        waiting = h;
      } else if (Try(waiting, h)) {
        waiting = -1;
      }
    }
  }

  // Free hosts of leaf `a` with free hosts of leaf `b`, first fit.
  void PairAcross(int a, int b) {
    for (int s : ix_.LeafHosts(a)) {
      if (busy_[s]) continue;
      for (int d : ix_.LeafHosts(b)) {
        if (!busy_[d] && Try(s, d)) break;
      }
    }
  }

  const std::vector<PlannedFlow>& flows() const { return flows_; }

 private:
  const FabricIndex& ix_;
  Routing routing_;
  std::vector<int>& load_;
  std::vector<char>& busy_;
  std::vector<CableUse> touched_;
  std::vector<PlannedFlow> flows_;
};

// Round k's leaf pairs of one plane: the first half with the second half
// rotated by k; an odd leaf out (a different one each round) pairs within.
std::vector<std::pair<int, int>> LeafPairs(const std::vector<int>& leaves, int k) {
  std::vector<int> p = leaves;
  if (p.size() % 2 == 1) p.erase(p.begin() + (k % p.size()));
  const size_t h = p.size() / 2;
  std::vector<std::pair<int, int>> pairs;
  for (size_t a = 0; a < h; ++a) {
    int x = p[a], y = p[h + (a + k) % h];
    if (k % 2 == 1) std::swap(x, y);
    pairs.emplace_back(x, y);
  }
  return pairs;
}

// Rounds 2k and 2k + 1 pair host p of a leaf with host p + k of its partner
// (k = 0: the shift ftree runs without two flows on a cable direction), so
// that a host whose positional partner is not tested meets another one in a
// later round.
void FillRound(Round& round, const FabricIndex& ix, const std::vector<int>& leaves,
               const std::vector<std::pair<int, int>>& pairs, int k) {
  for (const auto& [a, b] : pairs) {
    const auto& ha = ix.LeafHosts(a);
    const auto& hb = ix.LeafHosts(b);
    const size_t n = std::min(ha.size(), hb.size());
    for (size_t p = 0; p < n; ++p) round.Try(ha[p], hb[(p + static_cast<size_t>(k / 2)) % n]);
    // Hosts whose positional partner is taken or skipped (a node not
    // tested): any free host of the partner leaf, where the cables allow.
    round.PairAcross(a, b);
  }
  for (int leaf : leaves) round.PairWithinLeaf(leaf);
}

std::map<int, std::vector<int>> Planes(const FabricIndex& ix) {
  std::map<int, std::vector<int>> planes;
  for (int leaf : ix.Leaves()) planes[ix.Component(ix.LeafHosts(leaf)[0])].push_back(leaf);
  return planes;
}

// Flows per cable over the plan, and the most flows one cable direction
// carried in one round, per tier (counted, not assumed).
struct Tally {
  std::vector<int> flows;
  std::vector<int> in_round;  // per cable direction, this round
  std::map<int, int> round_max;  // tier -> most flows on one direction in a round
  explicit Tally(int cables) : flows(cables, 0), in_round(static_cast<size_t>(cables) * 2, 0) {}
  // Returns the cables this round loaded for the first time.
  std::vector<int> Add(const FabricIndex& ix, const std::vector<PlannedFlow>& round) {
    std::vector<int> first;
    std::vector<CableUse> touched;
    for (const PlannedFlow& f : round) {
      for (CableUse u : f.cables) {
        if (flows[CableOf(u)]++ == 0) first.push_back(static_cast<int>(CableOf(u)));
        if (in_round[u]++ == 0) touched.push_back(u);
        int& m = round_max[ix.Tier(static_cast<int>(CableOf(u)))];
        m = std::max(m, in_round[u]);
      }
    }
    for (CableUse u : touched) in_round[u] = 0;
    return first;
  }
};

void Summarize(const FabricIndex& ix, const Tally& t, CoverPlan& plan, bool ecmp) {
  int max_tier = 0;
  for (int c = 0; c < ix.cables(); ++c) max_tier = std::max(max_tier, ix.Tier(c));
  plan.tiers.assign(max_tier + 1, TierCoverage{});
  std::vector<double> sums(max_tier + 1, 0);
  for (int c = 0; c < ix.cables(); ++c) {
    const int tier = ix.Tier(c);
    if (tier < 0) {
      plan.uncovered.push_back({c, "an end has no record of its own in the topology"});
      continue;
    }
    TierCoverage& tc = plan.tiers[tier];
    ++tc.total;
    const bool known = !ecmp || tier == 0;
    if (known && t.flows[c] > 0) {
      ++tc.covered;
      sums[tier] += t.flows[c];
    }
  }
  for (size_t k = 0; k < plan.tiers.size(); ++k) {
    TierCoverage& tc = plan.tiers[k];
    if (tc.covered > 0 && sums[k] > 0) tc.mean_flows = sums[k] / tc.covered;
    auto m = t.round_max.find(static_cast<int>(k));
    tc.max_per_round = m == t.round_max.end() ? 0 : m->second;
  }
  for (int c : ix.SecondPortCables()) plan.uncovered.push_back({c, "a host's second port: a plan uses one per host"});
}

// The host cables of skipped hosts (1 = skipped), by cable index.
std::vector<char> SkippedCables(const FabricIndex& ix, const std::vector<char>& skip) {
  std::vector<char> cables(ix.cables(), 0);
  for (size_t h = 0; h < skip.size(); ++h) {
    if (skip[h]) cables[ix.HostCable(static_cast<int>(h))] = 1;
  }
  return cables;
}

}  // namespace

size_t CoverPlan::flows() const {
  size_t n = 0;
  for (const auto& r : rounds) n += r.size();
  return n;
}

int CoverLowerBound(const FabricIndex& ix) {
  int bound = 1;
  for (int d = 0; d < ix.devices(); ++d) {
    const int up = static_cast<int>(ix.Up(d).size()), below = ix.HostsBelow(d);
    if (up > 0 && below > 0) bound = std::max(bound, (up + below - 1) / below);
  }
  return bound;
}

namespace {

// ecmp: how likely each switch's uplinks are to have carried a flow.
class EcmpOdds {
 public:
  explicit EcmpOdds(const FabricIndex& ix) : ix_(ix), log_unloaded_(ix.devices(), 0.0) {}

  void Add(const std::vector<PlannedFlow>& round) {
    std::vector<double> crossing(ix_.devices(), 0), cross_pod(ix_.devices(), 0);
    for (const PlannedFlow& f : round) {
      const int a = ix_.LeafOf(f.src), b = ix_.LeafOf(f.dst);
      if (a == b) continue;
      for (int leaf : {a, b}) ++crossing[leaf];
      if (Pod(a) != Pod(b)) {
        for (int leaf : {a, b}) ++cross_pod[leaf];
      }
    }
    for (int leaf : ix_.Leaves()) {
      const double up = static_cast<double>(ix_.Up(leaf).size());
      if (up == 0) continue;
      for (int c : ix_.Up(leaf)) crossing[ix_.Upper(c)] += cross_pod[leaf] / up;
    }
    for (int d = 0; d < ix_.devices(); ++d) {
      const double up = static_cast<double>(ix_.Up(d).size());
      if (up == 0 || crossing[d] == 0) continue;
      log_unloaded_[d] += crossing[d] * std::log1p(-1.0 / up);
      const int tier = ix_.Tier(ix_.Up(d)[0]);
      load_sum_[tier] += crossing[d] / up;
      ++load_n_[tier];
    }
  }

  // The least likely uplink's probability of having carried a flow.
  double MinLoaded() const {
    double worst = 1;
    for (int d = 0; d < ix_.devices(); ++d) {
      if (!ix_.Up(d).empty()) worst = std::min(worst, 1 - std::exp(log_unloaded_[d]));
    }
    return worst;
  }

  void Expected(std::vector<TierCoverage>& tiers) const {
    for (const auto& [tier, sum] : load_sum_) {
      if (tier < static_cast<int>(tiers.size())) tiers[tier].expected_per_round = sum / load_n_.at(tier);
    }
  }

 private:
  int Pod(int leaf) const { return ix_.Up(leaf).empty() ? leaf : ix_.Upper(ix_.Up(leaf)[0]); }
  const FabricIndex& ix_;
  std::vector<double> log_unloaded_;
  std::map<int, double> load_sum_;
  std::map<int, int> load_n_;
};

}  // namespace

absl::StatusOr<CoverPlan> PlanCover(const Fabric& fabric, const FabricIndex& ix, const CoverOptions& options) {
  if (options.max_rounds <= 0) return absl::InvalidArgumentError("cover: max_rounds must be positive");
  if (options.routing == Routing::kEcmp && !(options.ecmp_confidence > 0 && options.ecmp_confidence < 1)) {
    return absl::InvalidArgumentError("cover: the ECMP confidence must be in (0, 1)");
  }
  (void)fabric;
  CoverPlan plan;
  plan.lower_bound = CoverLowerBound(ix);
  std::vector<int> load(static_cast<size_t>(ix.cables()) * 2, 0);
  if (!options.skip_hosts.empty() && options.skip_hosts.size() != static_cast<size_t>(ix.hosts())) {
    return absl::InvalidArgumentError("cover: skip_hosts must have one entry per host");
  }
  // A skipped host is busy in every round: never in a flow.
  std::vector<char> busy = options.skip_hosts.empty() ? std::vector<char>(ix.hosts(), 0) : options.skip_hosts;
  const std::vector<char> skipped_cable = SkippedCables(ix, options.skip_hosts);
  const auto planes = Planes(ix);
  std::map<int, int> remaining, idle;  // plane -> cables without a flow / rounds without progress
  const bool ecmp = options.routing == Routing::kEcmp;
  for (int c = 0; c < ix.cables(); ++c) {
    if (ix.Tier(c) >= 0 && (!ecmp || ix.Tier(c) == 0) && !skipped_cable[c])
      ++remaining[ix.DeviceComponent(ix.Upper(c))];
  }
  for (int c : ix.SecondPortCables()) --remaining[ix.DeviceComponent(ix.Upper(c))];
  Tally tally(ix.cables());
  EcmpOdds odds(ix);
  for (int k = 0; k < options.max_rounds; ++k) {
    const bool odds_met = !ecmp || (k > 0 && odds.MinLoaded() >= options.ecmp_confidence);
    bool any = false;
    Round round(ix, options.routing, load, busy);
    for (const auto& [plane, leaves] : planes) {
      if ((remaining[plane] > 0 && idle[plane] < 4) || !odds_met) {
        FillRound(round, ix, leaves, LeafPairs(leaves, k), k);
        any = true;
      }
    }
    if (!any) break;
    std::vector<PlannedFlow> flows = round.flows();
    std::map<int, bool> progress;
    for (int c : tally.Add(ix, flows)) {
      const int plane = ix.DeviceComponent(ix.Upper(c));
      --remaining[plane];
      progress[plane] = true;
    }
    for (const auto& [plane, leaves] : planes) idle[plane] = progress[plane] ? 0 : idle[plane] + 1;
    if (ecmp) odds.Add(flows);
    plan.rounds.push_back(std::move(flows));
  }
  Summarize(ix, tally, plan, ecmp);
  if (ecmp) {
    plan.ecmp_min_probability = odds.MinLoaded();
    odds.Expected(plan.tiers);
  }
  for (int c = 0; c < ix.cables(); ++c) {
    if (ix.Tier(c) < 0 || tally.flows[c] > 0 || (ecmp && ix.Tier(c) > 0) || skipped_cable[c]) continue;
    bool second = std::find(ix.SecondPortCables().begin(), ix.SecondPortCables().end(), c) !=
                  ix.SecondPortCables().end();
    if (!second) {
      plan.uncovered.push_back({c, ecmp ? "no host of the plan on this host cable"
                                        : "no planned flow crosses it under ftree routing (cabling that is not "
                                          "a regular fat tree, or a capacity the leaf pairs cannot use)"});
    }
  }
  return plan;
}

absl::StatusOr<CoverPlan> PlanShift(const Fabric& fabric, const FabricIndex& ix,
                                    const std::vector<char>& skip) {
  (void)fabric;
  if (!skip.empty() && skip.size() != static_cast<size_t>(ix.hosts())) {
    return absl::InvalidArgumentError("shift: skip_hosts must have one entry per host");
  }
  auto skipped = [&skip](int h) { return !skip.empty() && skip[h] != 0; };
  CoverPlan plan;
  plan.lower_bound = CoverLowerBound(ix);
  std::vector<int> load(static_cast<size_t>(ix.cables()) * 2, 0);
  std::vector<char> busy(ix.hosts(), 0);
  // Every ordered leaf pair of a plane, as two halves: senders in the first
  // half of a leaf's hosts to receivers in the second, then the reverse.
  std::vector<std::vector<std::pair<int, int>>> wanted;
  size_t rounds = 0;
  for (const auto& [plane, leaves] : Planes(ix)) rounds = std::max(rounds, 2 * (leaves.size() - 1));
  wanted.resize(rounds);
  for (const auto& [plane, leaves] : Planes(ix)) {
    const size_t l = leaves.size();
    for (size_t k = 1; k < l; ++k) {
      for (int half = 0; half < 2; ++half) {
        for (size_t a = 0; a < l; ++a) {
          const auto& src = ix.LeafHosts(leaves[a]);
          const auto& dst = ix.LeafHosts(leaves[(a + k) % l]);
          const size_t h = std::min(src.size(), dst.size()) / 2;
          for (size_t p = 0; p < h; ++p) {
            const int s = half == 0 ? src[p] : src[h + p], d = half == 0 ? dst[h + p] : dst[p];
            if (!skipped(s) && !skipped(d)) wanted[2 * (k - 1) + half].emplace_back(s, d);
          }
        }
      }
    }
  }
  std::vector<std::pair<int, int>> left;
  Tally tally(ix.cables());
  for (size_t r = 0; r < wanted.size() || !left.empty(); ++r) {
    if (r > wanted.size() + 64) return absl::InternalError("shift: flows left after 64 extra rounds");
    Round round(ix, Routing::kFtree, load, busy);
    std::vector<std::pair<int, int>> unplaced = std::move(left);
    left.clear();
    if (r < wanted.size()) unplaced.insert(unplaced.end(), wanted[r].begin(), wanted[r].end());
    for (const auto& [s, d] : unplaced) {
      if (!round.Try(s, d)) left.emplace_back(s, d);
    }
    if (round.flows().empty() && !left.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("shift: ", left.size(),
                                                     " flows have no path under ftree routing"));
    }
    tally.Add(ix, round.flows());
    plan.rounds.push_back(round.flows());
  }
  Summarize(ix, tally, plan, false);
  return plan;
}

}  // namespace gdrbench::controller::topology
