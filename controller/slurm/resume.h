// Returning nodes to service: only nodes gdrbench drained (their Slurm reason
// starts with "gdrbench:"), only when a later run tested them and they passed
// (Verdict::kPass of a plan that passed the fraction guard), as
// `scontrol update NodeName=N State=RESUME`. A node an operator or another
// tool drained is never touched. And the Slurm rights both commands need:
// slurmctld accepts node updates only from root, the SlurmUser, or a user
// with AdminLevel=Administrator in the accounting database (sacctmgr(1):
// Operator may not alter nodes). Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "controller/slurm/drain.h"

namespace gdrbench::controller::slurm {

struct NodeState {
  std::string node;
  std::string state;   // sinfo's %T, lower case: "idle", "drained", "draining", "mixed", ...
  std::string reason;  // sinfo's %E ("none" when none)
};

// `sinfo -h -N -o '%N|%T|%E'` -> one entry per node (a node listed once per
// partition is kept once). INVALID_ARGUMENT naming the line when a line does
// not have the three fields.
absl::StatusOr<std::vector<NodeState>> ParseSinfoNodes(const std::string& text);

inline constexpr char kSinfoFormat[] = "%N|%T|%E";

bool DrainedByGdrbench(const NodeState& s);

struct ResumeStep {
  std::string node;
  bool resume = false;   // false: stays drained (why says so)
  std::string why;       // "passed in run R", or why it stays drained
};

// For each node gdrbench drained that the run names: resume it when its
// verdict is kPass, else say why it stays drained. Nodes the run does not
// name are left out (nothing new is known of them).
std::vector<ResumeStep> PlanResume(const DrainPlan& plan, const std::vector<NodeState>& states);

// {scontrol, "update", "NodeName=<node>", "State=RESUME"}.
std::vector<std::string> ScontrolResumeArgv(const std::string& scontrol, const std::string& node);

// Who runs the command, as far as Slurm is concerned.
struct SlurmIdentity {
  unsigned uid = 0;
  std::string user;         // the name of uid
  std::string slurm_user;   // `scontrol show config`'s SlurmUser name; empty: unknown
  std::string admin_level;  // sacctmgr's AdminLevel ("None", "Operator", "Administrator"); empty: unknown
  std::string slurm_user_unknown_why;   // why scontrol gave none (its error), when known
  std::string admin_level_unknown_why;  // why sacctmgr gave none, when known
  // `scontrol show config`'s AccountingStorageType ("accounting_storage/none",
  // ".../slurmdbd"); empty: unknown. With none there is no user database, so
  // no AdminLevel: only root and the SlurmUser may change a node's state.
  std::string accounting_storage;
};

// `key`'s value in `scontrol show config` ("SlurmUser = slurm(64030)"):
// "slurm(64030)"; empty when the line is missing.
std::string ShowConfigValue(const std::string& show_config, const char* key);
// Its SlurmUser's name: "slurm"; empty when the line is missing.
std::string ParseSlurmUser(const std::string& show_config);
inline constexpr char kNoAccounting[] = "accounting_storage/none";

// OK for root, the SlurmUser, or AdminLevel=Administrator. Else
// PERMISSION_DENIED with what is needed: definite when the SlurmUser and the
// admin level are known, or accounting is off (no AdminLevel can exist);
// "cannot tell" (with the same remedy) when not.
absl::Status CheckAdminRights(const SlurmIdentity& id, const std::string& action);

}  // namespace gdrbench::controller::slurm
