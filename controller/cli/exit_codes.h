// The exit codes every `gdrbench` subcommand shares, so that a scheduler or
// systemd can tell a result from a breakdown without reading the output:
//
//   0  everything it was asked to test passed (or, for drain/resume, was done)
//   1  it ran to the end and a result failed: a cell, a pair, a preflight
//      check (the report says which); drain --check: the node would be drained
//   2  bad usage: a flag, an inventory or another input file (nothing started)
//   3  refused by a guard: a run over drain's --max-fraction (nothing drained,
//      published or resumed); drain --check: unknown, never a drain
//   4  it could not run or finish: an agent, a server or Slurm that did not
//      answer, a report it could not write, an upload refused, a cancel
//      without a signal, a missing right
//   128+N  stopped by signal N (SIGINT: 130, SIGTERM: 143)
//
// gdrbench-sweep.service declares SuccessExitStatus=1: a failed cell is the
// sweep's answer (the report and the alerts carry it), anything else fires
// OnFailure= (docs/systemd.md).
#pragma once

namespace gdrbench::controller::cli {

inline constexpr int kExitPassed = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitRefused = 3;
inline constexpr int kExitError = 4;

}  // namespace gdrbench::controller::cli
