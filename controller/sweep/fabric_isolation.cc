#include "controller/sweep/fabric_isolation.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status.h"
#include "controller/schedule/schedule.h"

namespace gdrbench::controller::sweep::internal {
namespace {

namespace topo = topology;

// The verdict matrices by lane (rail, target rail), read once after each
// judgement (MatrixSet::VerdictMatrices builds its list on every call).
using Lanes = std::map<std::pair<uint32_t, uint32_t>, const analysis::Matrix*>;

Lanes LanesOf(analysis::MatrixSet& matrices) {
  Lanes lanes;
  for (const analysis::Matrix* m : matrices.VerdictMatrices()) lanes[{m->rail, m->target_rail()}] = m;
  return lanes;
}

// A test's cell as the isolator's evidence; nothing for a cell not tested.
std::optional<topo::FlowOutcome> OutcomeOf(const Lanes& lanes, const schedule::Test& t,
                                           const topo::PlannedFlow& flow) {
  auto lane = lanes.find({t.rail, t.TargetRail()});
  if (lane == lanes.end()) return std::nullopt;
  const analysis::Matrix* m = lane->second;
  if (t.src >= m->n || t.dst >= m->n) return std::nullopt;
  const analysis::Cell& cell = m->at(t.src, t.dst);
  // A test that did not complete (an agent, a target slot, the control
  // path) measured nothing about the cables: no evidence either way.
  if (cell.status == v1::RESULT_STATUS_ERROR || cell.status == v1::RESULT_STATUS_SKIPPED) return std::nullopt;
  topo::FlowOutcome o;
  o.flow = flow;
  o.gbps = cell.gbps > 0 ? cell.gbps : 0;
  switch (cell.verdict) {
    case analysis::Verdict::kPass: o.verdict = topo::FlowVerdict::kOk; break;
    case analysis::Verdict::kLow: o.verdict = topo::FlowVerdict::kLow; break;
    case analysis::Verdict::kFail: o.verdict = topo::FlowVerdict::kFailed; break;
    case analysis::Verdict::kNone: return std::nullopt;
  }
  return o;
}

// Cells that are bad but no evidence about a cable (ERROR, not run).
size_t UnjudgedBadCells(const Lanes& lanes) {
  size_t n = 0;
  for (const auto& [lane, m] : lanes) {
    for (const analysis::Cell& c : m->cells) {
      n += c.status == v1::RESULT_STATUS_ERROR || c.status == v1::RESULT_STATUS_SKIPPED ? 1 : 0;
    }
  }
  return n;
}

}  // namespace

absl::StatusOr<topo::Isolation> IsolateSuspects(
    const FabricRun& fr, topo::Routing routing, const run::Plan& plan, analysis::MatrixSet& matrices,
    const std::function<absl::Status(const run::Plan&)>& run_round, const std::function<void()>& judge,
    size_t* unjudged) {
  GDR_ASSIGN_OR_RETURN(topo::Isolator iso,
                       topo::Isolator::Create(*fr.fabric, fr.index, routing,
                                              topo::MatchNames(fr.match, *fr.fabric, fr.index)));
  Lanes lanes = LanesOf(matrices);
  std::vector<topo::FlowOutcome> first;
  plan.schedule.ForEachTest([&](const schedule::Test& t) {
    const int s = fr.HostOf(t.src, t.rail), d = fr.HostOf(t.dst, t.TargetRail());
    if (s < 0 || d < 0) return;
    if (auto o = OutcomeOf(lanes, t, topo::PlannedFlow{s, d, {}})) first.push_back(*std::move(o));
  });
  GDR_RETURN_IF_ERROR(iso.Record(first));
  *unjudged = UnjudgedBadCells(lanes);
  const std::vector<schedule::NodeShape> shapes = run::Shapes(plan.nodes, plan.memory);
  for (std::vector<topo::PlannedFlow> round = iso.NextRound(); !round.empty(); round = iso.NextRound()) {
    std::vector<schedule::Test> tests;
    for (const topo::PlannedFlow& f : round) tests.push_back(fr.TestOf(f.src, f.dst));
    run::Plan retest = plan;
    GDR_ASSIGN_OR_RETURN(retest.schedule,
                         schedule::PackRounds(tests, shapes, plan.schedule_options.max_concurrent));
    GDR_RETURN_IF_ERROR(run_round(retest));
    judge();
    lanes = LanesOf(matrices);
    std::vector<topo::FlowOutcome> outcomes;
    for (size_t i = 0; i < round.size(); ++i) {
      std::optional<topo::FlowOutcome> o = OutcomeOf(lanes, tests[i], round[i]);
      if (!o) {  // a retest that produced no cell (it did not run): failed, as the runner reports it
        o = topo::FlowOutcome{round[i], topo::FlowVerdict::kFailed, 0};
      }
      outcomes.push_back(*std::move(o));
    }
    GDR_RETURN_IF_ERROR(iso.Record(outcomes));
  }
  return iso.Result();
}

void ApplyIsolation(const topo::Isolation& iso, size_t unjudged, analysis::Outcome* outcome,
                    v1::FabricCoverage* coverage) {
  coverage->set_isolation_rounds(static_cast<uint32_t>(iso.extra_rounds));
  for (const topo::Unresolved& u : iso.unresolved) coverage->add_unresolved(u.why);
  if (iso.findings.empty() && iso.unresolved.empty()) return;
  if (iso.unresolved.empty() && unjudged == 0) {
    auto& b = outcome->blame;
    b.erase(std::remove_if(b.begin(), b.end(),
                           [](const v1::Blame& x) {
                             return x.kind() == "link" || x.kind() == "node" || x.kind() == "nic";
                           }),
            b.end());
  }
  for (const topo::Finding& f : iso.findings) {
    v1::Blame& b = outcome->blame.emplace_back();
    b.set_kind(topo::FindingKindName(f.kind));
    b.set_subject(f.subject);
    b.set_reason(absl::StrCat(f.reason, " (isolated in ", iso.extra_rounds, " extra round",
                              iso.extra_rounds == 1 ? "" : "s", ")"));
    b.set_confirmed(iso.extra_rounds > 0);
  }
}

}  // namespace gdrbench::controller::sweep::internal
