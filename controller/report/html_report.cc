// The self-contained HTML report: inline CSS, SVG curves and the canvas
// heatmap's scripts (heatmap_html.h), no external resources, so it opens from
// a CI artifact store or a mail.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "controller/report/report.h"
#include "report/coverage.h"
#include "report/heatmap_html.h"
#include "report/lane.h"
#include "report/left_out.h"
#include "report/report_util.h"

namespace gdrbench::controller::report {
namespace {

using gdrbench::report::DstRail;
using gdrbench::report::EmbeddedHeatmap;
using gdrbench::report::FormatLeftOutCause;
using gdrbench::report::Gbps;
using gdrbench::report::GroupLeftOut;
using gdrbench::report::HeatmapHtmlOptions;
using gdrbench::report::HeatmapScriptsHtml;
using gdrbench::report::HtmlEscape;
using gdrbench::report::LaneName;
using gdrbench::report::LaneTitle;
using gdrbench::report::MatrixSizeName;
using gdrbench::report::NodeRows;
using gdrbench::report::NodesOfRun;
using gdrbench::report::PreflightProblems;
using gdrbench::report::RegressionKindName;
using gdrbench::report::RegressionReferenceName;
using gdrbench::report::SizeName;
using gdrbench::report::TestedMemory;
using gdrbench::report::VerdictMatrices;

constexpr char kStyle[] = R"(
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#1d2330;background:#fff}
h1{font-size:22px;margin:0 0 4px} h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #dde}
.verdict{display:inline-block;padding:4px 12px;border-radius:4px;color:#fff;font-weight:600}
.pass{background:#1f8a3b}.fail{background:#c62828}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ccd;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f2f4f8}.muted{color:#667}.legend rect{stroke:#445;stroke-width:.5}
svg text{font:11px system-ui,sans-serif;fill:#1d2330}
@media print{body{margin:0}h2{break-after:avoid}.gdr-hm{break-inside:avoid}}
)";

// Bandwidth vs message size, one polyline per pair of a lane (log2 x axis).
std::string Curves(const v1::Run& run, uint32_t rail, uint32_t dst_rail) {
  std::vector<const v1::PairResult*> pairs;
  std::set<uint64_t> sizes;
  double ymax = 0;
  for (const auto& p : run.pairs()) {
    if (p.rail() != rail || DstRail(p) != dst_rail || p.sizes().empty()) continue;
    pairs.push_back(&p);
    for (const auto& s : p.sizes()) {
      sizes.insert(s.size_bytes());
      ymax = std::max(ymax, s.bw_avg_gbps());
    }
  }
  if (pairs.empty() || sizes.size() < 2) return "<p class=\"muted\">one message size only: no curves</p>\n";
  constexpr size_t kMaxCurves = 64;
  const size_t shown = std::min(pairs.size(), kMaxCurves);
  const int w = 640, h = 300, l = 60, b = 40, t = 10, r = 20;
  const double x0 = std::log2(static_cast<double>(*sizes.begin()));
  const double x1 = std::log2(static_cast<double>(*sizes.rbegin()));
  ymax = ymax > 0 ? ymax * 1.05 : 1;
  auto X = [&](uint64_t s) { return l + (std::log2(static_cast<double>(s)) - x0) / (x1 - x0) * (w - l - r); };
  auto Y = [&](double v) { return t + (1 - v / ymax) * (h - t - b); };
  std::string svg = absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" role=\"img\" "
      "aria-label=\"bandwidth vs size %s\">\n<rect width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n",
      w, h, LaneName(rail, dst_rail), w, h);
  absl::StrAppend(&svg, absl::StrFormat("<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#445\"/>\n",
                                        l, h - b, w - r, h - b));
  absl::StrAppend(&svg, absl::StrFormat("<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#445\"/>\n",
                                        l, t, l, h - b));
  for (uint64_t s : sizes) {
    absl::StrAppend(&svg, absl::StrFormat("<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
                                          X(s), h - b + 14, HtmlEscape(SizeName(s))));
  }
  for (int k = 0; k <= 4; ++k) {
    double v = ymax * k / 4;
    absl::StrAppend(&svg, absl::StrFormat("<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                                          l - 6, Y(v) + 4, Gbps(v)));
  }
  absl::StrAppend(&svg, absl::StrFormat("<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">message size</text>\n",
                                        (l + w - r) / 2, h - 6));
  absl::StrAppend(&svg, "<text x=\"12\" y=\"150\" transform=\"rotate(-90 12 150)\">Gb/s</text>\n");
  for (size_t i = 0; i < shown; ++i) {
    const auto* p = pairs[i];
    std::string pts;
    for (const auto& s : p->sizes()) {
      absl::StrAppend(&pts, absl::StrFormat("%.1f,%.1f ", X(s.size_bytes()), Y(s.bw_avg_gbps())));
    }
    int hue = static_cast<int>((i * 137) % 360);
    absl::StrAppend(&svg, "<polyline fill=\"none\" stroke-width=\"1.5\" stroke=\"hsl(", hue,
                    ",60%,45%)\" points=\"", pts, "\"><title>",
                    HtmlEscape(absl::StrCat(p->src().node(), " -> ", p->dst().node())),
                    "</title></polyline>\n");
  }
  svg += "</svg>\n";
  if (shown < pairs.size()) {
    absl::StrAppend(&svg, "<p class=\"muted\">", shown, " of ", pairs.size(),
                    " pairs drawn (pairs.csv has all)</p>\n");
  }
  return svg;
}

// The heatmap's element id: "m-r<rail>-<size>", cross-rail "m-r<rail>to<dst>-<size>".
std::string MatrixId(const v1::BandwidthMatrix& m) {
  const uint32_t d = DstRail(m);
  return d == m.rail() ? absl::StrCat("m-r", m.rail(), "-", m.size_bytes())
                       : absl::StrCat("m-r", m.rail(), "to", d, "-", m.size_bytes());
}

// The heatmaps of a rail's other sizes (the verdict is reached on the
// largest), smallest last. Each is drawn only as it scrolls into view, but
// its data is in the page: past kOtherSizesCellBudget cells in all (a few
// MB of page), the rest are named, not embedded.
constexpr size_t kOtherSizesCellBudget = 2'000'000;

std::string OtherSizes(const v1::Run& run, const v1::BandwidthMatrix& verdict, bool reference_fleet,
                       size_t* cell_budget) {
  std::vector<const v1::BandwidthMatrix*> others;
  for (const auto& m : run.matrices()) {
    if (m.rail() == verdict.rail() && DstRail(m) == DstRail(verdict) &&
        m.size_bytes() != verdict.size_bytes()) {
      others.push_back(&m);
    }
  }
  std::sort(others.begin(), others.end(),
            [](const auto* a, const auto* b) { return a->size_bytes() > b->size_bytes(); });
  std::string out;
  std::vector<std::string> left_out;
  for (const auto* m : others) {
    if (static_cast<size_t>(m->cells_size()) > *cell_budget) {
      left_out.push_back(SizeName(m->size_bytes()));
      continue;
    }
    *cell_budget -= m->cells_size();
    HeatmapHtmlOptions ho;
    ho.id = MatrixId(*m);
    ho.reference_fleet = reference_fleet;
    absl::StrAppend(&out, "<h3>", LaneTitle(*m), ": BW average, ", MatrixSizeName(*m), "</h3>\n",
                    EmbeddedHeatmap(*m, ho));
  }
  if (!left_out.empty()) {
    absl::StrAppend(&out, "<p class=\"muted\">", LaneName(verdict), " at ", absl::StrJoin(left_out, ", "),
                    ": not drawn here (too many cells for one page); in run.json and pairs.csv, and on "
                    "gdrbench-server's run page</p>\n");
  }
  return out;
}

// The page's head, title, verdict, the causes of nodes left out and the
// sweep's mode and policy.
void AppendHeader(const v1::Run& run, std::string& out) {
  out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  absl::StrAppend(&out, "<title>gdrbench sweep ", HtmlEscape(run.run_id()), "</title>\n<style>", kStyle,
                  "</style></head><body>\n");
  absl::StrAppend(&out, "<h1>gdrbench sweep ", HtmlEscape(run.run_id()), "</h1>\n");
  absl::StrAppend(&out, "<p><span class=\"verdict ", run.passed() ? "pass\">PASS" : "fail\">FAIL",
                  "</span> ", HtmlEscape(run.summary()), "</p>\n");
  // Nodes left out: each cause once, in the words of the sweep's last lines and summary.md, with
  // its remedy (the per-node reasons folded below).
  const size_t of_nodes = NodesOfRun(run);
  for (const auto& g : GroupLeftOut(run)) {
    absl::StrAppend(&out, "<p class=\"cause\"><b>", HtmlEscape(FormatLeftOutCause(g, of_nodes)),
                    "</b><br>remedy: ", HtmlEscape(g.remedy), "</p>\n");
  }
  absl::StrAppend(
      &out, "<p class=\"muted\">mode ", HtmlEscape(run.mode()), " &middot; ", run.pairs_size(),
      " pair tests &middot; ", HtmlEscape(TestedMemory(run)), " &middot; ",
      run.policy().min_fraction_of_link() > 0
          ? absl::StrCat("pass &ge; ", absl::StrFormat("%.0f", 100 * run.policy().min_fraction_of_link()),
                         " % of link rate")
          : std::string("absolute verdict off"),
      run.policy().mad_k() > 0 ? absl::StrCat(" &middot; fleet-relative k = ", run.policy().mad_k())
                               : std::string(""),
      "</p>\n");
  if (run.has_coverage()) {  // --mode cover | shift: the cables proven, and those not
    absl::StrAppend(&out, "<p class=\"coverage\">fabric ", HtmlEscape(run.coverage().topology()), ": ",
                    HtmlEscape(gdrbench::report::CoverageText(run.coverage())), "</p>\n");
    std::vector<std::string> gaps = gdrbench::report::CoverageGapLines(run.coverage(), 50);
    for (const std::string& f : gdrbench::report::CounterFindingLines(run.coverage(), 50)) {
      gaps.push_back("switch counters: " + f);
    }
    if (!gaps.empty()) {
      out += "<details><summary>cables not measured, and what the switch counters said</summary><ul>\n";
      for (const std::string& g : gaps) absl::StrAppend(&out, "<li>", HtmlEscape(g), "</li>\n");
      out += "</ul></details>\n";
    }
  }
}

// The nodes' software table, the nodes left out and the blame table.
void AppendNodesAndBlame(const v1::Run& run, std::string& out) {
  if (auto rows = NodeRows(run); !rows.empty()) {
    out += "<h2>Nodes</h2>\n<table><tr><th>node</th><th>host</th><th>kernel</th><th>NVIDIA driver</th><th>CUDA</th>"
           "<th>rdma-core / OFED</th><th>HCA firmware</th><th>preflight</th></tr>\n";
    for (const auto& r : rows) {
      out += "<tr>";
      for (const std::string* v : {&r.name, &r.host, &r.kernel, &r.driver, &r.cuda, &r.rdma, &r.firmware, &r.preflight}) {
        absl::StrAppend(&out, "<td>", v->empty() ? "&mdash;" : HtmlEscape(*v), "</td>");
      }
      out += "</tr>\n";
    }
    out += "</table>\n";
  }
  if (!run.excluded_nodes().empty()) {
    absl::StrAppend(&out, "<h2>Nodes left out</h2><details><summary>", run.excluded_nodes_size(),
                    " node(s), each with its reason</summary><ul>\n");
    for (const auto& e : run.excluded_nodes()) absl::StrAppend(&out, "<li>", HtmlEscape(e), "</li>\n");
    out += "</ul></details>\n";
  }
  if (!run.blame().empty()) {
    out += "<h2>Blame</h2>\n<table><tr><th>kind</th><th>subject</th><th>Gb/s</th><th>reason</th></tr>\n";
    for (const auto& b : run.blame()) {
      absl::StrAppend(&out, "<tr><td>", HtmlEscape(b.kind()), "</td><td>", HtmlEscape(b.subject()),
                      "</td><td>", Gbps(b.evidence_gbps()), "</td><td>", HtmlEscape(b.reason()),
                      "</td></tr>\n");
    }
    out += "</table>\n";
  }
}

// One section per reference the run was compared with.
void AppendRegressions(const v1::Run& run, std::string& out) {
  for (const auto& r : run.regressions()) {
    absl::StrAppend(
        &out, "<h2>Regressions against ", RegressionReferenceName(r.reference()),
        r.reference_run_id().empty() ? "" : absl::StrCat(" (", HtmlEscape(r.reference_run_id()), ")"),
        "</h2>\n<p>", HtmlEscape(r.summary()), "</p>\n");
    if (r.regressions().empty()) continue;
    out += "<table><tr><th>kind</th><th>subject</th><th>before Gb/s</th><th>after Gb/s</th><th>drop</th>"
           "<th>reason</th></tr>\n";
    for (const auto& g : r.regressions()) {
      absl::StrAppend(&out, "<tr><td>", RegressionKindName(g.kind()), "</td><td>", HtmlEscape(g.subject()),
                      "</td><td>", Gbps(g.before_gbps()), "</td><td>", Gbps(g.after_gbps()), "</td><td>",
                      absl::StrFormat("%.1f%%", 100 * g.drop_fraction()), "</td><td>", HtmlEscape(g.reason()),
                      "</td></tr>\n");
    }
    out += "</table>\n";
  }
}

// Each lane's verdict heatmap, its other sizes and its bandwidth curves.
void AppendMatrices(const v1::Run& run, std::string& out) {
  size_t cell_budget = kOtherSizesCellBudget;
  for (const auto* m : VerdictMatrices(run)) {
    // Colours: % of each cell's link rate when the absolute verdict is on, else
    // % of the fleet's best cell (a lab at 0.4 Gb/s on a "100 Gb/s" port would
    // otherwise be all red while every cell passes).
    HeatmapHtmlOptions ho;
    ho.id = MatrixId(*m);
    ho.reference_fleet = !(run.policy().min_fraction_of_link() > 0);
    absl::StrAppend(&out, "<h2>", LaneTitle(*m), ": BW average, ", MatrixSizeName(*m),
                    " (rows: initiator, columns: target)</h2>\n", EmbeddedHeatmap(*m, ho));
    absl::StrAppend(&out, "<p class=\"muted\">fleet median ", Gbps(m->fleet().median_gbps()),
                    " Gb/s, min ", Gbps(m->fleet().min_gbps()), ", max ", Gbps(m->fleet().max_gbps()),
                    "; ", m->fleet().bad_cells(), " failed, ", m->fleet().low_cells(), " low</p>\n");
    absl::StrAppend(&out, OtherSizes(run, *m, ho.reference_fleet, &cell_budget));
    absl::StrAppend(&out, "<h2>", LaneTitle(*m), ": bandwidth vs message size</h2>\n",
                    Curves(run, m->rail(), DstRail(*m)));
  }
}

// The rows of the failing cells' table, each with its nodes' preflight
// findings and remedies.
std::string FailingRows(const v1::Run& run, const std::map<std::string, std::vector<std::string>>& problems) {
  std::string failing;
  for (const auto* m : VerdictMatrices(run)) {
    for (const auto& c : m->cells()) {
      if (c.verdict() == "pass") continue;
      std::string remedy;
      for (uint32_t idx : {c.src(), c.dst()}) {
        auto it = problems.find(m->nodes(idx));
        if (it == problems.end()) continue;
        for (const auto& p : it->second) absl::StrAppend(&remedy, HtmlEscape(m->nodes(idx)), ": ", HtmlEscape(p), "<br>");
      }
      absl::StrAppend(&failing, "<tr><td>", HtmlEscape(m->nodes(c.src())), " &rarr; ",
                      HtmlEscape(m->nodes(c.dst())), "</td><td>", LaneName(*m).substr(5), "</td><td>",
                      HtmlEscape(c.verdict()), "</td><td>", HtmlEscape(c.reason()), "</td><td>",
                      remedy.empty() ? "&mdash;" : remedy, "</td></tr>\n");
    }
  }
  return failing;
}

// The rows of the table of links their port counters flagged.
std::string FlaggedRows(const v1::Run& run) {
  std::string flagged;
  for (const auto& p : run.pairs()) {
    if (p.link_flag().empty()) continue;
    absl::StrAppend(&flagged, "<tr><td>", HtmlEscape(p.src().node()), " &rarr; ", HtmlEscape(p.dst().node()),
                    "</td><td>", p.rail(), "</td><td>", HtmlEscape(p.link_flag()), "</td><td>",
                    HtmlEscape(DescribePortCounters(p.src_counters())), "<br>",
                    HtmlEscape(DescribePortCounters(p.dst_counters())), "</td></tr>\n");
  }
  return flagged;
}

}  // namespace

std::string RenderHtml(const v1::Run& run) {
  std::string out;
  AppendHeader(run, out);
  AppendNodesAndBlame(run, out);
  AppendRegressions(run, out);
  AppendMatrices(run, out);
  auto problems = PreflightProblems(run);
  std::string failing = FailingRows(run, problems);
  std::string flagged = FlaggedRows(run);
  if (!flagged.empty()) {
    absl::StrAppend(&out, "<h2>Links flagged by their counters</h2>\n<table><tr><th>pair</th><th>rail</th>"
                          "<th>flag</th><th>counters (initiator, target)</th></tr>\n",
                    flagged, "</table>\n<p>", kPortCountersCaveat, ".</p>\n");
  }
  if (!failing.empty()) {
    absl::StrAppend(&out, "<h2>Failing cells</h2>\n<table><tr><th>pair</th><th>rail</th><th>verdict</th>"
                          "<th>reason</th><th>preflight findings and remedies</th></tr>\n",
                    failing, "</table>\n");
  }
  if (!problems.empty()) {
    out += "<h2>Preflight findings</h2><ul>\n";
    for (const auto& [node, list] : problems) {
      for (const auto& p : list) absl::StrAppend(&out, "<li>", HtmlEscape(node), ": ", HtmlEscape(p), "</li>\n");
    }
    out += "</ul>\n";
  }
  out += HeatmapScriptsHtml();
  out += "</body></html>\n";
  return out;
}

}  // namespace gdrbench::controller::report
