// Internal to `gdrbench sweep --dry-run`: the plan as a person reads it. A
// short summary (what will run, on what, for how long, and what was read
// from the inventory); every round's tests only when asked (`--verbose`), as
// the JSON plan always has them.
#pragma once

#include <cstdio>
#include <string>

#include "controller/run/plan.h"
#include "controller/schedule/schedule.h"
#include "controller/sweep/sweep.h"

namespace gdrbench::controller::cli {

// "4 s", "16 min 08 s", "2 h 05 min": a duration with its unit; "?" when
// negative (unknown).
std::string DurationText(double seconds);

// The summary, one line per topic:
//   plan <fingerprint>: <mode>, N nodes, R rail(s), <direction>, memory <kind>
//   rounds: R, tests: T, at most M tests per round
//   estimated duration: 4 s (<basis>)
//   inventory: <source>: ... rails ... leaves ... spine groups ...
//   tests: <kind>, sizes ..., <iterations or duration>, QPs, verify, connection
//   agents: <TLS: plaintext / TLS with the system roots / mTLS with files>
//   expect: <the fleet expectations, or none>
//   left out: <node>: <why>       (one per node left out)
//   round list: ... (or, with `verbose`, "round K: a->b [rail ...], ...")
void PrintPlanSummary(const run::Plan& plan, const sweep::SweepConfig& config,
                      const schedule::EstimateParams& est, const std::string& basis, bool verbose,
                      std::FILE* out);

}  // namespace gdrbench::controller::cli
