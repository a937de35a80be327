// Outlier retest: the tests behind the low cells of a judged run, packed into
// rounds by schedule::PackRounds (no NIC and no GPU in two tests of a round,
// the plan's cap per round). A transient stall does not repeat, a bad link
// does: the retest's results replace the first ones in the matrices.
// Pure functions; thread-safe.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "controller/analysis/matrix.h"
#include "controller/run/plan.h"
#include "controller/schedule/schedule.h"
#include "controller/sweep/regressed.h"

namespace gdrbench::controller::sweep {

// One test per low verdict cell, in matrix order (rail, src, dst), then one
// per cell of `extra` (regressed cells and their partners, regressed.h),
// deduplicated. In bidirectional plans the cell (dst, src) is the reverse
// half of the scheduled test (src, dst): that test is the one re-run.
std::vector<schedule::Test> RetestTests(const analysis::MatrixSet& matrices, const run::Plan& plan,
                                        const std::vector<CellRef>& extra = {});

// RetestTests packed into rounds for `plan` (its shapes and cap). Incast
// plans: a cell's bandwidth depends on its co-senders, so a low cell re-runs
// its whole group (every test of its round into the same target and rail),
// one group per round, as the plan ran it.
absl::StatusOr<schedule::Schedule> RetestSchedule(const analysis::MatrixSet& matrices, const run::Plan& plan,
                                                  const std::vector<CellRef>& extra = {});

// Marks every low verdict cell, and each cell of `regressed`, as retested
// (Matrix::retested, MatrixCell.retested), before its test runs again: a
// blame whose low cells were all retested and still read low is "confirmed
// by a retest" (analysis::Blame); so is a regression the server finds on a
// retested cell. Partner cells are measured again but not marked: their
// first reading was fine.
void MarkRetested(analysis::MatrixSet& matrices, const std::vector<CellRef>& regressed = {});

}  // namespace gdrbench::controller::sweep
