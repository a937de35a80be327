// --mode cover | shift: after the first pass (and its outlier retests), the
// low and failed flows' suspects isolated by group testing
// (controller/topology/isolate.h), each retest round run for real, and the
// bad cable, NIC or node named in the run's blame.
//
// The first pass's flows are the plan's tests with their cells' verdicts
// (verdict matrices: pass -> ok, low -> low, fail -> failed; a cell not
// tested is no evidence). Each retest round's flows run as one retest plan
// (split where two rails of a node share a GPU), then every cell is judged
// again and the round's verdicts recorded.
//
// A cell that errored or did not run (an agent, a target slot, the control
// path) is no evidence about a cable: it is not given to the isolator.
//
// Blame: the isolation's findings are added. The cell-level link, node and
// NIC blames are replaced by them when the isolation explained every bad
// flow (nothing unresolved) and no bad cell was left unjudged: a low flow
// across a bad cable then blames the cable, never the healthy nodes at its
// ends. Otherwise they stay, and the run lists what could not be separated.
//
// Internal to the sweep library (sweep.cc). Not thread-safe.
#pragma once

#include <functional>

#include "absl/status/statusor.h"
#include "controller/analysis/matrix.h"
#include "controller/analysis/verdicts.h"
#include "controller/run/plan.h"
#include "controller/sweep/fabric_plan.h"
#include "controller/topology/isolate.h"

namespace gdrbench::controller::sweep::internal {

// `run_round` runs one retest plan (its results reach `matrices`); `judge`
// judges every cell again. `*unjudged`: the bad cells the isolator was not
// given (errored, not run).
absl::StatusOr<topology::Isolation> IsolateSuspects(
    const FabricRun& fabric, topology::Routing routing, const run::Plan& plan, analysis::MatrixSet& matrices,
    const std::function<absl::Status(const run::Plan&)>& run_round, const std::function<void()>& judge,
    size_t* unjudged);

// The findings into `outcome->blame` (replacing link, node and NIC blames
// when nothing is unresolved or unjudged) and the rounds and what is unresolved into
// `coverage`.
void ApplyIsolation(const topology::Isolation& isolation, size_t unjudged, analysis::Outcome* outcome,
                    v1::FabricCoverage* coverage);

}  // namespace gdrbench::controller::sweep::internal
