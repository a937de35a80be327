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
  return r == v1::REGRESSION_REFERENCE_BASELINE ? "the baseline" : "the last passing run";
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
    bad[k] = !c.now_ok || Dropped(c.before, c.after, report_.tolerance());
    for (uint32_t x : {c.src, c.dst}) {
      ++r.tally[x].cells;
      r.tally[x].bad += bad[k];
      touching[x].push_back(k);
    }
    if (bad[k]) r.regressed.push_back({c.src, c.dst, c.before, c.now_ok ? c.after : 0.0f});
  }
  report_.set_compared_cells(report_.compared_cells() + cells.size());
  report_.set_regressed_cells(report_.regressed_cells() + r.regressed.size());
  std::vector<NodeTally> left = r.tally;
  for (uint32_t x = 0; x < n; ++x) r.nodes_tested += r.tally[x].cells > 0;
  // Worst first; an accepted node's cells no longer count against partners.
  for (;;) {
    int best = -1;
    double best_ratio = 0;
    for (uint32_t x = 0; x < n; ++x) {
      if (r.accepted[x] || !(left[x].bad * 2 > left[x].cells && left[x].bad >= 2)) continue;
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
  rails_.push_back(std::move(r));
}

v1::RegressionReport RegressionBuilder::Finish() {
  const double tol = report_.tolerance();
  auto add = [&](v1::RegressionKind kind, std::string subject, const std::vector<float>& before,
                 const std::vector<float>& after, uint32_t rail, uint64_t size, std::string reason) {
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
    return g;
  };
  // Rails.
  const bool some_clean = std::any_of(rails_.begin(), rails_.end(),
                                      [](const Rail& r) { return r.nodes_bad == 0; });
  std::set<uint32_t> bad_rails;
  for (const Rail& r : rails_) {
    if (rails_.size() < 2 || !some_clean || r.nodes_tested < 2 || r.nodes_bad * 2 <= r.nodes_tested) {
      continue;
    }
    bad_rails.insert(r.rail);
    std::vector<float> b, a;
    for (const auto& c : r.regressed) {
      b.push_back(c.before);
      a.push_back(c.after);
    }
    add(v1::REGRESSION_KIND_RAIL, absl::StrCat("rail ", r.rail), b, a, r.rail, r.size_bytes,
        absl::StrCat(r.nodes_bad, " of ", r.nodes_tested, " nodes regressed on this rail against ",
                     ReferenceName(report_.reference()),
                     " while another rail did not: suspect the rail's switch or its cabling"));
  }
  // Nodes and NICs, by name across rails.
  std::map<std::string, std::vector<size_t>> bad_on;   // node -> rails (index) it regressed on
  std::map<std::string, uint32_t> rails_of;            // node -> rails it was compared on
  for (size_t k = 0; k < rails_.size(); ++k) {
    const Rail& r = rails_[k];
    for (uint32_t x = 0; x < r.names->size(); ++x) {
      if (r.tally[x].cells == 0) continue;
      ++rails_of[(*r.names)[x]];
      if (r.accepted[x] && !bad_rails.count(r.rail)) bad_on[(*r.names)[x]].push_back(k);
    }
  }
  std::set<std::pair<std::string, uint32_t>> explained;  // (node, rail)
  for (const auto& entry : bad_on) {
    // Named, not a structured binding: `collect` uses `node`, which clang
    // before 16 (the fuzzers' clang-14) refuses for bindings.
    const std::string& node = entry.first;
    const auto& ks = entry.second;
    auto collect = [&](size_t k, std::vector<float>* b, std::vector<float>* a, uint32_t* cells) {
      const Rail& r = rails_[k];
      for (const auto& c : r.regressed) {
        if ((*r.names)[c.src] == node || (*r.names)[c.dst] == node) {
          b->push_back(c.before);
          a->push_back(c.after);
        }
      }
      for (uint32_t x = 0; x < r.names->size(); ++x) {
        if ((*r.names)[x] == node) *cells += r.tally[x].cells;
      }
    };
    for (size_t k : ks) explained.insert({node, rails_[k].rail});
    if (ks.size() == rails_of[node]) {
      std::vector<float> b, a;
      uint32_t cells = 0;
      for (size_t k : ks) collect(k, &b, &a, &cells);
      auto* g = add(v1::REGRESSION_KIND_NODE, node, b, a, rails_[ks.front()].rail,
                    rails_[ks.front()].size_bytes,
                    absl::StrCat(b.size(), " of its ", cells, " compared cells regressed against ",
                                 ReferenceName(report_.reference()),
                                 ks.size() > 1 ? absl::StrCat(" on all ", ks.size(), " rails") : "",
                                 " (to and from most partners)"));
      g->set_src(node);
    } else {
      for (size_t k : ks) {
        std::vector<float> b, a;
        uint32_t cells = 0;
        collect(k, &b, &a, &cells);
        auto* g = add(v1::REGRESSION_KIND_NIC, absl::StrCat(node, " rail ", rails_[k].rail), b, a,
                      rails_[k].rail, rails_[k].size_bytes,
                      absl::StrCat(b.size(), " of its ", cells, " compared cells on this rail regressed "
                                   "against ", ReferenceName(report_.reference()),
                                   "; its other rails did not"));
        g->set_src(node);
      }
    }
  }
  // Links, largest drop first.
  struct Link {
    const Rail* r;
    RegressedCell c;
    bool both;
  };
  std::vector<Link> links;
  for (const Rail& r : rails_) {
    if (bad_rails.count(r.rail)) continue;
    std::set<std::pair<uint32_t, uint32_t>> regressed;
    for (const auto& c : r.regressed) regressed.insert({c.src, c.dst});
    for (const auto& c : r.regressed) {
      if (explained.count({(*r.names)[c.src], r.rail}) || explained.count({(*r.names)[c.dst], r.rail})) {
        continue;
      }
      const bool both = regressed.count({c.dst, c.src}) > 0;
      if (both && c.dst < c.src) continue;  // reported with (dst, src)
      links.push_back({&r, c, both});
    }
  }
  auto drop = [](const RegressedCell& c) { return c.before > 0 ? 1 - c.after / c.before : 0.0f; };
  std::stable_sort(links.begin(), links.end(),
                   [&](const Link& x, const Link& y) { return drop(x.c) > drop(y.c); });
  const bool one_rail = rails_.size() == 1;
  for (size_t i = 0; i < links.size(); ++i) {
    if (i == max_links_) {
      report_.set_links_omitted(static_cast<uint32_t>(links.size() - max_links_));
      break;
    }
    const Link& l = links[i];
    const std::string& s = (*l.r->names)[l.c.src];
    const std::string& d = (*l.r->names)[l.c.dst];
    std::string subject = absl::StrCat(s, l.both ? "<->" : "->", d,
                                       one_rail ? "" : absl::StrCat(" rail ", l.r->rail));
    std::string what = l.c.after > 0
                           ? absl::StrFormat("%.3g Gb/s, %.1f%% below %s's %.3g Gb/s (tolerance %.0f%%)",
                                             l.c.after, 100 * drop(l.c), ReferenceName(report_.reference()),
                                             l.c.before, 100 * tol)
                           : absl::StrFormat("failed; %s measured %.3g Gb/s",
                                             ReferenceName(report_.reference()), l.c.before);
    auto* g = add(v1::REGRESSION_KIND_LINK, std::move(subject), {l.c.before}, {l.c.after}, l.r->rail,
                  l.r->size_bytes,
                  absl::StrCat(what, "; both nodes held up with their other partners: suspect the "
                               "cable, the switch ports or the path between them"));
    g->set_src(s);
    g->set_dst(d);
  }
  // Summary line.
  if (report_.reference_run_id().empty()) {
    report_.set_summary(absl::StrCat("no ", report_.reference() == v1::REGRESSION_REFERENCE_BASELINE
                                                ? "baseline is set"
                                                : "earlier passing run",
                                     ": nothing compared"));
  } else if (report_.regressions_size() == 0) {
    report_.set_summary(absl::StrCat("no regression against ", ReferenceName(report_.reference()), " ",
                                     report_.reference_run_id(), " (", report_.compared_cells(),
                                     " cells compared, tolerance ", 100 * tol, "%)"));
  } else {
    std::vector<std::string> who;
    for (const auto& g : report_.regressions()) {
      if (who.size() == 6) {
        who.push_back(absl::StrCat("and ", report_.regressions_size() - 6 + report_.links_omitted(), " more"));
        break;
      }
      who.push_back(g.subject());
    }
    report_.set_summary(absl::StrCat(report_.regressed_cells(), " of ", report_.compared_cells(),
                                     " cells regressed against ", ReferenceName(report_.reference()), " ",
                                     report_.reference_run_id(), ": ", absl::StrJoin(who, ", ")));
  }
  return report_;
}

}  // namespace gdrbench::server::history
