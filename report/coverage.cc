#include "report/coverage.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace gdrbench::report {

std::string CoverageText(const v1::FabricCoverage& c) {
  if (c.tiers().empty()) return "";
  const bool ecmp = c.routing() == "ecmp";
  std::vector<std::string> tiers;
  for (int t = 0; t < c.tiers_size(); ++t) {
    const v1::CableTierCoverage& tier = c.tiers(t);
    if (tier.total() == 0) continue;
    if (ecmp && t > 0) {
      tiers.push_back(absl::StrFormat("%s %u by hash (each loaded with p >= %.4g)", tier.tier(), tier.total(),
                                      c.ecmp_min_probability()));
    } else {
      tiers.push_back(absl::StrCat(tier.tier(), " ", tier.measured(), "/", tier.total()));
    }
  }
  std::string out =
      absl::StrCat("cables measured (", c.routing(), ", ", c.planned_rounds(), " rounds, lower bound ",
                   c.lower_bound_rounds(), "): ", absl::StrJoin(tiers, ", "));
  if (c.gaps_total() > 0) {
    const v1::CableGap& g = c.gaps(0);
    absl::StrAppend(&out, " (", c.gaps_total(), " not: ", g.cable(), ": ", g.why(),
                    c.gaps_total() > 1 ? ", ..." : "", ")");
  }
  if (!c.counters_error().empty()) {
    absl::StrAppend(&out, "; switch counters not read (", c.counters_error(), "): no cable proven by them");
  } else if (!c.counters_source().empty()) {
    std::vector<std::string> confirmed;
    for (const v1::CableTierCoverage& t : c.tiers()) {
      if (t.measured() > 0)
        confirmed.push_back(absl::StrCat(t.tier(), " ", t.counters_confirmed(), "/", t.measured()));
    }
    absl::StrAppend(&out, "; switch counters confirm ", absl::StrJoin(confirmed, ", "));
    if (!c.counter_findings().empty()) {
      const v1::CableCounterFinding& f = c.counter_findings(0);
      absl::StrAppend(&out, "; ", c.counter_findings_size(), " counter finding(s): ", f.cable(), ": ",
                      f.kind(), " (", f.detail(), ")", c.counter_findings_size() > 1 ? ", ..." : "");
    }
  }
  return out;
}

std::vector<std::string> CoverageGapLines(const v1::FabricCoverage& c, size_t limit) {
  std::vector<std::string> lines;
  for (const v1::CableGap& g : c.gaps()) {
    if (lines.size() == limit) break;
    lines.push_back(absl::StrCat(g.cable(), ": ", g.why()));
  }
  if (c.gaps_total() > lines.size())
    lines.push_back(absl::StrCat("... and ", c.gaps_total() - lines.size(), " more"));
  return lines;
}

std::vector<std::string> CounterFindingLines(const v1::FabricCoverage& c, size_t limit) {
  std::vector<std::string> lines;
  for (const v1::CableCounterFinding& f : c.counter_findings()) {
    if (lines.size() == limit) {
      lines.push_back(absl::StrCat("... and ", c.counter_findings_size() - limit, " more"));
      break;
    }
    lines.push_back(absl::StrCat(f.cable(), ": ", f.kind(), ": ", f.detail()));
  }
  return lines;
}

}  // namespace gdrbench::report
