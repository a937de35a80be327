// The Kubernetes counterpart of a Slurm drain: a node a run blames gets the
// NoSchedule taint gdrbench.io/fabric=drain (new pods stay off it; running
// ones are left alone, like Slurm's DRAIN) and its reason in the annotation
// gdrbench.io/fabric-reason (a taint's value is too short for it). Resume
// removes both, only from nodes that carry gdrbench's taint. The same plan
// (PlanDrain, with its --max-fraction guard) decides; these build kubectl's
// argv and read its output. Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "controller/slurm/drain.h"
#include "controller/slurm/resume.h"

namespace gdrbench::controller::slurm {

inline constexpr char kTaintKey[] = "gdrbench.io/fabric";
inline constexpr char kReasonAnnotation[] = "gdrbench.io/fabric-reason";

// {kubectl, taint, nodes, NODE, gdrbench.io/fabric=drain:NoSchedule, --overwrite}
// then {kubectl, annotate, nodes, NODE, gdrbench.io/fabric-reason=REASON, --overwrite}.
std::vector<std::vector<std::string>> KubectlDrainArgvs(const std::string& kubectl, const Finding& finding,
                                                        const v1::Run& run);
// The taint and the annotation removed.
std::vector<std::vector<std::string>> KubectlResumeArgvs(const std::string& kubectl, const std::string& node);

// The kubectl that lists each node with gdrbench's taint effect ("" when it
// has none): NAME|EFFECT per line.
std::vector<std::string> KubectlListArgv(const std::string& kubectl);

// Its output as node states for PlanResume: a node with gdrbench's taint is
// "drained" by gdrbench (reason "gdrbench: tainted gdrbench.io/fabric"),
// others "schedulable". INVALID_ARGUMENT naming a line without the '|'.
absl::StatusOr<std::vector<NodeState>> ParseKubectlNodes(const std::string& text);

// {kubectl, auth, can-i, patch, nodes}: prints "yes" and exits 0 when the
// caller may taint and annotate nodes.
std::vector<std::string> KubectlCanIArgv(const std::string& kubectl);

}  // namespace gdrbench::controller::slurm
