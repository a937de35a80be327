// Each node's verdict of a run as one small file, for the NHC check
// (deploy/slurm/gdrbench_fabric.nhc): NHC reads DIR/<node> (well under a
// kilobyte) instead of the whole run.json, which is gigabytes at 1,024 x 8.
// The format, one "key value" per line, in this order:
//   gdrbench-verdict 1
//   node <name>
//   run <run id>
//   verdict pass|drain
//   reason <one line>            (drain only: the Slurm reason gdrbench gives)
// Only "pass" and "drain" are written: a node the run did not test, or named
// by a finding the drain does not act on, keeps the file an earlier run wrote,
// so a drained node stays "drain" until a later run tests it and it passes.
// Thread-compatible (one writer per directory).
#pragma once

#include <string>

#include "absl/status/status.h"
#include "controller/slurm/drain.h"

namespace gdrbench::controller::slurm {

inline constexpr int kVerdictFormatVersion = 1;

// The file's text for one node's verdict.
std::string FormatVerdictFile(const NodeVerdict& verdict, const std::string& run_id);

// Writes DIR/<node> for each pass or drain verdict of the plan, each through
// DIR/.<node>.tmp and rename(2), so a reader sees a whole file, old or new.
// INVALID_ARGUMENT before anything is written when a node name is not a plain
// file name (empty, ".", "..", a '/', a leading '.'); the errno's status
// naming the path when DIR or a file cannot be written (DIR is created).
absl::Status WriteVerdictFiles(const DrainPlan& plan, const std::string& dir);

}  // namespace gdrbench::controller::slurm
