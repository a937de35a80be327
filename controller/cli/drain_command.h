// `gdrbench drain` and `gdrbench resume`: what a run says about nodes, acted
// on in Slurm with scontrol, or on Kubernetes with kubectl (--on kubernetes:
// a NoSchedule taint and an annotation with the reason). Both read the run through slurm::PlanDrain, so
// the fraction guard applies to every path: a run that would drain more than
// --max-fraction of its nodes drains, resumes and writes nothing.
#pragma once

#include <string>

#include "controller/cli/exit_codes.h"
#include "controller/server_client/server_client.h"

namespace gdrbench::controller::cli {

struct DrainOptions {
  std::string run_file;                 // a run.json (gdrbench sweep --out DIR), or
  ServerClientConfig server;            // gdrbench-server (address set) and
  std::string run_id = "latest";        // a run on it ("latest": the newest of --cluster)
  std::string cluster;                  // for "latest": empty = any cluster
  std::string what = "node,nic,excluded";
  double max_fraction = 0.25;
  uint32_t min_streak = 2;              // slurm::DrainPolicy::min_streak
  bool dry_run = false;                 // print the scontrol commands only
  std::string check_node;               // --check NODE: exit 1 with the reason if NODE would be drained
  std::string verdicts_dir;             // --verdicts DIR: each node's verdict file for the NHC check
  std::string scontrol = "scontrol";
  std::string sinfo = "sinfo";          // resume: the node states
  std::string sacctmgr = "sacctmgr";    // the caller's AdminLevel
  std::string on = "slurm";             // or "kubernetes": a NoSchedule taint (controller/slurm/taint.h)
  std::string kubectl = "kubectl";
};

// Exit codes of `gdrbench drain` and `gdrbench resume`:
// (controller/cli/exit_codes.h, shared by every subcommand)
inline constexpr int kDrainOk = kExitPassed;      // done (or nothing to do)
inline constexpr int kDrainFailed = kExitError;   // a scontrol/kubectl call failed, the rights are missing, or the run could not be read
inline constexpr int kDrainUsage = kExitUsage;    // bad usage
inline constexpr int kDrainRefused = kExitRefused;  // the run is over --max-fraction: nothing done
// `drain --check NODE`: 0 NODE keeps its state, 1 NODE would be drained (the
// reason on stdout), 2 bad usage, 3 unknown (the run cannot be read or is
// refused; the reason on stderr): never a drain.
inline constexpr int kCheckDrain = kExitFailed;
inline constexpr int kCheckUnknown = kExitRefused;

int DrainCommand(const DrainOptions& options);
int ResumeCommand(const DrainOptions& options);

}  // namespace gdrbench::controller::cli
