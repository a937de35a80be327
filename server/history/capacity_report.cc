#include "server/history/capacity_report.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status.h"
#include "server/history/capacity.h"

namespace gdrbench::server::history {
namespace {

// One (rail, group) over the period.
struct Merged {
  uint64_t ok = 0, failed = 0;
  double min = 0, max = 0, sum = 0, link = 0;
  std::map<uint32_t, uint64_t> hist;
  std::vector<v1::CapacityPoint> trend;
};

// "all" first, then the kinds of capacity.proto in that order, then by name.
int GroupRank(const std::string& g) {
  if (g == "all") return 0;
  if (g == "intra-leaf") return 1;
  if (g == "cross-leaf") return 2;
  if (g == "cross-spine-group") return 3;
  if (g.rfind("spine group ", 0) == 0) return 4;
  return 5;  // "leaf L", "leaf L uplinks"
}

double Quantile(const std::map<uint32_t, uint64_t>& hist, double q, double min, double max) {
  std::vector<uint32_t> bins;
  std::vector<uint64_t> counts;
  for (const auto& [b, c] : hist) {
    bins.push_back(b);
    counts.push_back(c);
  }
  return HistQuantile(bins, counts, q, min, max);
}

double Change(double first, double last) { return first > 0 ? last / first - 1 : 0; }

v1::CapacityPoint Point(const store::RunRow& run, const v1::CapacityStats& s) {
  v1::CapacityPoint p;
  p.set_run_id(run.run_id);
  *p.mutable_started_at() = store::FromMicros(run.started_us);
  p.set_ok_cells(s.ok_cells());
  p.set_failed_cells(s.failed_cells());
  std::vector<uint32_t> bins(s.bins().begin(), s.bins().end());
  std::vector<uint64_t> counts(s.counts().begin(), s.counts().end());
  if (s.ok_cells() > 0) {
    p.set_min_gbps(s.min_gbps());
    p.set_p5_gbps(HistQuantile(bins, counts, 0.05, s.min_gbps(), s.max_gbps()));
    p.set_median_gbps(HistQuantile(bins, counts, 0.5, s.min_gbps(), s.max_gbps()));
    p.set_max_gbps(s.max_gbps());
  }
  return p;
}

void Merge(Merged& m, const store::RunRow& run, const v1::CapacityStats& s) {
  if (s.ok_cells() > 0) {
    m.min = m.ok == 0 ? s.min_gbps() : std::min(m.min, s.min_gbps());
    m.max = m.ok == 0 ? s.max_gbps() : std::max(m.max, s.max_gbps());
  }
  m.ok += s.ok_cells();
  m.failed += s.failed_cells();
  m.sum += s.sum_gbps();
  m.link = std::max(m.link, s.link_gbps());
  for (int i = 0; i < s.bins_size() && i < s.counts_size(); ++i) m.hist[s.bins(i)] += s.counts(i);
  m.trend.push_back(Point(run, s));
}

v1::CapacityGroup ToGroup(uint32_t rail, const std::string& name, const Merged& m, double acceptance) {
  v1::CapacityGroup g;
  g.set_rail(rail);
  g.set_group(name);
  g.set_ok_cells(m.ok);
  g.set_failed_cells(m.failed);
  g.set_link_gbps(m.link);
  if (m.ok > 0) {
    g.set_min_gbps(m.min);
    g.set_p5_gbps(Quantile(m.hist, 0.05, m.min, m.max));
    g.set_median_gbps(Quantile(m.hist, 0.5, m.min, m.max));
    g.set_max_gbps(m.max);
    g.set_mean_gbps(m.sum / static_cast<double>(m.ok));
  }
  if (m.link > 0) {
    g.set_median_fraction(g.median_gbps() / m.link);
    g.set_p5_fraction(g.p5_gbps() / m.link);
    if (acceptance > 0) g.set_p5_margin_fraction(g.p5_fraction() - acceptance);
  }
  for (const auto& p : m.trend) *g.add_trend() = p;
  // The change over the period, between the first and the last run with OK cells.
  const v1::CapacityPoint* first = nullptr;
  const v1::CapacityPoint* last = nullptr;
  for (const auto& p : g.trend()) {
    if (p.ok_cells() == 0) continue;
    if (first == nullptr) first = &p;
    last = &p;
  }
  if (first != nullptr && last != first) {
    g.set_median_change_fraction(Change(first->median_gbps(), last->median_gbps()));
    g.set_p5_change_fraction(Change(first->p5_gbps(), last->p5_gbps()));
    g.set_min_change_fraction(Change(first->min_gbps(), last->min_gbps()));
  }
  return g;
}

struct Candidate {
  v1::CapacityCell cell;   // its newest appearance among the runs' weakest
  uint32_t runs = 0;
};

double Fraction(double gbps, double link) { return link > 0 ? gbps / link : gbps; }

// The link's trend over the period (LinkTrend: the verdict size of each run).
absl::StatusOr<v1::WeakLink> WeakLinkOf(store::Store& store, const std::string& cluster, const Candidate& c,
                                        int64_t since_us, int64_t until_us, uint32_t runs) {
  v1::WeakLink w;
  w.set_rail(c.cell.rail());
  w.set_src(c.cell.src());
  w.set_dst(c.cell.dst());
  w.set_src_leaf(c.cell.src_leaf());
  w.set_dst_leaf(c.cell.dst_leaf());
  w.set_link_gbps(c.cell.link_gbps());
  w.set_runs_weakest(c.runs);
  GDR_ASSIGN_OR_RETURN(int64_t src, store.NodeId(c.cell.src()));
  GDR_ASSIGN_OR_RETURN(int64_t dst, store.NodeId(c.cell.dst()));
  std::vector<store::LinkPoint> points;
  if (src >= 0 && dst >= 0) {
    GDR_ASSIGN_OR_RETURN(points, store.LinkTrend(cluster, src, dst, c.cell.rail(), 0, since_us, runs));
  }
  std::vector<double> ok;
  for (auto it = points.rbegin(); it != points.rend(); ++it) {
    if (it->started_us >= until_us) continue;
    v1::WeakLinkPoint* p = w.add_trend();
    p->set_run_id(it->run_id);
    *p->mutable_started_at() = store::FromMicros(it->started_us);
    const bool is_ok = it->cell.status == v1::RESULT_STATUS_OK;
    p->set_gbps(is_ok ? it->cell.bw_avg_gbps : 0);
    p->set_status(is_ok ? "ok" : "not ok");
    if (!is_ok) continue;
    if (ok.empty()) w.set_first_gbps(it->cell.bw_avg_gbps);
    w.set_latest_gbps(it->cell.bw_avg_gbps);
    ok.push_back(it->cell.bw_avg_gbps);
  }
  if (ok.empty()) {  // no OK point left in the store: what the run summary kept
    w.set_latest_gbps(c.cell.gbps());
    w.set_first_gbps(c.cell.gbps());
    ok.push_back(c.cell.gbps());
  }
  std::sort(ok.begin(), ok.end());
  w.set_median_gbps(ok.size() % 2 ? ok[ok.size() / 2] : (ok[ok.size() / 2 - 1] + ok[ok.size() / 2]) / 2);
  w.set_change_fraction(Change(w.first_gbps(), w.latest_gbps()));
  if (w.link_gbps() > 0) w.set_latest_fraction(w.latest_gbps() / w.link_gbps());
  return w;
}

std::string Summary(const v1::CapacityReport& r) {
  if (r.runs() == 0) {
    return absl::StrCat("no run of ", r.cluster(), " with capacity statistics in the last ", r.days(), " days",
                        r.runs_without_stats() ? absl::StrCat(" (", r.runs_without_stats(),
                                                              " stored before the server kept them)")
                                               : "");
  }
  std::string s = absl::StrCat(r.runs(), " runs over ", r.days(), " days");
  for (const auto& g : r.groups()) {
    if (g.group() != "all") continue;
    absl::StrAppend(&s, "; rail ", g.rail(), ": median ", absl::StrFormat("%.3g", g.median_gbps()), " Gb/s",
                    g.link_gbps() > 0 ? absl::StrFormat(" (%.0f %% of %.3g)", 100 * g.median_fraction(), g.link_gbps())
                                      : std::string());
  }
  if (!r.weakest().empty()) {
    const auto& w = r.weakest(0);
    absl::StrAppend(&s, "; weakest ", w.src(), "->", w.dst(), " rail ", w.rail(), " at ",
                    absl::StrFormat("%.3g", w.latest_gbps()), " Gb/s",
                    w.latest_fraction() > 0 ? absl::StrFormat(" (%.0f %%)", 100 * w.latest_fraction()) : std::string(),
                    absl::StrFormat(", %+.0f %% over the period", 100 * w.change_fraction()));
  }
  return s;
}

}  // namespace

absl::StatusOr<v1::CapacityReport> BuildCapacityReport(store::Store& store, const std::string& cluster,
                                                       const CapacityOptions& o) {
  if (o.days == 0 || o.days > 3660) return absl::InvalidArgumentError("days must be 1 to 3660");
  if (o.weakest > 1000) return absl::InvalidArgumentError("weakest must be at most 1000");
  const int64_t until = o.now_us ? o.now_us : store::NowMicros();
  const int64_t since = until - int64_t{o.days} * 86400 * 1000000;
  store::RunFilter f;
  f.cluster = cluster;
  f.since_us = since;
  f.until_us = until;
  f.limit = o.max_runs;
  GDR_ASSIGN_OR_RETURN(std::vector<store::RunRow> rows, store.ListRuns(f));
  std::reverse(rows.begin(), rows.end());  // oldest first

  v1::CapacityReport out;
  out.set_cluster(cluster);
  *out.mutable_since() = store::FromMicros(since);
  *out.mutable_until() = store::FromMicros(until);
  out.set_days(o.days);
  std::map<std::tuple<uint32_t, int, std::string>, Merged> merged;
  std::map<std::tuple<uint32_t, std::string, std::string>, Candidate> candidates;
  double acceptance = 0;
  for (const store::RunRow& row : rows) {
    GDR_ASSIGN_OR_RETURN(std::optional<std::string> blob, store.ReadCapacity(row.key));
    v1::RunCapacity cap;
    if (!blob) {
      out.set_runs_without_stats(out.runs_without_stats() + 1);
      continue;
    }
    if (!cap.ParseFromString(*blob)) {
      return absl::DataLossError(absl::StrCat("run ", row.run_id, ": its capacity statistics do not parse"));
    }
    out.set_runs(out.runs() + 1);
    acceptance = cap.acceptance_fraction();  // the newest run's line
    for (const auto& s : cap.groups()) {
      Merge(merged[{s.rail(), GroupRank(s.group()), s.group()}], row, s);
      if (s.group() != "all" && s.ok_cells() + s.failed_cells() > 0) out.set_topology_labelled(true);
    }
    for (const auto& c : cap.weakest()) {
      Candidate& cand = candidates[{c.rail(), c.src(), c.dst()}];
      cand.cell = c;  // rows are oldest first: the last write is the newest appearance
      ++cand.runs;
    }
  }
  out.set_acceptance_fraction(acceptance);
  for (const auto& [key, m] : merged) *out.add_groups() = ToGroup(std::get<0>(key), std::get<2>(key), m, acceptance);

  // The weakest links: the candidates weakest when last seen, then their
  // trends, ranked by what they deliver now.
  std::vector<const Candidate*> ranked;
  for (const auto& [key, c] : candidates) ranked.push_back(&c);
  std::sort(ranked.begin(), ranked.end(), [](const Candidate* a, const Candidate* b) {
    return Fraction(a->cell.gbps(), a->cell.link_gbps()) < Fraction(b->cell.gbps(), b->cell.link_gbps());
  });
  const uint32_t want = o.weakest ? o.weakest : 20;
  if (ranked.size() > 2 * size_t{want}) ranked.resize(2 * size_t{want});
  std::vector<v1::WeakLink> weak;
  for (const Candidate* c : ranked) {
    GDR_ASSIGN_OR_RETURN(v1::WeakLink w,
                         WeakLinkOf(store, cluster, *c, since, until, std::max<uint32_t>(out.runs(), 1)));
    weak.push_back(std::move(w));
  }
  std::sort(weak.begin(), weak.end(), [](const v1::WeakLink& a, const v1::WeakLink& b) {
    return std::make_tuple(Fraction(a.latest_gbps(), a.link_gbps()), a.rail(), a.src(), a.dst()) <
           std::make_tuple(Fraction(b.latest_gbps(), b.link_gbps()), b.rail(), b.src(), b.dst());
  });
  if (weak.size() > want) weak.resize(want);
  for (auto& w : weak) *out.add_weakest() = std::move(w);
  out.set_summary(Summary(out));
  return out;
}

}  // namespace gdrbench::server::history
