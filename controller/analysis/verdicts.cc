#include "controller/analysis/verdicts.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/sweep_limits.h"
#include "controller/analysis/blame.h"

namespace gdrbench::controller::analysis {

v1::VerdictPolicy DefaultPolicy() {
  // The values and why: common/sweep_limits.h.
  namespace limits = sweep_limits;
  v1::VerdictPolicy p;
  p.set_min_fraction_of_link(limits::kDefaultMinFractionOfLink);
  p.set_mad_k(limits::kDefaultMadK);
  p.set_fleet_min_drop(limits::kDefaultFleetMinDrop);
  p.set_baseline_tolerance(limits::kDefaultBaselineTolerance);
  p.set_min_gpu_host_ratio(limits::kDefaultMinGpuHostRatio);
  p.set_max_retransmit_fraction(limits::kDefaultMaxRetransmitFraction);
  p.set_min_retransmits(limits::kDefaultMinRetransmits);
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
      b.values_[{m.nodes(c.src()), m.nodes(c.dst()), LaneKey(m.rail(), DstRail(m)), m.size_bytes()}] =
          c.bw_avg_gbps();
    }
  }
  return b;
}

double Baseline::Get(const std::string& src, const std::string& dst, uint32_t rail, uint32_t dst_rail,
                     uint64_t size) const {
  auto it = values_.find({src, dst, LaneKey(rail, dst_rail), size});
  return it == values_.end() ? 0 : it->second;
}

FleetReference ComputeFleetReference(const Matrix& m, const v1::VerdictPolicy& policy) {
  // Fleet reference on a log scale (bandwidth deviations are ratios: a link
  // at a tenth is as far below as one at ten times is above), robust to one
  // bad node in a small fleet (with 4 nodes one node is in half of all
  // cells, so a plain median would move): ref = median of the per-node
  // medians of ln(Gb/s); nodes far below it are outliers; the spread (MAD)
  // is taken over cells between non-outlier nodes, floored at 1 %.
  const uint32_t n = m.n;
  auto ln = [](double v) { return std::log(std::max(v, 1e-9)); };
  FleetReference out;
  // ln(Gb/s) of each OK cell, once (NaN: not an OK cell): three std::log per
  // cell were half of judging a 1024 x 8 run.
  std::vector<double> lnv(static_cast<size_t>(n) * n, std::nan(""));
  std::vector<std::vector<float>> per_node(n);
  for (uint32_t i = 0; i < n; ++i) {
    for (uint32_t j = 0; j < n; ++j) {
      const Cell& c = m.at(i, j);
      if (!c.present() || c.status != v1::RESULT_STATUS_OK) continue;
      const double v = ln(c.gbps);
      lnv[static_cast<size_t>(i) * n + j] = v;
      per_node[i].push_back(static_cast<float>(v));
      per_node[j].push_back(static_cast<float>(v));
      ++out.ok_cells;
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
      const double v = lnv[static_cast<size_t>(i) * n + j];
      if (std::isnan(v)) continue;  // not an OK cell
      float d = static_cast<float>(std::fabs(v - ref));
      dev_all.push_back(d);
      if (!outlier[i] && !outlier[j]) dev.push_back(d);
    }
  }
  out.mad = std::max(Median(dev.empty() ? std::move(dev_all) : std::move(dev)), 0.01);
  out.median_gbps = std::exp(ref);
  // Low means both: outside the fleet's spread, and a drop an operator acts on.
  if (policy.mad_k() > 0 && out.ok_cells >= 3) {
    out.floor_gbps = std::min(std::exp(ref - policy.mad_k() * out.mad),
                              out.median_gbps * (1 - policy.fleet_min_drop()));
  }
  return out;
}

std::string AbsoluteVerdict(const Cell& c, const v1::VerdictPolicy& policy) {
  if (policy.min_fraction_of_link() <= 0 || c.expected_gbps <= 0 ||
      c.gbps >= policy.min_fraction_of_link() * c.expected_gbps) {
    return "";
  }
  return absl::StrFormat("%.3g Gb/s is %.0f%% of the %.4g Gb/s link (pass >= %.0f%%)", c.gbps,
                         100.0 * c.gbps / c.expected_gbps, c.expected_gbps,
                         100 * policy.min_fraction_of_link());
}

std::string FleetVerdict(const Cell& c, const FleetReference& f, const v1::VerdictPolicy& policy) {
  if (f.floor_gbps <= 0 || c.gbps >= f.floor_gbps) return "";
  return absl::StrFormat(
      "%.3g Gb/s is below the fleet floor %.3g Gb/s (reference %.3g Gb/s, %.3g x MAD of "
      "%.1f%% on a log scale)",
      c.gbps, f.floor_gbps, f.median_gbps, policy.mad_k(), 100 * (std::exp(f.mad) - 1));
}

std::string BaselineVerdict(const Cell& c, double b, const v1::VerdictPolicy& policy) {
  if (policy.baseline_tolerance() <= 0 || b <= 0 || c.gbps >= (1 - policy.baseline_tolerance()) * b) {
    return "";
  }
  return absl::StrFormat("%.3g Gb/s is %.1f%% below the baseline %.3g Gb/s", c.gbps,
                         100 * (1 - c.gbps / b), b);
}

namespace {

// At most 8 items, then "and N more": a headline stays one readable line.
std::string Capped(const std::vector<std::string>& items) {
  constexpr size_t kMax = 8;
  if (items.size() <= kMax) return absl::StrJoin(items, ", ");
  std::vector<std::string> head(items.begin(), items.begin() + kMax);
  return absl::StrCat(absl::StrJoin(head, ", "), ", and ", items.size() - kMax, " more");
}

}  // namespace

CellCounts JudgeMatrix(Matrix& m, const std::vector<std::string>& names,
                       const v1::VerdictPolicy& policy, const Baseline* baseline) {
  CellCounts out;
  const uint32_t n = m.n;
  const FleetReference fleet = ComputeFleetReference(m, policy);
  // Reasons of an earlier judgement (before a retest) to drop for cells that
  // pass now; none to look up when there were none.
  const bool had_reasons = !m.reasons.empty();
  for (uint32_t i = 0; i < n; ++i) {
    for (uint32_t j = 0; j < n; ++j) {
      Cell& c = m.at(i, j);
      if (!c.present()) continue;
      ++out.cells;
      if (c.status == v1::RESULT_STATUS_SKIPPED) {  // never tested: no verdict
        c.verdict = Verdict::kNone;
        ++out.skipped;
        continue;
      }
      if (c.status != v1::RESULT_STATUS_OK) {
        c.verdict = Verdict::kFail;
        ++out.fail;
        continue;
      }
      std::vector<std::string> why;
      if (std::string w = AbsoluteVerdict(c, policy); !w.empty()) why.push_back(std::move(w));
      if (std::string w = FleetVerdict(c, fleet, policy); !w.empty()) why.push_back(std::move(w));
      if (baseline != nullptr) {
        const double b = baseline->Get(names[i], names[j], m.rail, m.target_rail(), m.size_bytes);
        c.baseline_gbps = static_cast<float>(b);
        if (std::string w = BaselineVerdict(c, b, policy); !w.empty()) why.push_back(std::move(w));
      }
      if (why.empty()) {
        c.verdict = Verdict::kPass;
        ++out.pass;
        if (had_reasons) m.reasons.erase(i * n + j);  // low before a retest
      } else {
        c.verdict = Verdict::kLow;
        ++out.low;
        m.reasons[i * n + j] = absl::StrJoin(why, "; ");
      }
    }
  }
  return out;
}

void Summarize(const std::vector<std::string>& excluded, Outcome* out) {
  out->passed = out->cells > 0 && out->low == 0 && out->fail == 0 && out->skipped == 0 &&
                excluded.empty() && out->memory_halves_bad == 0 && out->gdr_pairs == 0;
  if (out->passed) {
    out->summary = absl::StrCat("PASS: ", out->pass, "/", out->cells, " cells pass");
    return;
  }
  std::vector<std::string> parts;
  if (out->cells == 0) parts.push_back("no cell was measured");
  if (out->low) parts.push_back(absl::StrCat(out->low, " low"));
  if (out->fail) parts.push_back(absl::StrCat(out->fail, " failed"));
  if (out->skipped) parts.push_back(absl::StrCat(out->skipped, " not run"));  // one word in every report (issue 32)
  if (out->memory_halves_bad) {
    parts.push_back(absl::StrCat(out->memory_halves_bad, " memory half(s) of later --memory kinds failed"));
  }
  if (out->gdr_pairs) parts.push_back(absl::StrCat(out->gdr_pairs, " pair(s) low or failing on the GPU path only"));
  if (!excluded.empty()) {
    std::vector<std::string> names;  // "node03: preflight FAIL (...)" -> "node03"
    for (const auto& e : excluded) names.push_back(e.substr(0, e.find(": ")));
    parts.push_back(absl::StrCat(excluded.size(), " node(s) left out (", Capped(names), ")"));
  }
  std::vector<std::string> who;
  for (const auto& b : out->blame) who.push_back(BlameLabel(b));
  out->summary = absl::StrCat("FAIL: ", out->pass, "/", out->cells, " cells pass; ",
                              absl::StrJoin(parts, ", "),
                              who.empty() ? "" : absl::StrCat("; blame: ", Capped(who)));
}

Outcome Judge(MatrixSet& set, const v1::VerdictPolicy& policy, const Baseline* baseline,
              const std::vector<std::string>& excluded) {
  Outcome out;
  std::vector<const Matrix*> judged;
  for (Matrix* m : set.VerdictMatrices()) {
    CellCounts c = JudgeMatrix(*m, set.nodes(), policy, baseline);
    out.cells += c.cells;
    out.pass += c.pass;
    out.low += c.low;
    out.fail += c.fail;
    out.skipped += c.skipped;
    judged.push_back(m);
  }
  out.blame = Blame(judged, set.nodes());
  Summarize(excluded, &out);
  return out;
}

void FillRun(MatrixSet& set, const Outcome& outcome, v1::Run* run, bool with_cells) {
  run->clear_matrices();
  for (const Matrix* m : set.matrices()) *run->add_matrices() = ToProto(*m, set.nodes(), with_cells);
  run->clear_blame();
  for (const auto& b : outcome.blame) *run->add_blame() = b;
  run->set_passed(outcome.passed);
  run->set_summary(outcome.summary);
}

}  // namespace gdrbench::controller::analysis
