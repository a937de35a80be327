// What a run says about nodes, turned into Slurm drains: the nodes it blames
// (blame kinds "node" and "nic", optionally both ends of a blamed "link") and
// the nodes its sweep left out (preflight FAIL, agent unreachable), each once
// with its reasons, as `scontrol update NodeName=N State=DRAIN Reason=...`.
// Node names are the run's: a sweep over $SLURM_JOB_NODELIST (deploy/slurm)
// names nodes as Slurm does. Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "gdrbench/v1/run.pb.h"

namespace gdrbench::controller::slurm {

struct DrainPolicy {
  bool node = true;      // blame kind "node": low with most partners
  bool nic = true;       // blame kind "nic": one rail of a node
  bool excluded = true;  // left out of the sweep (preflight FAIL, unreachable)
  bool link = false;     // blame kind "link": both ends (a link is not a node)
  // Refuse when more than this fraction of the run's nodes would be drained:
  // a broken run (a bad switch, a wrong flag) must not empty the partition.
  double max_fraction = 0.25;
};

// "node,nic,excluded,link" (any subset) -> policy. INVALID_ARGUMENT naming
// an unknown word.
absl::StatusOr<DrainPolicy> ParseDrainKinds(absl::string_view kinds, double max_fraction);

struct Finding {
  std::string node;
  std::vector<std::string> reasons;  // "node low with most partners ...", in run order
};

// The nodes to drain, in the order the run first names them. A blame whose
// subject names no node of the run is INVALID_ARGUMENT (a run from another
// version, or edited). Ignores policy.max_fraction (see CheckFraction).
absl::StatusOr<std::vector<Finding>> FindNodesToDrain(const v1::Run& run, const DrainPolicy& policy);

// FAILED_PRECONDITION when `findings` exceed policy.max_fraction of the
// run's nodes (the message says how many and how to override).
absl::Status CheckFraction(const v1::Run& run, const std::vector<Finding>& findings,
                           const DrainPolicy& policy);

// The run's node count: its node infos, or the names in its matrices when
// the infos are missing.
size_t RunNodeCount(const v1::Run& run);

// "gdrbench: <reasons joined by '; '> (run <id>)", at most kMaxReasonBytes,
// cut at a character boundary with "..." when longer.
inline constexpr size_t kMaxReasonBytes = 250;
std::string DrainReason(const Finding& finding, const v1::Run& run);

// argv for scontrol: {scontrol, "update", "NodeName=<node>", "State=DRAIN",
// "Reason=<reason>"} (no shell in between).
std::vector<std::string> ScontrolDrainArgv(const std::string& scontrol, const Finding& finding,
                                           const v1::Run& run);

// The argv as a shell would need it typed (for --dry-run).
std::string ShellQuote(const std::vector<std::string>& argv);

}  // namespace gdrbench::controller::slurm
