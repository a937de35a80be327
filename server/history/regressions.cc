#include "server/history/regressions.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "server/history/node_stats.h"

namespace gdrbench::server::history {
namespace {

const char* ReferenceName(v1::RegressionReference r) {
  switch (r) {
    case v1::REGRESSION_REFERENCE_BASELINE: return "the baseline";
    case v1::REGRESSION_REFERENCE_HISTORY: return "its history";
    default: return "the last passing run";
  }
}

// Why the threshold is what it is, for a finding's reason.
std::string ThresholdWhy(double threshold, double tolerance, float noise, uint32_t history,
                         const NoisePolicy& p) {
  if (history < p.min_history) {
    return absl::StrFormat("threshold %.1f%%: the tolerance; %u run%s of history", 100 * threshold, history,
                           history == 1 ? "" : "s");
  }
  if (threshold > tolerance) {
    return absl::StrFormat("threshold %.1f%% = %.3g x its noise %.1f%% over %u runs", 100 * threshold, p.k,
                           100 * noise, history);
  }
  return absl::StrFormat("threshold %.1f%%: the tolerance; its noise %.1f%% over %u runs", 100 * threshold,
                         100 * noise, history);
}

// Confirmed when every regressed cell behind the finding was a retest's
// reading (regressions.h); the reason says which.
void SetConfirmed(bool confirmed, v1::Regression* g) {
  g->set_confirmed(confirmed);
  g->set_reason(absl::StrCat(g->reason(), confirmed ? "; confirmed by a retest" : "; seen once"));
}

}  // namespace

bool Dropped(double before, double after, double tolerance) {
  return before > 0 && after < (1 - tolerance) * before;
}

RegressionBuilder::RegressionBuilder(v1::RegressionReference reference,
                                     std::string reference_run_id, double tolerance,
                                     size_t max_links)
    : max_links_(max_links) {
  report_.set_reference(reference);
  report_.set_reference_run_id(std::move(reference_run_id));
  report_.set_tolerance(tolerance);
  SetNoise(NoisePolicy{});
}

void RegressionBuilder::SetNoise(const NoisePolicy& noise) {
  noise_ = noise;
  report_.set_noise_k(noise.k);
  report_.set_min_history(noise.min_history);
}

void RegressionBuilder::CountShortHistory(uint32_t history) {
  if (report_.short_history_cells() == 0 || history < report_.short_history_min()) {
    report_.set_short_history_min(history);
  }
  report_.set_short_history_max(std::max(report_.short_history_max(), history));
  report_.set_short_history_cells(report_.short_history_cells() + 1);
}

double RegressionBuilder::CellThreshold(const ComparedCell& c) const {
  return Threshold(LinkSummary{c.history, 0, c.noise}, report_.tolerance(), noise_);
}

std::string RegressionBuilder::ReferenceDetail() const {
  switch (report_.reference()) {
    case v1::REGRESSION_REFERENCE_BASELINE: return absl::StrCat("the baseline run ", report_.reference_run_id());
    case v1::REGRESSION_REFERENCE_HISTORY: return "its links' history";
    default: return absl::StrCat("the last passing run ", report_.reference_run_id());
  }
}

void RegressionBuilder::AddRail(uint32_t rail, uint64_t size_bytes,
                                std::shared_ptr<const std::vector<std::string>> names,
                                const std::vector<ComparedCell>& cells) {
  const uint32_t n = static_cast<uint32_t>(names->size());
  Rail r;
  r.rail = rail;
  r.size_bytes = size_bytes;
  r.names = std::move(names);
  r.tally.assign(n, {});
  r.accepted.assign(n, false);
  std::vector<std::vector<uint32_t>> touching(n);  // cell indices per node
  std::vector<bool> bad(cells.size());
  for (uint32_t k = 0; k < cells.size(); ++k) {
    const ComparedCell& c = cells[k];
    if (c.src == c.dst || c.src >= n || c.dst >= n) continue;
    const double threshold = CellThreshold(c);
    bad[k] = !c.now_ok || Dropped(c.before, c.after, threshold);
    for (uint32_t x : {c.src, c.dst}) {
      ++r.tally[x].cells;
      r.tally[x].bad += bad[k];
      touching[x].push_back(k);
    }
    if (bad[k]) {
      r.regressed.push_back({c.src, c.dst, c.before, c.now_ok ? c.after : 0.0f, static_cast<float>(threshold),
                             c.noise, c.history, c.retested});
    }
  }
  report_.set_compared_cells(report_.compared_cells() + cells.size());
  report_.set_regressed_cells(report_.regressed_cells() + r.regressed.size());
  for (uint32_t x = 0; x < n; ++x) r.nodes_tested += r.tally[x].cells > 0;
  AcceptNodes(r, cells, bad, touching);
  rails_.push_back(std::move(r));
}

// A node is accepted (regressed with most partners) when more than half of
// its cells not explained by an accepted node regressed, with at least two
// distinct partners; worst first, and an accepted node's cells no longer
// count against its partners.
void RegressionBuilder::AcceptNodes(Rail& r, const std::vector<ComparedCell>& cells, const std::vector<bool>& bad,
                                    const std::vector<std::vector<uint32_t>>& touching) {
  const uint32_t n = static_cast<uint32_t>(r.tally.size());
  std::vector<uint32_t> partners(n, 0);  // distinct partners of its regressed cells
  for (uint32_t x = 0; x < n; ++x) {
    if (r.tally[x].bad < 2) continue;
    std::set<uint32_t> p;
    for (uint32_t k : touching[x]) {
      if (bad[k]) p.insert(cells[k].src == x ? cells[k].dst : cells[k].src);
    }
    partners[x] = static_cast<uint32_t>(p.size());
  }
  std::vector<NodeTally> left = r.tally;
  for (;;) {
    int best = -1;
    double best_ratio = 0;
    for (uint32_t x = 0; x < n; ++x) {
      if (r.accepted[x] || partners[x] < 2 || !(left[x].bad * 2 > left[x].cells && left[x].bad >= 2)) continue;
      double ratio = static_cast<double>(left[x].bad) / left[x].cells;
      if (ratio > best_ratio) {
        best_ratio = ratio;
        best = static_cast<int>(x);
      }
    }
    if (best < 0) break;
    const uint32_t a = static_cast<uint32_t>(best);
    r.accepted[a] = true;
    ++r.nodes_bad;
    for (uint32_t k : touching[a]) {
      const uint32_t y = cells[k].src == a ? cells[k].dst : cells[k].src;
      --left[y].cells;
      left[y].bad -= bad[k];
    }
  }
}

v1::Regression* RegressionBuilder::AddFinding(v1::RegressionKind kind, std::string subject,
                                              const std::vector<float>& before,
                                              const std::vector<float>& after, uint32_t rail, uint64_t size,
                                              std::string reason) {
  v1::Regression* g = report_.add_regressions();
  g->set_kind(kind);
  g->set_subject(std::move(subject));
  g->set_rail(rail);
  g->set_size_bytes(size);
  g->set_before_gbps(Median(before));
  g->set_after_gbps(Median(after));
  g->set_drop_fraction(g->before_gbps() > 0 ? 1 - g->after_gbps() / g->before_gbps() : 0);
  g->set_cells(static_cast<uint32_t>(before.size()));
  g->set_reason(std::move(reason));
  g->set_reference_detail(ReferenceDetail());
  g->set_threshold_fraction(report_.tolerance());  // at least; each cell past its own link's threshold
  return g;
}

std::set<uint32_t> RegressionBuilder::AddRailFindings() {
  const bool some_clean = std::any_of(rails_.begin(), rails_.end(),
                                      [](const Rail& r) { return r.nodes_bad == 0; });
  std::set<uint32_t> bad_rails;
  for (const Rail& r : rails_) {
    if (rails_.size() < 2 || !some_clean || r.nodes_tested < 2 || r.nodes_bad * 2 <= r.nodes_tested) {
      continue;
    }
    bad_rails.insert(r.rail);
    std::vector<float> b, a;
    bool retested = true;
    for (const auto& c : r.regressed) {
      b.push_back(c.before);
      a.push_back(c.after);
      retested &= c.retested;
    }
    auto* g = AddFinding(v1::REGRESSION_KIND_RAIL, absl::StrCat("rail ", r.rail), b, a, r.rail, r.size_bytes,
                         absl::StrCat(r.nodes_bad, " of ", r.nodes_tested, " nodes regressed on this rail against ",
                                      ReferenceName(report_.reference()),
                                      " while another rail did not: suspect the rail's switch or its cabling"));
    SetConfirmed(retested && !r.regressed.empty(), g);
  }
  return bad_rails;
}

void RegressionBuilder::CollectNodeCells(size_t k, const std::string& node, std::vector<float>* b,
                                         std::vector<float>* a, uint32_t* cells, bool* retested) const {
  const Rail& r = rails_[k];
  for (const auto& c : r.regressed) {
    if ((*r.names)[c.src] == node || (*r.names)[c.dst] == node) {
      b->push_back(c.before);
      a->push_back(c.after);
      *retested &= c.retested;
    }
  }
  for (uint32_t x = 0; x < r.names->size(); ++x) {
    if ((*r.names)[x] == node) *cells += r.tally[x].cells;
  }
}

// Nodes and NICs, by name across rails: a node regressed on every rail it
// was compared on is a node finding, else one NIC finding per rail.
std::set<std::pair<std::string, uint32_t>> RegressionBuilder::AddNodeFindings(
    const std::set<uint32_t>& bad_rails) {
  std::map<std::string, std::vector<size_t>> bad_on;  // node -> rails (index) it regressed on
  std::map<std::string, uint32_t> rails_of;           // node -> rails it was compared on
  for (size_t k = 0; k < rails_.size(); ++k) {
    const Rail& r = rails_[k];
    for (uint32_t x = 0; x < r.names->size(); ++x) {
      if (r.tally[x].cells == 0) continue;
      ++rails_of[(*r.names)[x]];
      if (r.accepted[x] && !bad_rails.count(r.rail)) bad_on[(*r.names)[x]].push_back(k);
    }
  }
  std::set<std::pair<std::string, uint32_t>> explained;  // (node, rail)
  for (const auto& [node, ks] : bad_on) {
    for (size_t k : ks) explained.insert({node, rails_[k].rail});
    if (ks.size() == rails_of[node]) {
      std::vector<float> b, a;
      uint32_t cells = 0;
      bool retested = true;
      for (size_t k : ks) CollectNodeCells(k, node, &b, &a, &cells, &retested);
      auto* g = AddFinding(v1::REGRESSION_KIND_NODE, node, b, a, rails_[ks.front()].rail,
                           rails_[ks.front()].size_bytes,
                           absl::StrCat(b.size(), " of its ", cells, " compared cells regressed against ",
                                        ReferenceName(report_.reference()),
                                        ks.size() > 1 ? absl::StrCat(" on all ", ks.size(), " rails") : "",
                                        " (to and from most partners, each past its link's own noise)"));
      g->set_src(node);
      SetConfirmed(retested && !b.empty(), g);
    } else {
      for (size_t k : ks) {
        std::vector<float> b, a;
        uint32_t cells = 0;
        bool retested = true;
        CollectNodeCells(k, node, &b, &a, &cells, &retested);
        auto* g = AddFinding(v1::REGRESSION_KIND_NIC, absl::StrCat(node, " rail ", rails_[k].rail), b, a,
                             rails_[k].rail, rails_[k].size_bytes,
                             absl::StrCat(b.size(), " of its ", cells,
                                          " compared cells on this rail regressed "
                                          "against ",
                                          ReferenceName(report_.reference()), "; its other rails did not"));
        g->set_src(node);
        SetConfirmed(retested && !b.empty(), g);
      }
    }
  }
  return explained;
}

v1::RegressionReport RegressionBuilder::Finish() {
  const std::set<uint32_t> bad_rails = AddRailFindings();
  AddLinks(bad_rails, AddNodeFindings(bad_rails));
  Summarize();
  return report_;
}

// Link findings, largest drop first: regressed cells whose nodes, rail or
// NIC no finding explains.
void RegressionBuilder::AddLinks(const std::set<uint32_t>& bad_rails,
                                 const std::set<std::pair<std::string, uint32_t>>& explained) {
  struct Link {
    const Rail* r;
    RegressedCell c;
    bool both;
    bool reverse_retested;  // both: the (dst, src) cell's reading was a retest's
  };
  std::vector<Link> links;
  for (const Rail& r : rails_) {
    if (bad_rails.count(r.rail)) continue;
    std::map<std::pair<uint32_t, uint32_t>, bool> regressed;  // -> retested
    for (const auto& c : r.regressed) regressed[{c.src, c.dst}] = c.retested;
    for (const auto& c : r.regressed) {
      if (explained.count({(*r.names)[c.src], r.rail}) || explained.count({(*r.names)[c.dst], r.rail})) {
        continue;
      }
      auto reverse = regressed.find({c.dst, c.src});
      const bool both = reverse != regressed.end();
      if (both && c.dst < c.src) continue;  // reported with (dst, src)
      links.push_back({&r, c, both, both && reverse->second});
    }
  }
  auto drop = [](const RegressedCell& c) { return c.before > 0 ? 1 - c.after / c.before : 0.0f; };
  std::stable_sort(links.begin(), links.end(),
                   [&](const Link& x, const Link& y) { return drop(x.c) > drop(y.c); });
  const bool one_rail = rails_.size() == 1;
  const bool history = report_.reference() == v1::REGRESSION_REFERENCE_HISTORY;
  const std::string ref = history ? "its history's median" : absl::StrCat(ReferenceName(report_.reference()), "'s");
  for (size_t i = 0; i < links.size(); ++i) {
    if (i == max_links_) {
      report_.set_links_omitted(static_cast<uint32_t>(links.size() - max_links_));
      break;
    }
    const Link& l = links[i];
    const std::string& s = (*l.r->names)[l.c.src];
    const std::string& d = (*l.r->names)[l.c.dst];
    const std::string why = ThresholdWhy(l.c.threshold, report_.tolerance(), l.c.noise, l.c.history, noise_);
    std::string what = l.c.after > 0
                           ? absl::StrFormat("%.3g Gb/s, %.1f%% below %s %.3g Gb/s (%s)", l.c.after,
                                             100 * drop(l.c), ref, l.c.before, why)
                           : absl::StrFormat("failed; %s measured %.3g Gb/s", history ? "its history" : ReferenceName(report_.reference()), l.c.before);
    v1::Regression* g = report_.add_regressions();
    g->set_kind(v1::REGRESSION_KIND_LINK);
    g->set_subject(absl::StrCat(s, l.both ? "<->" : "->", d, one_rail ? "" : absl::StrCat(" rail ", l.r->rail)));
    g->set_src(s);
    g->set_dst(d);
    g->set_rail(l.r->rail);
    g->set_size_bytes(l.r->size_bytes);
    g->set_before_gbps(l.c.before);
    g->set_after_gbps(l.c.after);
    g->set_drop_fraction(drop(l.c));
    g->set_cells(1);
    g->set_threshold_fraction(l.c.threshold);
    g->set_noise_fraction(l.c.noise);
    g->set_history_runs(l.c.history);
    g->set_reference_detail(history ? absl::StrCat("its history (median of ", l.c.history, " runs)")
                                    : ReferenceDetail());
    g->set_reason(absl::StrCat(what, "; both nodes held up with their other partners: suspect the "
                                     "cable, the switch ports or the path between them"));
    SetConfirmed(l.c.retested && (!l.both || l.reverse_retested), g);
  }
}

// The report's one line.
void RegressionBuilder::Summarize() {
  const double tol = report_.tolerance();
  const bool history = report_.reference() == v1::REGRESSION_REFERENCE_HISTORY;
  std::string short_history;
  if (report_.short_history_cells() > 0) {
    const uint32_t lo = report_.short_history_min(), hi = report_.short_history_max();
    short_history = absl::StrCat(
        report_.short_history_cells(), " cell", report_.short_history_cells() == 1 ? "" : "s", " with ",
        lo == hi ? absl::StrCat(lo) : absl::StrCat(lo, " to ", hi), " run", hi == 1 ? "" : "s",
        " of history (fewer than ", report_.min_history(), "): compared with the baseline only");
  }
  if (history && report_.compared_cells() == 0) {
    if (!short_history.empty()) {
      // Every link has the same short history: the plain sentence.
      report_.set_summary(report_.short_history_min() == report_.short_history_max()
                              ? absl::StrCat(report_.short_history_min(), " run",
                                             report_.short_history_min() == 1 ? "" : "s",
                                             " of history: compared with the baseline only")
                              : short_history);
    } else {
      report_.set_summary("no link has history yet: nothing compared");
    }
    return;
  }
  if (!history && report_.reference_run_id().empty()) {
    report_.set_summary(absl::StrCat("no ", report_.reference() == v1::REGRESSION_REFERENCE_BASELINE
                                                ? "baseline is set"
                                                : "earlier passing run",
                                     ": nothing compared"));
    return;
  }
  const std::string against =
      history ? "each link's history" : absl::StrCat(ReferenceName(report_.reference()), " ", report_.reference_run_id());
  const std::string tail = short_history.empty() ? "" : absl::StrCat("; ", short_history);
  if (report_.regressions_size() == 0) {
    report_.set_summary(absl::StrCat("no regression against ", against, " (", report_.compared_cells(),
                                     " cells compared, tolerance ", 100 * tol, "%, or ", report_.noise_k(),
                                     " x a link's noise when larger)", tail));
    return;
  }
  std::vector<std::string> who;
  for (const auto& g : report_.regressions()) {
    if (who.size() == 6) {
      who.push_back(absl::StrCat("and ", report_.regressions_size() - 6 + report_.links_omitted(), " more"));
      break;
    }
    who.push_back(g.subject());
  }
  report_.set_summary(absl::StrCat(report_.regressed_cells(), " of ", report_.compared_cells(),
                                   " cells regressed against ", against, ": ", absl::StrJoin(who, ", "), tail));
}

}  // namespace gdrbench::server::history
