#include "controller/analysis/blame.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace gdrbench::controller::analysis {
namespace {

bool Bad(const Cell& c) { return c.verdict == Verdict::kLow || c.verdict == Verdict::kFail; }
// A cell that says something about its two nodes: skipped cells (a node
// left out by preflight) were never tested.
bool Tested(const Cell& c) { return c.present() && c.status != v1::RESULT_STATUS_SKIPPED; }

v1::Blame MakeBlame(const char* kind, std::string subject, std::string reason, double evidence) {
  v1::Blame b;
  b.set_kind(kind);
  b.set_subject(std::move(subject));
  b.set_reason(std::move(reason));
  b.set_evidence_gbps(evidence);
  return b;
}

// The nodes to accept next: those with the worst ratio among the nodes bad
// with most of their remaining partners (more than half, at least two
// cells). Every node tied at that ratio is accepted at once: two nodes bad
// only with each other and the rest are equally to blame, and accepting one
// first would clear the other. Empty when none is left.
std::vector<uint32_t> WorstBadNodes(const std::vector<bool>& accepted,
                                    const std::vector<uint32_t>& cells_left,
                                    const std::vector<uint32_t>& bad_left) {
  std::vector<uint32_t> worst;
  uint64_t best_bad = 0, best_cells = 1;  // the ratio best_bad / best_cells, compared exactly
  for (uint32_t x = 0; x < accepted.size(); ++x) {
    if (accepted[x] || !(bad_left[x] * 2 > cells_left[x] && bad_left[x] >= 2)) continue;
    const uint64_t lhs = uint64_t{bad_left[x]} * best_cells, rhs = best_bad * cells_left[x];
    if (worst.empty() || lhs > rhs) {
      worst.assign(1, x);
      best_bad = bad_left[x];
      best_cells = cells_left[x];
    } else if (lhs == rhs) {
      worst.push_back(x);
    }
  }
  return worst;
}

}  // namespace

double Median(std::vector<float> v) {
  if (v.empty()) return 0;
  size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + mid, v.end());
  double hi = v[mid];
  if (v.size() % 2) return hi;
  double lo = *std::max_element(v.begin(), v.begin() + mid);
  return (lo + hi) / 2;
}

RailTally TallyRail(const Matrix& m) {
  const uint32_t n = m.n;
  RailTally out;
  out.rail = m.rail;
  out.dst_rail = m.target_rail();
  out.lane = LaneKey(m);
  out.nodes.resize(n);
  out.bad_node.assign(n, false);
  for (uint32_t i = 0; i < n; ++i) {
    for (uint32_t j = 0; j < n; ++j) {
      const Cell& c = m.at(i, j);
      if (!Tested(c) || i == j) continue;
      ++out.cells;
      out.bad_cells += Bad(c);
      for (uint32_t x : {i, j}) {
        ++out.nodes[x].cells;
        out.nodes[x].bad += Bad(c);
        out.nodes[x].failed += c.verdict == Verdict::kFail;
        out.nodes[x].low += c.verdict == Verdict::kLow;
        out.nodes[x].low_retested += c.verdict == Verdict::kLow && m.retested.count(i * n + j) > 0;
        if (c.status == v1::RESULT_STATUS_OK) out.nodes[x].ok_values.push_back(c.gbps);
      }
    }
  }
  std::vector<uint32_t> cells_left(n), bad_left(n);
  for (uint32_t x = 0; x < n; ++x) {
    out.nodes_tested += out.nodes[x].cells > 0;
    cells_left[x] = out.nodes[x].cells;
    bad_left[x] = out.nodes[x].bad;
  }
  for (std::vector<uint32_t> worst; !(worst = WorstBadNodes(out.bad_node, cells_left, bad_left)).empty();) {
    for (uint32_t a : worst) {
      out.bad_node[a] = true;
      ++out.nodes_bad;
    }
    for (uint32_t a : worst) {
      for (uint32_t y = 0; y < n; ++y) {
        if (y == a || out.bad_node[y]) continue;
        for (const Cell* c : {&m.at(y, a), &m.at(a, y)}) {
          if (!Tested(*c)) continue;
          --cells_left[y];
          bad_left[y] -= Bad(*c);
        }
      }
    }
  }
  return out;
}

std::vector<v1::Blame> FleetBlames(const std::vector<RailTally>& rails, std::set<uint64_t>* all_bad) {
  std::vector<v1::Blame> out;
  const bool some_rail_clean = std::any_of(rails.begin(), rails.end(),
                                           [](const RailTally& r) { return r.nodes_bad == 0; });
  if (some_rail_clean) return out;  // a bad rail beside a clean one is the rail's (RailBlames)
  for (const RailTally& r : rails) {
    if (r.cells == 0 || r.bad_cells < r.cells || r.nodes_tested < 2) continue;
    all_bad->insert(r.lane);
    std::vector<float> v;
    for (const auto& t : r.nodes) v.insert(v.end(), t.ok_values.begin(), t.ok_values.end());
    out.push_back(MakeBlame(
        "fleet", rails.size() > 1 ? absl::StrCat("every node on ", LaneName(r.rail, r.dst_rail)) : "every node",
        absl::StrCat("all ", r.cells, " cells of the ", r.nodes_tested,
                     " nodes are low or failing, so no node or link stands out: suspect what they "
                     "share (the expected link rate and --min-link-fraction, the switch, the MTU, "
                     "the driver or firmware release)"),
        Median(std::move(v))));
  }
  return out;
}

std::vector<v1::Blame> RailBlames(const std::vector<RailTally>& rails, std::set<uint64_t>* bad_rails) {
  std::vector<v1::Blame> out;
  if (!bad_rails->empty()) return out;  // the fleet is bad on every rail (FleetBlames)
  const bool some_rail_clean = std::any_of(rails.begin(), rails.end(),
                                           [](const RailTally& r) { return r.nodes_bad == 0; });
  if (rails.size() < 2 || !some_rail_clean) return out;
  for (const RailTally& r : rails) {
    if (r.nodes_tested < 2 || r.nodes_bad * 2 <= r.nodes_tested) continue;
    bad_rails->insert(r.lane);
    std::vector<float> v;
    for (const auto& t : r.nodes) v.insert(v.end(), t.ok_values.begin(), t.ok_values.end());
    // A cross-rail lane's traffic leaves its rail: what the lane shares is
    // the path between the two rails, not one rail's switch.
    out.push_back(MakeBlame(
        "rail", LaneName(r.rail, r.dst_rail),
        absl::StrCat(r.nodes_bad, " of ", r.nodes_tested,
                     r.dst_rail == r.rail
                         ? " nodes are low or failing on this rail while another rail is clean: "
                           "suspect the rail's switch or its cabling"
                         : " nodes are low or failing from this rail to that one while another rail pair is "
                           "clean: suspect the path between the two rails (spine, routes)"),
        Median(std::move(v))));
  }
  return out;
}

std::vector<v1::Blame> NodeBlames(const std::vector<RailTally>& rails,
                                  const std::set<uint64_t>& bad_rails,
                                  const std::vector<std::string>& names,
                                  std::set<std::pair<uint32_t, uint64_t>>* explained) {
  std::vector<v1::Blame> out;
  for (uint32_t x = 0; x < names.size(); ++x) {
    uint32_t rails_of_node = 0;
    std::vector<const RailTally*> bad;
    for (const RailTally& r : rails) {
      rails_of_node += r.nodes[x].cells > 0;
      if (r.bad_node[x] && !bad_rails.count(r.lane)) bad.push_back(&r);
    }
    for (uint64_t r : bad_rails) explained->insert({x, r});
    if (bad.empty()) continue;
    std::vector<float> v;
    uint32_t cells = 0, bad_cells = 0, failed = 0, low = 0, low_retested = 0;
    for (const RailTally* r : bad) {
      const NodeTally& t = r->nodes[x];
      v.insert(v.end(), t.ok_values.begin(), t.ok_values.end());
      cells += t.cells;
      bad_cells += t.bad;
      failed += t.failed;
      low += t.low;
      low_retested += t.low_retested;
      explained->insert({x, r->lane});
    }
    if (bad.size() == rails_of_node) {
      out.push_back(MakeBlame(
          "node", names[x],
          absl::StrCat(bad_cells, " of its ", cells,
                       " cells (to and from most partners) are low or failing",
                       bad.size() > 1 ? absl::StrCat(" on all ", bad.size(), " rails") : ""),
          Median(std::move(v))));
      out.back().set_hard(failed > 0);
      out.back().set_confirmed(low > 0 && low_retested == low);
      continue;
    }
    for (const RailTally* r : bad) {
      const NodeTally& t = r->nodes[x];
      out.push_back(MakeBlame(
          "nic", absl::StrCat(names[x], " ", LaneName(r->rail, r->dst_rail)),
          absl::StrCat(t.bad, " of its ", t.cells,
                       " cells on this rail are low or failing; its other rails are fine"),
          Median(t.ok_values)));
      out.back().set_hard(t.failed > 0);
      out.back().set_confirmed(t.low > 0 && t.low_retested == t.low);
    }
  }
  return out;
}

std::vector<v1::Blame> LinkBlames(const std::vector<const Matrix*>& vms,
                                  const std::vector<std::string>& names,
                                  const std::set<std::pair<uint32_t, uint64_t>>& explained) {
  std::vector<v1::Blame> out;
  for (const Matrix* m : vms) {
    const uint32_t n = m->n;
    for (uint32_t i = 0; i < n; ++i) {
      for (uint32_t j = 0; j < n; ++j) {
        const Cell& c = m->at(i, j);
        if (!Tested(c) || !Bad(c)) continue;
        if (explained.count({i, LaneKey(*m)}) || explained.count({j, LaneKey(*m)})) continue;
        const Cell& back = m->at(j, i);
        const bool both = back.present() && Bad(back);
        if (both && j < i) continue;  // reported with (j, i)
        auto it = m->reasons.find(i * n + j);
        out.push_back(MakeBlame(
            "link",
            absl::StrCat(names[i], both ? "<->" : "->", names[j],
                         vms.size() > 1 ? absl::StrCat(" ", LaneName(*m)) : ""),
            absl::StrCat(it != m->reasons.end() ? it->second : "low",
                         "; both nodes are fine with their other partners: suspect the cable, "
                         "the switch ports or the path between them"),
            c.gbps));
        out.back().set_hard(c.verdict == Verdict::kFail || (both && back.verdict == Verdict::kFail));
        out.back().set_confirmed(c.verdict == Verdict::kLow && m->retested.count(i * n + j) > 0);
      }
    }
  }
  return out;
}

std::vector<v1::Blame> Blame(const std::vector<const Matrix*>& vms,
                             const std::vector<std::string>& names) {
  std::vector<RailTally> rails;
  for (const Matrix* m : vms) rails.push_back(TallyRail(*m));
  std::set<uint64_t> bad_rails;
  std::vector<v1::Blame> out = FleetBlames(rails, &bad_rails);
  for (auto& b : RailBlames(rails, &bad_rails)) out.push_back(std::move(b));
  std::set<std::pair<uint32_t, uint64_t>> explained;
  for (auto& b : NodeBlames(rails, bad_rails, names, &explained)) out.push_back(std::move(b));
  for (auto& b : LinkBlames(vms, names, explained)) out.push_back(std::move(b));
  return out;
}

std::string BlameLabel(const v1::Blame& b) {
  // A rail's and the fleet's subjects already say what they are ("rail 2",
  // "every node"): "rail rail 2" says it twice.
  if (b.kind() == "rail" || b.kind() == "fleet") return b.subject();
  return absl::StrCat(b.kind(), " ", b.subject());
}

}  // namespace gdrbench::controller::analysis
