#include "report/capacity_report.h"

#include <ctime>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "report/report_util.h"

namespace gdrbench::report {
namespace {

std::string Day(const google::protobuf::Timestamp& t) {
  std::time_t s = t.seconds();
  std::tm tm{};
  gmtime_r(&s, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

std::string Pct(double fraction) { return absl::StrFormat("%.1f", 100 * fraction); }
std::string G(double v) { return absl::StrFormat("%.4g", v); }

std::string Link(const v1::WeakLink& w) { return absl::StrCat(w.src(), "->", w.dst()); }

std::string Leaves(const v1::WeakLink& w) {
  if (w.src_leaf().empty() && w.dst_leaf().empty()) return "-";
  return absl::StrCat(w.src_leaf().empty() ? "?" : w.src_leaf(), "->", w.dst_leaf().empty() ? "?" : w.dst_leaf());
}

}  // namespace

std::string RenderCapacityText(const v1::CapacityReport& r) {
  std::string out = absl::StrCat("capacity of cluster ", r.cluster(), ", the last ", r.days(), " days (",
                                 Day(r.since()), " .. ", Day(r.until()), "): ", r.runs(), " runs",
                                 r.runs_without_stats() ? absl::StrCat(", ", r.runs_without_stats(),
                                                                       " more stored without capacity statistics")
                                                        : "",
                                 "\n", r.summary(), "\n");
  if (!r.topology_labelled()) {
    out += "(no leaf labels in the runs' inventories: per-rail groups only; add leaf: to the inventory's nodes)\n";
  }
  int rail = -1;
  for (const auto& g : r.groups()) {
    if (static_cast<int>(g.rail()) != rail) {
      rail = static_cast<int>(g.rail());
      absl::StrAppend(&out, "\nrail ", g.rail(),
                      g.link_gbps() > 0 ? absl::StrCat(" (link ", G(g.link_gbps()), " Gb/s") : " (link rate unknown",
                      r.acceptance_fraction() > 0 ? absl::StrCat(", acceptance ", Pct(r.acceptance_fraction()), " %)")
                                                  : ")",
                      "\n");
      absl::StrAppend(&out, absl::StrFormat("  %-28s %9s %7s %8s %8s %8s %8s %7s %6s %8s %8s\n", "group", "cells",
                                            "failed", "min", "p5", "median", "max", "med%", "p5%", "p5-line",
                                            "med chg"));
    }
    absl::StrAppend(&out, absl::StrFormat(
                              "  %-28s %9d %7d %8s %8s %8s %8s %7s %6s %8s %7s%%\n", g.group(), g.ok_cells(),
                              g.failed_cells(), G(g.min_gbps()), G(g.p5_gbps()), G(g.median_gbps()), G(g.max_gbps()),
                              g.link_gbps() > 0 ? Pct(g.median_fraction()) : "-",
                              g.link_gbps() > 0 ? Pct(g.p5_fraction()) : "-",
                              g.link_gbps() > 0 && r.acceptance_fraction() > 0
                                  ? absl::StrFormat("%+.1f", 100 * g.p5_margin_fraction())
                                  : "-",
                              absl::StrFormat("%+.1f", 100 * g.median_change_fraction())));
  }
  if (r.weakest().empty()) return out;
  absl::StrAppend(&out, "\nweakest links (Gb/s; latest run, first run of the period, median)\n",
                  absl::StrFormat("  %4s %-32s %-20s %8s %6s %8s %8s %8s %5s\n", "rail", "link", "leaves", "latest",
                                  "%link", "first", "change", "median", "runs"));
  for (const auto& w : r.weakest()) {
    absl::StrAppend(&out, absl::StrFormat("  %4d %-32s %-20s %8s %6s %8s %7s%% %8s %5d\n", w.rail(), Link(w),
                                          Leaves(w), G(w.latest_gbps()),
                                          w.latest_fraction() > 0 ? Pct(w.latest_fraction()) : "-", G(w.first_gbps()),
                                          absl::StrFormat("%+.1f", 100 * w.change_fraction()), G(w.median_gbps()),
                                          w.trend_size()));
  }
  return out;
}

std::string RenderCapacityCsv(const v1::CapacityReport& r) {
  std::string out =
      "cluster,days,runs,rail,group,ok_cells,failed_cells,link_gbps,min_gbps,p5_gbps,median_gbps,max_gbps,"
      "mean_gbps,median_pct_of_link,p5_pct_of_link,p5_minus_acceptance_pct,median_change_pct,p5_change_pct,"
      "min_change_pct\n";
  for (const auto& g : r.groups()) {
    absl::StrAppend(&out, CsvField(r.cluster()), ",", r.days(), ",", r.runs(), ",", g.rail(), ",",
                    CsvField(g.group()), ",", g.ok_cells(), ",", g.failed_cells(), ",", G(g.link_gbps()), ",",
                    G(g.min_gbps()), ",", G(g.p5_gbps()), ",", G(g.median_gbps()), ",", G(g.max_gbps()), ",",
                    G(g.mean_gbps()), ",", g.link_gbps() > 0 ? Pct(g.median_fraction()) : "", ",",
                    g.link_gbps() > 0 ? Pct(g.p5_fraction()) : "", ",",
                    g.link_gbps() > 0 && r.acceptance_fraction() > 0 ? Pct(g.p5_margin_fraction()) : "", ",",
                    Pct(g.median_change_fraction()), ",", Pct(g.p5_change_fraction()), ",",
                    Pct(g.min_change_fraction()), "\n");
  }
  out += "\nrail,src,dst,src_leaf,dst_leaf,link_gbps,latest_gbps,latest_pct_of_link,first_gbps,change_pct,"
         "median_gbps,runs_measured,runs_among_weakest\n";
  for (const auto& w : r.weakest()) {
    absl::StrAppend(&out, w.rail(), ",", CsvField(w.src()), ",", CsvField(w.dst()), ",", CsvField(w.src_leaf()), ",",
                    CsvField(w.dst_leaf()), ",", G(w.link_gbps()), ",", G(w.latest_gbps()), ",",
                    w.latest_fraction() > 0 ? Pct(w.latest_fraction()) : "", ",", G(w.first_gbps()), ",",
                    Pct(w.change_fraction()), ",", G(w.median_gbps()), ",", w.trend_size(), ",", w.runs_weakest(),
                    "\n");
  }
  return out;
}

}  // namespace gdrbench::report
