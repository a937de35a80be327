// Running Slurm's own commands for `gdrbench drain` and `gdrbench resume`:
// argv with a PATH lookup and no shell, stdout captured where asked, and who
// the caller is to slurmctld (controller/slurm/resume.h checks the rights).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "controller/slurm/resume.h"

namespace gdrbench::controller::cli {

// Runs argv and waits; its exit code, or -1 with the reason in *why when it
// could not start or died by a signal.
int SpawnWait(const std::vector<std::string>& argv, std::string* why);

// Runs argv and returns its stdout. UNAVAILABLE naming the command (and its
// exit code, and the first line it printed on stderr) when it cannot start
// or exits non-zero; DEADLINE_EXCEEDED when it has not ended after `limit`
// (it is then killed).
absl::StatusOr<std::string> CaptureStdout(const std::vector<std::string>& argv,
                                          std::chrono::milliseconds limit = std::chrono::minutes(10));

// The caller's uid and name, the SlurmUser (`SCONTROL show config`), and
// the caller's AdminLevel (`sacctmgr -nP show user NAME format=AdminLevel`):
// a part that cannot be had (in 20 s) is left empty, with why.
slurm::SlurmIdentity WhoAmI(const std::string& scontrol, const std::string& sacctmgr);

}  // namespace gdrbench::controller::cli
