#include "controller/analysis/verdicts.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace gdrbench::controller::analysis {
namespace {

double Median(std::vector<float> v) {
  if (v.empty()) return 0;
  size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + mid, v.end());
  double hi = v[mid];
  if (v.size() % 2) return hi;
  double lo = *std::max_element(v.begin(), v.begin() + mid);
  return (lo + hi) / 2;
}

bool Bad(const Cell& c) { return c.verdict == Verdict::kLow || c.verdict == Verdict::kFail; }

struct NodeTally {
  uint32_t cells = 0, bad = 0;
  std::vector<float> ok_values;
};

}  // namespace

v1::VerdictPolicy DefaultPolicy() {
  v1::VerdictPolicy p;
  p.set_min_fraction_of_link(0.9);
  p.set_mad_k(3.0);
  p.set_fleet_min_drop(0.10);
  p.set_baseline_tolerance(0.05);
  return p;
}

absl::StatusOr<Baseline> Baseline::FromRun(const v1::Run& run) {
  if (run.matrices().empty()) {
    return absl::InvalidArgumentError("baseline run has no matrices (is it a gdrbench run.json?)");
  }
  Baseline b;
  for (const auto& m : run.matrices()) {
    for (const auto& c : m.cells()) {
      if (c.status() != v1::RESULT_STATUS_OK || c.src() >= static_cast<uint32_t>(m.nodes_size()) ||
          c.dst() >= static_cast<uint32_t>(m.nodes_size())) {
        continue;
      }
      b.values_[{m.nodes(c.src()), m.nodes(c.dst()), m.rail(), m.size_bytes()}] = c.bw_avg_gbps();
    }
  }
  return b;
}

double Baseline::Get(const std::string& src, const std::string& dst, uint32_t rail,
                     uint64_t size) const {
  auto it = values_.find({src, dst, rail, size});
  return it == values_.end() ? 0 : it->second;
}

Outcome Judge(MatrixSet& set, const v1::VerdictPolicy& policy, const Baseline* baseline,
              const std::vector<std::string>& excluded) {
  Outcome out;
  const auto& names = set.nodes();
  const uint32_t n = static_cast<uint32_t>(names.size());
  std::vector<Matrix*> vms = set.VerdictMatrices();

  // 1. Verdicts.
  for (Matrix* m : vms) {
    // Fleet reference on a log scale (bandwidth deviations are ratios: a
    // link at a tenth is as far below as one at ten times is above), robust
    // to one bad node in a small fleet (with 4 nodes one node is in half of
    // all cells, so a plain median would move): ref = median of the per-node
    // medians of ln(Gb/s); nodes far below it are outliers; the spread (MAD)
    // is taken over cells between non-outlier nodes, floored at 1 %.
    auto ln = [](double v) { return std::log(std::max(v, 1e-9)); };
    std::vector<std::vector<float>> per_node(n);
    size_t ok_count = 0;
    for (uint32_t i = 0; i < n; ++i) {
      for (uint32_t j = 0; j < n; ++j) {
        const Cell& c = m->at(i, j);
        if (!c.present() || c.status != v1::RESULT_STATUS_OK) continue;
        per_node[i].push_back(static_cast<float>(ln(c.gbps)));
        per_node[j].push_back(static_cast<float>(ln(c.gbps)));
        ++ok_count;
      }
    }
    std::vector<float> node_medians;
    std::vector<double> node_median(n, 0);
    std::vector<bool> has_median(n, false);
    for (uint32_t i = 0; i < n; ++i) {
      if (per_node[i].empty()) continue;
      node_median[i] = Median(per_node[i]);
      has_median[i] = true;
      node_medians.push_back(static_cast<float>(node_median[i]));
    }
    const double ref = Median(node_medians);
    std::vector<float> dev;
    for (float v : node_medians) dev.push_back(static_cast<float>(std::fabs(v - ref)));
    const double node_mad = std::max(Median(dev), 0.01);
    std::vector<bool> outlier(n, false);
    for (uint32_t i = 0; i < n; ++i) {
      outlier[i] = has_median[i] && node_median[i] < ref - policy.mad_k() * node_mad;
    }
    dev.clear();
    std::vector<float> dev_all;
    for (uint32_t i = 0; i < n; ++i) {
      for (uint32_t j = 0; j < n; ++j) {
        const Cell& c = m->at(i, j);
        if (!c.present() || c.status != v1::RESULT_STATUS_OK) continue;
        float d = static_cast<float>(std::fabs(ln(c.gbps) - ref));
        dev_all.push_back(d);
        if (!outlier[i] && !outlier[j]) dev.push_back(d);
      }
    }
    const double mad = std::max(Median(dev.empty() ? std::move(dev_all) : std::move(dev)), 0.01);
    const double median = std::exp(ref);
    // Low means both: outside the fleet's spread, and a drop an operator acts on.
    double fleet_floor =
        policy.mad_k() > 0 && ok_count >= 3
            ? std::min(std::exp(ref - policy.mad_k() * mad), median * (1 - policy.fleet_min_drop()))
            : -1;
    for (uint32_t i = 0; i < n; ++i) {
      for (uint32_t j = 0; j < n; ++j) {
        Cell& c = m->at(i, j);
        if (!c.present()) continue;
        ++out.cells;
        if (c.status != v1::RESULT_STATUS_OK) {
          c.verdict = Verdict::kFail;
          ++out.fail;
          continue;
        }
        std::vector<std::string> why;
        if (policy.min_fraction_of_link() > 0 && c.expected_gbps > 0 &&
            c.gbps < policy.min_fraction_of_link() * c.expected_gbps) {
          why.push_back(absl::StrFormat("%.3g Gb/s is %.0f%% of the %.4g Gb/s link (pass >= %.0f%%)",
                                        c.gbps, 100.0 * c.gbps / c.expected_gbps, c.expected_gbps,
                                        100 * policy.min_fraction_of_link()));
        }
        if (fleet_floor > 0 && c.gbps < fleet_floor) {
          why.push_back(absl::StrFormat(
              "%.3g Gb/s is below the fleet floor %.3g Gb/s (reference %.3g Gb/s, %.3g x MAD of "
              "%.1f%% on a log scale)",
              c.gbps, fleet_floor, median, policy.mad_k(), 100 * (std::exp(mad) - 1)));
        }
        if (baseline != nullptr && policy.baseline_tolerance() > 0) {
          double b = baseline->Get(names[i], names[j], m->rail, m->size_bytes);
          c.baseline_gbps = static_cast<float>(b);
          if (b > 0 && c.gbps < (1 - policy.baseline_tolerance()) * b) {
            why.push_back(absl::StrFormat("%.3g Gb/s is %.1f%% below the baseline %.3g Gb/s",
                                          c.gbps, 100 * (1 - c.gbps / b), b));
          }
        }
        if (why.empty()) {
          c.verdict = Verdict::kPass;
          ++out.pass;
          if (!m->reasons.empty()) m->reasons.erase(i * n + j);  // low before a retest
        } else {
          c.verdict = Verdict::kLow;
          ++out.low;
          m->reasons[i * n + j] = absl::StrJoin(why, "; ");
        }
      }
    }
  }

  // 2. Per rail, per node tallies; then rail, node/nic and link blame.
  std::set<std::pair<uint32_t, uint32_t>> node_rail_bad;  // (node, rail)
  std::set<uint32_t> rails_bad;
  std::vector<std::vector<bool>> node_bad_on_rail(n);
  std::vector<uint32_t> rails_of_node(n, 0);
  struct RailInfo {
    uint32_t rail;
    uint32_t nodes_tested = 0, nodes_bad = 0;
    double median_bad = 0;
  };
  std::vector<RailInfo> rail_info;
  std::vector<std::vector<NodeTally>> tallies;
  for (Matrix* m : vms) {
    std::vector<NodeTally> t(n);
    for (uint32_t i = 0; i < n; ++i) {
      for (uint32_t j = 0; j < n; ++j) {
        const Cell& c = m->at(i, j);
        if (!c.present() || i == j) continue;
        for (uint32_t x : {i, j}) {
          ++t[x].cells;
          t[x].bad += Bad(c);
          if (c.status == v1::RESULT_STATUS_OK) t[x].ok_values.push_back(c.gbps);
        }
      }
    }
    RailInfo ri{m->rail};
    for (uint32_t x = 0; x < n; ++x) {
      if (t[x].cells == 0) continue;
      ++ri.nodes_tested;
      ++rails_of_node[x];
    }
    // "Most partners": more than half of its cells, and at least two of them
    // (one bad cell alone is a link, not a node). Nodes are accepted worst
    // first, and an accepted node's cells no longer count against its
    // partners: a dead node must not drag a neighbour with one noisy cell
    // over the line.
    std::vector<bool> accepted(n, false);
    std::vector<uint32_t> cells_left(n), bad_left(n);
    for (uint32_t x = 0; x < n; ++x) {
      cells_left[x] = t[x].cells;
      bad_left[x] = t[x].bad;
    }
    for (;;) {
      int best = -1;
      double best_ratio = 0;
      for (uint32_t x = 0; x < n; ++x) {
        if (accepted[x] || !(bad_left[x] * 2 > cells_left[x] && bad_left[x] >= 2)) continue;
        double ratio = static_cast<double>(bad_left[x]) / cells_left[x];
        if (ratio > best_ratio) {
          best_ratio = ratio;
          best = static_cast<int>(x);
        }
      }
      if (best < 0) break;
      const uint32_t a = static_cast<uint32_t>(best);
      accepted[a] = true;
      ++ri.nodes_bad;
      node_rail_bad.insert({a, m->rail});
      for (uint32_t y = 0; y < n; ++y) {
        if (y == a) continue;
        for (const Cell* c : {&m->at(y, a), &m->at(a, y)}) {
          if (!c->present()) continue;
          --cells_left[y];
          bad_left[y] -= Bad(*c);
        }
      }
    }
    rail_info.push_back(ri);
    tallies.push_back(std::move(t));
  }
  // Rail: most nodes bad on it while some other rail has no bad node.
  bool some_rail_clean = std::any_of(rail_info.begin(), rail_info.end(),
                                     [](const RailInfo& r) { return r.nodes_bad == 0; });
  for (size_t k = 0; k < vms.size(); ++k) {
    const RailInfo& ri = rail_info[k];
    if (vms.size() >= 2 && some_rail_clean && ri.nodes_tested >= 2 && ri.nodes_bad * 2 > ri.nodes_tested) {
      rails_bad.insert(ri.rail);
      std::vector<float> v;
      for (const auto& t : tallies[k]) v.insert(v.end(), t.ok_values.begin(), t.ok_values.end());
      v1::Blame b;
      b.set_kind("rail");
      b.set_subject(absl::StrCat("rail ", ri.rail));
      b.set_reason(absl::StrCat(ri.nodes_bad, " of ", ri.nodes_tested,
                                " nodes are low or failing on this rail while another rail is clean: "
                                "suspect the rail's switch or its cabling"));
      b.set_evidence_gbps(Median(v));
      out.blame.push_back(b);
    }
  }
  // Node (bad on every rail it has) or NIC (bad on some).
  std::set<std::pair<uint32_t, uint32_t>> blamed;  // (node, rail) explained by node/nic/rail
  for (uint32_t x = 0; x < n; ++x) {
    std::vector<size_t> bad_k;
    for (size_t k = 0; k < vms.size(); ++k) {
      if (node_rail_bad.count({x, vms[k]->rail}) && !rails_bad.count(vms[k]->rail)) bad_k.push_back(k);
    }
    if (bad_k.empty()) continue;
    std::vector<float> v;
    uint32_t cells = 0, bad = 0;
    for (size_t k : bad_k) {
      v.insert(v.end(), tallies[k][x].ok_values.begin(), tallies[k][x].ok_values.end());
      cells += tallies[k][x].cells;
      bad += tallies[k][x].bad;
      blamed.insert({x, vms[k]->rail});
    }
    if (bad_k.size() == rails_of_node[x]) {
      v1::Blame b;
      b.set_kind("node");
      b.set_subject(names[x]);
      b.set_reason(absl::StrCat(bad, " of its ", cells,
                                " cells (to and from most partners) are low or failing",
                                bad_k.size() > 1 ? absl::StrCat(" on all ", bad_k.size(), " rails") : ""));
      b.set_evidence_gbps(Median(v));
      out.blame.push_back(b);
    } else {
      for (size_t k : bad_k) {
        v1::Blame b;
        b.set_kind("nic");
        b.set_subject(absl::StrCat(names[x], " rail ", vms[k]->rail));
        b.set_reason(absl::StrCat(tallies[k][x].bad, " of its ", tallies[k][x].cells,
                                  " cells on this rail are low or failing; its other rails are fine"));
        b.set_evidence_gbps(Median(tallies[k][x].ok_values));
        out.blame.push_back(b);
      }
    }
  }
  for (uint32_t x = 0; x < n; ++x) {
    for (uint32_t r : rails_bad) blamed.insert({x, r});
  }
  // Links: bad cells not explained by a blamed node, NIC or rail.
  for (Matrix* m : vms) {
    for (uint32_t i = 0; i < n; ++i) {
      for (uint32_t j = 0; j < n; ++j) {
        const Cell& c = m->at(i, j);
        if (!c.present() || !Bad(c)) continue;
        if (blamed.count({i, m->rail}) || blamed.count({j, m->rail})) continue;
        const Cell& back = m->at(j, i);
        bool both = back.present() && Bad(back);
        if (both && j < i) continue;  // reported with (j, i)
        v1::Blame b;
        b.set_kind("link");
        b.set_subject(absl::StrCat(names[i], both ? "<->" : "->", names[j],
                                   vms.size() > 1 ? absl::StrCat(" rail ", m->rail) : ""));
        auto it = m->reasons.find(i * n + j);
        b.set_reason(absl::StrCat(
            it != m->reasons.end() ? it->second : "low",
            "; both nodes are fine with their other partners: suspect the cable, the switch ports or "
            "the path between them"));
        b.set_evidence_gbps(c.gbps);
        out.blame.push_back(b);
      }
    }
  }

  out.passed = out.cells > 0 && out.low == 0 && out.fail == 0 && excluded.empty();
  if (out.passed) {
    out.summary = absl::StrCat("PASS: ", out.pass, "/", out.cells, " cells pass");
  } else {
    std::vector<std::string> parts;
    if (out.cells == 0) parts.push_back("no cell was measured");
    if (out.low) parts.push_back(absl::StrCat(out.low, " low"));
    if (out.fail) parts.push_back(absl::StrCat(out.fail, " failed"));
    if (!excluded.empty()) parts.push_back(absl::StrCat(excluded.size(), " node(s) left out"));
    std::vector<std::string> who;
    for (const auto& b : out.blame) {
      if (who.size() == 8) {
        who.push_back(absl::StrCat("and ", out.blame.size() - 8, " more"));
        break;
      }
      who.push_back(absl::StrCat(b.kind(), " ", b.subject()));
    }
    out.summary = absl::StrCat("FAIL: ", out.pass, "/", out.cells, " cells pass; ",
                               absl::StrJoin(parts, ", "),
                               who.empty() ? "" : absl::StrCat("; blame: ", absl::StrJoin(who, ", ")));
  }
  return out;
}

}  // namespace gdrbench::controller::analysis

namespace gdrbench::controller::analysis {

void FillRun(MatrixSet& set, const Outcome& outcome, v1::Run* run) {
  run->clear_matrices();
  for (const Matrix* m : set.matrices()) *run->add_matrices() = ToProto(*m, set.nodes());
  run->clear_blame();
  for (const auto& b : outcome.blame) *run->add_blame() = b;
  run->set_passed(outcome.passed);
  run->set_summary(outcome.summary);
}

}  // namespace gdrbench::controller::analysis
