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
  // Persistence: a node, nic or link blame that only read low is acted on
  // once gdrbench-server counted it in this many consecutive runs of the
  // cluster (Blame.streak); until then it makes its nodes "suspect". A hard
  // blame (an errored test) and a node left out of the sweep act at once. A
  // run whose blames carry no streak (not stored by gdrbench-server: a run
  // file from `gdrbench sweep --out`) has no history to count: it is acted
  // on alone, and the plan says so (DrainPlan::streaks_known). Where the
  // streak is known, the blame must also be confirmed by a retest
  // (Blame.confirmed: its low cells were measured again in the same run and
  // still read low); one seen once stays "suspect" whatever its streak.
  uint32_t min_streak = 2;
};

// Whether `policy` acts on blame `b` now: hard, no streak known, or
// confirmed by a retest with its streak at min_streak or more.
bool Persists(const v1::Blame& b, const DrainPolicy& policy);
// Why `policy` does not act on `b` yet: "seen once: not confirmed by a
// retest" or "seen in 1 run in a row; acted on at 2"; empty when it Persists.
std::string NotYet(const v1::Blame& b, const DrainPolicy& policy);

// "node,nic,excluded,link" (any subset) -> policy. INVALID_ARGUMENT naming
// an unknown word.
absl::StatusOr<DrainPolicy> ParseDrainKinds(absl::string_view kinds, double max_fraction);

struct Finding {
  std::string node;
  std::vector<std::string> reasons;  // "node low with most partners ...", in run order
};

// What the run says about one node, for the NHC check (deploy/slurm) and for
// `gdrbench resume`:
//   kDrain    a finding the policy acts on (reason: DrainReason)
//   kPass     tested (in a matrix or a pair, not left out) and named by no
//             blame at all, in a run with no fleet or rail blame
//   kSuspect  named by a blame the policy does not act on (a link, gdr, or
//             one not yet persistent: "seen in 1 run in a row, acted on at
//             2"), or the run blames the whole fleet or a rail (reason: that
//             blame)
//   kUntested in the run but not tested (left out, and --what has no "excluded")
enum class Verdict { kPass, kDrain, kSuspect, kUntested };
const char* VerdictName(Verdict v);  // "pass", "drain", "suspect", "untested"

struct NodeVerdict {
  std::string node;
  Verdict verdict = Verdict::kUntested;
  std::string reason;  // one line; empty for kPass
};

// What a run allows gdrbench to do. Every path that acts on a run (gdrbench
// drain, drain --check, gdrbench resume, the verdict files the NHC check
// reads, with the run from a file or from gdrbench-server) goes through
// PlanDrain, so none can skip the fraction guard.
struct DrainPlan {
  std::string run_id;
  size_t node_count = 0;
  std::vector<Finding> drain;        // the nodes to drain, in the order the run first names them
  std::vector<NodeVerdict> verdicts;  // every node of the run, by name
  // Whether the run's blames carry streaks (a run stored by gdrbench-server).
  bool streaks_known = false;
};

// INVALID_ARGUMENT: a blame whose subject names no node of the run (a run
// from another version, or edited). FAILED_PRECONDITION: the findings exceed
// policy.max_fraction of the run's nodes (the message says how many and how
// to override); then nothing may be drained, resumed or published from it.
absl::StatusOr<DrainPlan> PlanDrain(const v1::Run& run, const DrainPolicy& policy);

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
